"""A YAML suite reads each model file once at collection (``plugin.yaml_model``): the checks of
an entry with input files, an ``input_shape``, op names and a ``dataset.output`` each read the
model's graph again (PP-OCRv4 det: three reads of a 4.7 MB file per entry), and every entry of
the same model read it again. The errors of those checks are unchanged (their own tests)."""
import json

import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.plugin.yaml_suite import load_suite
from pytest_ascend_accuracy.testing import models as tiny_models

SUITE = """models:
  - name: first
    model: models/mlp.onnx
    inputs: {x: x.npy}
    input_shape: {x: [1, 16]}
    modes: [default, {keep_dtype: [%(op)s]}]
    per_op: {%(op)s: 0.9}
    ignore: [%(other)s]
    dataset: {samples: samples, labels: labels.json, metric: top1, output: %(output)s}
  - name: second
    model: models/mlp.onnx
    inputs: {seed: 1, shapes: {x: [1, 16]}}
    per_op: {%(op)s: 0.9}
"""


@pytest.fixture
def reads(monkeypatch):
    """The onnx.load calls made from now on (the op catalogue's per-process cache emptied)."""
    from pytest_ascend_accuracy.graph import op_catalogue

    monkeypatch.setattr(op_catalogue, "_CACHE", {})
    calls = []
    real = onnx.load

    def counted(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(onnx, "load", counted)
    return calls


def test_every_check_of_every_entry_reads_the_model_once(tmp_path, reads):
    model = tiny_models.passing_mlp()
    (tmp_path / "models").mkdir()
    onnx.save(model, str(tmp_path / "models" / "mlp.onnx"))
    np.save(tmp_path / "x.npy", np.zeros((1, 16), np.float32))
    (tmp_path / "samples").mkdir()
    np.savez(tmp_path / "samples" / "0.npz", x=np.zeros((1, 16), np.float32))
    (tmp_path / "labels.json").write_text(json.dumps({"0": 0}))
    ops = [n.name for n in model.graph.node]
    path = tmp_path / "accuracy_suite.yaml"
    path.write_text(SUITE % {"op": ops[0], "other": ops[-1],
                             "output": model.graph.output[0].name})
    cases = load_suite(path)
    assert [c.test_name for c in cases] == [
        "first[default]", "first-dataset[default]", f"first[keep_dtype({ops[0]})]",
        f"first-dataset[keep_dtype({ops[0]})]", "second[default]"]
    assert len(reads) == 1, reads

"""``ascend-accuracy compare`` of a dump and a golden cache entry, without the om json, counts
the model's ``Constant`` ops as folded at conversion, as the plugin does (audit 33: a paddle2onnx
export's 878 unnamed Constants read "878 unmatched (Constant_0, Constant_1, ...)" in the CLI and
"878 folded at conversion" in pytest, on the same dump and golden). The cache entry's golden.json
lists them (``constant_nodes``); an older entry without the list counts them as before."""
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.cli import app as cli

pytest.importorskip("onnxruntime")


def _model():
    """x * c0 + c1 with both constants unnamed ``Constant`` nodes, as paddle2onnx writes them."""
    nodes = [helper.make_node("Constant", [], ["c0"], value=numpy_helper.from_array(
                 np.full((1, 4), 0.5, np.float32))),
             helper.make_node("Constant", [], ["c1"], value=numpy_helper.from_array(
                 np.ones((1, 4), np.float32))),
             helper.make_node("Mul", ["x", "c0"], ["m"], name="scale"),
             helper.make_node("Add", ["m", "c1"], ["y"], name="shift")]
    graph = helper.make_graph(nodes, "consts", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture
def dump_and_entry(tmp_path):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    model = tmp_path / "consts.onnx"
    onnx.save(_model(), str(model))
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache)
    inputs = make_inputs(model, seed=0)
    dump = backend.run(backend.convert(model, None), inputs, dump_dir=tmp_path / "dump")
    golden = golden_dump(model, inputs, cache=cache)
    return str(dump.root), golden.meta["cache_entry"]


def _coverage(capsys, dump, entry) -> str:
    assert cli.main(["compare", dump, entry]) == 0
    return next(line for line in capsys.readouterr().out.splitlines()
                if line.startswith("coverage: "))


def test_the_constants_are_folded_at_conversion_as_the_plugin_says(dump_and_entry, capsys):
    dump, entry = dump_and_entry
    assert json.loads((Path(entry) / "golden.json").read_text())["constant_nodes"] == [
        "Constant_0", "Constant_1"]
    line = _coverage(capsys, dump, entry)
    assert "2 folded at conversion, 0 unmatched" in line, line
    assert _coverage(capsys, dump, str(Path(entry) / "npy")) == line  # the npy folder too


def test_an_entry_without_the_list_counts_them_as_before(dump_and_entry, capsys):
    dump, entry = dump_and_entry
    record = json.loads((Path(entry) / "golden.json").read_text())
    del record["constant_nodes"]
    (Path(entry) / "golden.json").write_text(json.dumps(record))
    assert "2 unmatched (Constant_0, Constant_1)" in _coverage(capsys, dump, entry)


def test_the_placeholder_note_names_the_model_the_entry_records(dump_and_entry, capsys):
    """Audit 33: the command said MODEL.onnx though the entry's golden.json names the model."""
    dump, entry = dump_and_entry
    assert cli.main(["compare", dump, entry, "--threshold", "0.9999999999"]) == 1
    step = next(line for line in capsys.readouterr().out.splitlines()
                if line.startswith("next step: "))
    assert ("; MODEL.onnx stands for the ONNX model the dump ran (consts, as the golden names "
            "it), which diagnose runs on seeded random inputs") in step

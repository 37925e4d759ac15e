"""``report.hints.PROBLEM_ADVICE``, the next step of a comparison where no tensor was compared,
applied in each spelling it gives (audit H325: printed, never applied by a test): a device dump
converted to .npy by msaccucmp (its files name the fused op only, ``fc_MatMulrelu``) against
the golden of the ONNX ops it fused. ``load_dump(DIR, om_json="model.json")`` (DIR filled in,
the om json under the name printed), ``--om-json`` on the command line, ``mapping=`` and
``--mapping``: each compares the op, and the check passes."""
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import pytest_ascend_accuracy as api
from pytest_ascend_accuracy.cli import main
from pytest_ascend_accuracy.report.hints import PROBLEM, next_step

pytest.importorskip("onnxruntime")


def _fused_model(path: Path) -> Path:
    """MatMul -> Add -> Relu, which the conversion fuses into one op ``fc/MatMulrelu``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    r = np.random.default_rng(0)
    inits = [numpy_helper.from_array(r.standard_normal((16, 8)).astype(np.float32), "w"),
             numpy_helper.from_array(r.standard_normal(8).astype(np.float32), "b")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="fc/MatMul"),
             helper.make_node("Add", ["m", "b"], ["a"], name="fc/Add"),
             helper.make_node("Relu", ["a"], ["y"], name="relu")]
    graph = helper.make_graph(
        nodes, "fused", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


@pytest.fixture
def unpaired(tmp_path, monkeypatch):
    """(the converted .npy dump folder, the stored golden), cwd holding the om json as
    ``model.json``."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.golden.stored import store_golden
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    monkeypatch.chdir(tmp_path)
    model = _fused_model(tmp_path / "fused.onnx")
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache)
    converted = backend.convert(model)
    dump = backend.run(converted, make_inputs(model), dump_dir=tmp_path / "dump")
    shutil.copy(converted.om_json, tmp_path / "model.json")
    folder = tmp_path / "npy"  # as `msaccucmp convert -f ND` writes it: no header, no origin
    folder.mkdir()
    for op in dump.ops:
        array = np.asarray(op.outputs[0].load())
        shape = "x".join(map(str, array.shape))
        np.save(folder / f"{Path(op.outputs[0].source).name}.output.0.{shape}.npy", array)
    store_golden(tmp_path / "golden", golden_dump(model, make_inputs(model), cache=cache))
    return "npy", "golden"


def _advice(actual, golden) -> str:
    verdict = api.compare_dumps(actual, golden).judge(0.99)
    assert verdict.problem.startswith("no tensor was compared"), verdict.problem
    hint = next_step(verdict)
    assert hint.kind == PROBLEM
    return hint.advice


def test_the_load_dump_call_pasted_reads_the_fused_ops_names(unpaired):
    actual, golden = unpaired
    advice = _advice(api.load_dump(actual), golden)
    call = re.search(r"read the device dump with (load_dump\(DIR, .*?\)) ", advice).group(1)
    dump = eval(call.replace("DIR", repr(actual)), {"load_dump": api.load_dump})
    assert api.compare_dumps(dump, golden).judge(0.99).passed


def test_the_om_json_option_pasted_compares(unpaired, capsys):
    actual, golden = unpaired
    advice = _advice(api.load_dump(actual), golden)
    option = re.search(r"\((--\S+) on the command line\)", advice).group(1)
    file = re.search(r'om_json="([^"]+)"', advice).group(1)
    assert main(["compare", actual, golden]) == 1
    assert main(["compare", actual, golden, option, file]) == 0
    assert "accuracy PASSED" in capsys.readouterr().out


def test_the_mapping_pasted_both_ways_compares(unpaired, capsys):
    actual, golden = unpaired
    advice = _advice(api.load_dump(actual), golden)
    keyword, option = re.search(r"map op names with (\w+)= \((--\S+)\)", advice).groups()
    pairs = {"fc_MatMulrelu": "relu"}  # the dump's op, the golden op whose output it is
    result = api.compare_dumps(api.load_dump(actual), golden, **{keyword: pairs})
    assert result.judge(0.99).passed
    Path("pairs.json").write_text(json.dumps(pairs))
    assert main(["compare", actual, golden, option, "pairs.json"]) == 0
    assert "accuracy PASSED" in capsys.readouterr().out

"""The real Ascend backend counts the golden ops ATC folded at conversion "folded at
conversion", as the emulator's run has them counted, not "unmatched golden op"; an ``ignore``
entry naming one is refused for that reason, and the refusal's advice (remove it), pasted,
passes. Against FAKES only (the fake atc on PATH, the fake pyACL): no NPU ran.

ATC computes at conversion what depends on no input value and keeps it as a ``Const``; real
ATC 6.0's tdnn om json holds ``dynamic_const_67614_276`` (an empty original-names list, its
output's origin ``Cast_311``) where the model's Cast of a constant was (docs/formats.md section
4). The fake ATC did not fold: it ran and dumped every node, so its runs compared ops a device
never runs. Folding as ATC does, the ascend backend set no ``meta["folded_ops"]``, and the
plugin said "3 unmatched (Constant_0, Cast_1, Identity_2)" and refused ``ignore=["Cast_1"]``
with "no op of the device run matches them".
"""
import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend

FOLDED = ("coverage: 6 golden ops: 3 compared, 0 inside fused ops, 3 folded at conversion, "
          "0 unmatched; 0 actual ops unmatched")
REFUSAL = ("ignore entry 'Cast_1' names only ops never compared here (Cast_1): folded at "
           "conversion: the converter computed them, the device never runs or dumps them; it "
           "would judge nothing, so remove it")


def _model():
    """x @ Identity(W) * Cast(Constant) -> Relu: the Constant, the Cast of it and the Identity
    of a weight (TorchScript's export of a shared weight) depend on no input value."""
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((8, 8)).astype(
        np.float32) / 3, "W")
    two = numpy_helper.from_array(np.full((8,), 2, np.int64), "two")
    nodes = [helper.make_node("Constant", [], ["c"], name="Constant_0", value=two),
             helper.make_node("Cast", ["c"], ["c_f"], name="Cast_1", to=TensorProto.FLOAT),
             helper.make_node("Identity", ["W"], ["W_shared"], name="Identity_2"),
             helper.make_node("MatMul", ["x", "W_shared"], ["m"], name="MatMul_3"),
             helper.make_node("Mul", ["m", "c_f"], ["a"], name="Mul_4"),
             helper.make_node("Relu", ["a"], ["y"], name="Relu_5")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [2, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])],
                              [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.fixture
def model_path(tmp_path):
    path = tmp_path / "folds.onnx"
    onnx.save(_model(), str(path))
    return path


def test_a_run_lists_the_ops_its_conversion_folded(model_path, tmp_path, monkeypatch):
    from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.report.failure_text import coverage_line

    use_fake_ascend(monkeypatch, tmp_path)
    x = {"x": np.random.default_rng(1).standard_normal((2, 8)).astype(np.float32)}
    cache = Cache(tmp_path / "cache")
    with AscendBackend(cache, progress=None) as backend:
        converted = backend.convert(model_path)
        dump = backend.run(converted, x)
    # the om json as real ATC writes one: the folded values are Consts, named after no op,
    # the one of a computed op naming it as its output's origin; the folded ops do not run
    ops = json.loads(converted.om_json.read_text())["graph"][0]["op"]
    assert [(op["name"], op["type"]) for op in ops] == [
        ("x", "Data"), ("dynamic_const_10000_0", "Const"), ("dynamic_const_10000_1", "Const"),
        ("MatMul_3", "MatMul"), ("Mul_4", "Mul"), ("Relu_5", "Relu")]
    for op, origin in zip(ops[1:3], ("Identity_2", "Cast_1")):
        assert op["attr"] == [{"key": "_datadump_original_op_names",
                               "value": {"list": {"val_type": "VT_LIST_STRING"}}}]
        assert op["output_desc"][0]["attr"] == [
            {"key": "_datadump_origin_name", "value": {"s": origin}},
            {"key": "_datadump_origin_output_index", "value": {"i": 0}}]
    assert sorted(op.name for op in dump.ops) == ["MatMul_3", "Mul_4", "Relu_5"]
    # the Consts' origins, and the Constant node (a Const of GE's local op store: no task)
    assert dump.meta["folded_ops"] == ["Identity_2", "Cast_1", "Constant_0"]
    result = compare_dumps(dump, golden_dump(model_path, x, cache=cache))
    assert coverage_line(result) == FOLDED  # was "3 unmatched (Constant_0, Cast_1, Identity_2)"
    assert result.coverage.judges_nothing("ignore entry", "Cast_1") == REFUSAL


CHECK = '''
from pytest_ascend_accuracy import accuracy


@accuracy({marker})
def test_folds(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(r"{model}")
    check_accuracy(ascend_model(r"{model}").run(inputs), golden_dump(r"{model}", inputs))
'''


def test_the_plugin_refuses_an_ignore_of_a_folded_op_as_folded(pytester, model_path,
                                                               tmp_path, monkeypatch):
    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    use_fake_ascend(monkeypatch, tmp_path, device_count=1)
    args = ["-q", "-p", "no:cacheprovider", "--ascend-device=0"]
    pytester.makepyfile(test_folds=CHECK.format(marker='ignore=["Cast_1"]', model=model_path))
    refused = pytester.runpytest(*args)
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines([f"ascend-accuracy configuration error: "
                                  f"test_folds.py::test_folds: {REFUSAL}"])
    # the advice pasted: the marker without the entry
    pytester.makepyfile(test_folds=CHECK.format(marker="", model=model_path))
    pytester.runpytest(*args).assert_outcomes(passed=1)

"""A test checking one model at several input shapes names the failing check's shape.

A trial's test looped over the gears of a dynamic-size detector (``check_accuracy`` per shape)
and failed at the 64x64 gear: the FAILED line, the failure's block and the JUnit properties
named no shape, and the grid's "1/2 passed" hid that a third gear never ran. A test of one
shape prints as before.
"""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.plugin.junit_verdict import one_verdict
from pytest_ascend_accuracy.report.checked_shapes import (input_shape_text, several_shapes,
                                                          shape_context)

from junit_report_props import junit_properties


def _det_model():
    """``img [1,3,H,W]``: a ReduceSum over H, W that leaves the float16 range at 64x64 only."""
    nodes = [
        helper.make_node("Conv", ["img", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("ReduceSum", ["c", "ax"], ["s"], name="sum", keepdims=1),
        helper.make_node("Mul", ["s", "sc"], ["m"], name="scale"),
        helper.make_node("Mul", ["c", "m"], ["out"], name="gate"),
    ]
    inits = [numpy_helper.from_array(np.full((2, 3, 3, 3), 10.0, np.float32), "W"),
             numpy_helper.from_array(np.array([2, 3], np.int64), "ax"),
             numpy_helper.from_array(np.array(1e-3, np.float32), "sc")]
    graph = helper.make_graph(
        nodes, "det", [helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 3, "H", "W"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 2, "H", "W"])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


TESTS = '''
from pytest_ascend_accuracy import accuracy

DET = "models/det.onnx"


@accuracy(threshold=0.95)
def test_each_gear(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    om = ascend_model(DET)
    for hw in ((8, 8), (64, 64), (16, 16)):
        inputs = accuracy_inputs(DET, seed=0, input_shape={"img": [1, 3, *hw]})
        check_accuracy(om.run(inputs), golden_dump(DET, inputs))


@accuracy(threshold=0.95)
def test_one_gear(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(DET, seed=0, input_shape={"img": [1, 3, 64, 64]})
    check_accuracy(ascend_model(DET).run(inputs), golden_dump(DET, inputs))
'''


@pytest.fixture
def gears(pytester):
    onnx.save(_det_model(), str(pytester.mkdir("models") / "det.onnx"))
    pytester.makepyfile(test_gears=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml", "-rf")
    result.assert_outcomes(failed=2)
    return result, junit_properties(pytester.path / "junit.xml")


def test_failed_line_names_the_failing_gear(gears):
    result, _ = gears
    result.stdout.fnmatch_lines([
        "FAILED test_gears.py::test_each_gear [[]det, default[]]: input img:1,3,64,64 (check 2 "
        "of the 2 of det this test ran, the last; before it img:1,3,8,8 passed): first failing "
        "op sum (NaN/Inf on one side at 2 positions)",
    ])


def test_failure_block_names_the_failing_gear(gears):
    result, _ = gears
    result.stdout.fnmatch_lines([
        "accuracy FAILED at input img:1,3,64,64: 3 of 4 tensors fail cosine >= 0.95; *",
        "input img:1,3,64,64 (check 2 of the 2 of det this test ran, the last; before it "
        "img:1,3,8,8 passed)",
    ])


def test_junit_names_each_checks_shape(gears):
    _, props = gears
    each = dict(props["test_each_gear"])
    assert each["accuracy_input_shape"] == "img:1,3,64,64"  # the failing check's
    assert each["accuracy_checks"] == "2"
    assert each["accuracy_check1_input_shape"] == "img:1,3,8,8"
    assert each["accuracy_check2_input_shape"] == "img:1,3,64,64"


def test_a_one_shape_test_prints_as_before(gears):
    result, props = gears
    result.stdout.fnmatch_lines([
        "FAILED test_gears.py::test_one_gear [[]det, default[]]: first failing op sum (NaN/Inf "
        "on one side at 2 positions)",
    ])
    assert "accuracy FAILED: 3 of 4 tensors" in result.stdout.str()
    assert not any(n.endswith("input_shape") for n, _ in props["test_one_gear"])


def test_input_shape_text_in_model_order():
    assert input_shape_text({}, {"graph": {"input_shapes": {"b": [2], "a": [1, 3]}}}) == \
        "b:2;a:1,3"
    assert input_shape_text({"graph": {}}, {}) is None


def test_several_shapes_per_model():
    assert not several_shapes([("mlp", "x:1,8"), ("ovf", "x:2,4")])  # two models: names say it
    assert several_shapes([("det", "img:1,3,8,8"), ("det", "img:1,3,64,64")])
    assert not several_shapes([("det", "img:1,3,8,8"), ("det", "img:1,3,8,8"), ("det", None)])


def test_shape_context_before_and_after():
    shapes = ["x:1", "x:2", "x:3", "x:4"]
    assert shape_context(1, shapes, [True, False, True, False], "m") == (
        "input x:2 (check 2 of the 4 of m this test ran; before it x:1 passed; after it x:3 "
        "passed; after it x:4 failed)")


def test_one_verdict_drops_a_shape_every_check_shares():
    same = [("accuracy_model", "det"), ("accuracy_passed", "true"),
            ("accuracy_input_shape", "img:1,3,8,8"),
            ("accuracy_model", "det"), ("accuracy_passed", "false"),
            ("accuracy_input_shape", "img:1,3,8,8")]
    assert not any("input_shape" in n for n, _ in one_verdict(same, "boom", True))
    differ = [(n, "img:1,3,64,64" if k == 5 else v) for k, (n, v) in enumerate(same)]
    out = dict(one_verdict(differ, "boom", True))
    assert out["accuracy_input_shape"] == "img:1,3,64,64"
    assert out["accuracy_check1_input_shape"] == "img:1,3,8,8"


def test_two_model_files_of_one_name_are_not_one_model_at_two_shapes(pytester):
    # a review: v1/det.onnx at 8x8 then v2/det.onnx at 64x64 read "check 2 of the 2 of det
    # this test ran ...; before it img:1,3,8,8 passed": two files, not two shapes of one
    for version in ("v1", "v2"):
        (pytester.path / version).mkdir()
        onnx.save(_det_model(), str(pytester.path / version / "det.onnx"))
    pytester.makepyfile(test_two='''
from pytest_ascend_accuracy import accuracy

@accuracy(threshold=0.95)
def test_v1_vs_v2(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    for model, hw in (("v1/det.onnx", (8, 8)), ("v2/det.onnx", (64, 64))):
        inputs = accuracy_inputs(model, seed=0, input_shape={"img": [1, 3, *hw]})
        check_accuracy(ascend_model(model).run(inputs), golden_dump(model, inputs))
''')
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-rf")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED test_two.py::test_v1_vs_v2 [[]v2/det, default[]]: "
                                 "first failing op sum *"])
    assert "check 2 of the 2" not in result.stdout.str()

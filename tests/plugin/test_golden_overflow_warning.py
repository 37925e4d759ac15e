"""A golden that overflows float16 itself is said, not passed in silence (a trial): a
mixed-precision export (x * 20000, Cast to float16, MatMul) overflows in onnxruntime exactly where
the device does; the equal infinities compared as equal and the test passed with nothing in the
terminal, only ``OverFlow YES`` in the CSV of --accuracy-report. The warning names those ops; the
check then fails further on, at the Softmax: the device's reads the MatMul's infinity (NaN), while
onnxruntime's CPU, computing the float16 ops in float32, hands it the value before it overflowed
(that pass was a false pass the emulator now shows: backends/emulator/float16_model.py)."""
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.assertion import assert_accuracy
from pytest_ascend_accuracy.report.golden_overflow import GoldenOverflowWarning

TEST = """
from pytest_ascend_accuracy import accuracy

M = "models/mixed_ovf.onnx"


@accuracy(threshold=0.99)
def test_mixed_ovf(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
"""


def _mixed_overflow():
    rng = np.random.default_rng(0)
    w = (np.abs(rng.standard_normal((32, 16))) * 0.3).astype(np.float16)
    nodes = [helper.make_node("Mul", ["x", "k"], ["xs"], name="prescale"),
             helper.make_node("Cast", ["xs"], ["x16"], name="cast_in", to=TensorProto.FLOAT16),
             helper.make_node("MatMul", ["x16", "w"], ["mm"], name="mm"),
             helper.make_node("Softmax", ["mm"], ["sm"], name="softmax", axis=-1),
             helper.make_node("Cast", ["sm"], ["y"], name="cast_out", to=TensorProto.FLOAT)]
    graph = helper.make_graph(
        nodes, "mixed_ovf", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        [numpy_helper.from_array(np.array(20000, np.float32), "k"),
         numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


@pytest.fixture
def project(pytester):
    (pytester.path / "models").mkdir()
    onnx.save(_mixed_overflow(), str(pytester.path / "models" / "mixed_ovf.onnx"))
    pytester.makepyfile(test_ovf=TEST)
    return pytester


def test_the_models_own_float16_overflow_is_warned_at_the_tests_line(project):
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, warnings=1)
    result.stdout.fnmatch_lines([
        "*test_ovf.py:9: GoldenOverflowWarning: the golden itself holds infinities where the "
        "device does, compared as equal: mm (55 of 64 positions +Inf, float16). The ONNX model "
        "computes in float16 there*"])


def test_the_filter_the_warning_prints_silences_it(project):
    """Its own advice, pasted: -W 'ignore:the golden itself holds infinities'."""
    result = project.runpytest("-p", "no:cacheprovider", "-W",
                               "ignore:the golden itself holds infinities")
    result.assert_outcomes(failed=1)
    assert "GoldenOverflowWarning" not in result.stdout.str()


def _pair(dtype, golden_values):
    golden = np.array(golden_values, dtype)
    return DumpSet.from_arrays({"op": [golden.copy()]}), DumpSet.from_arrays({"op": [golden]})


@pytest.mark.parametrize("dtype, values, warned", [
    ("float16", [1.0, np.inf, 2.0, np.inf], True),  # the model's own float16 overflow
    ("float32", [1.0, -np.inf, 2.0, -np.inf], False),  # a float32 mask's -inf: exact
    # a float16 attention mask's -inf (a review: a correct fp16 export warned at every check)
    ("float16", [1.0, -np.inf, 2.0, -np.inf], False),
    ("float16", [1.0, 2.0, 3.0, 4.0], False),
])
def test_only_a_float16_goldens_infinities_are_warned_about(dtype, values, warned):
    actual, golden = _pair(dtype, values)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert_accuracy(actual, golden, 0.99)
    got = [w for w in caught if issubclass(w.category, GoldenOverflowWarning)]
    assert bool(got) == warned
    if warned:
        assert "op (2 of 4 positions +Inf, float16)" in str(got[0].message)

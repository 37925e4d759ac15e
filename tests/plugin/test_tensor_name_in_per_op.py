"""A tensor's name as Netron shows it (``/model.22/Concat_output_0``) in an @accuracy test's
per_op or ignore: keep_dtype's check named the op that makes it, but these, checked against the
compared dumps without the model's tensors, said "is not an op" and offered string-closest ops
(``/model.22/Concat_6``, another op) on nudenet 320n (H110). They name the op, and the op
pasted is taken."""
import pytest

TEST = """
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

@accuracy(threshold=0.99, {setting})
def test_mlp(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/passing_mlp.onnx")
    actual = ascend_model("models/passing_mlp.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/passing_mlp.onnx", inputs))
"""


@pytest.mark.parametrize("setting, what, pasted", [
    ("per_op={'fc2/MatMul_output_0': 0.5}", "per_op entry", "per_op={'fc2/MatMul': 0.5}"),
    ("ignore=['fc2/MatMul_output_0']", "ignore entry", "ignore=['fc2/MatMul']")])
def test_a_tensor_name_names_the_op_that_makes_it(pytester, models_dir, setting, what, pasted):
    pytester.makepyfile(test_t=TEST.format(setting=setting))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines([f"*{what} 'fc2/MatMul_output_0' is a tensor of model "
                                 "'passing_mlp', output 0 of op 'fc2/MatMul': name the op, "
                                 "'fc2/MatMul'"])
    pytester.makepyfile(test_t=TEST.format(setting=pasted))
    out = pytester.runpytest("-p", "no:cacheprovider")
    assert "configuration error" not in out.stdout.str()
    out.assert_outcomes(passed=1)

"""A check of a model whose ``If`` reads the shape of an ``If`` decided by the input values
passes on a perfect conversion (H110: silero_vad_half and silero_vad_16k_op15 failed "3 ops not
compared", and --accuracy-diagnose then blamed the operators)."""
import onnx

from pytest_ascend_accuracy.testing.models import nested_if_model

TEST = '''
import numpy as np
import pytest
from pytest_ascend_accuracy import accuracy


@pytest.mark.parametrize("x", [[[1, 2, 3, 4]], [[-1, 2, -3, -4]]], ids=["rank2", "rank1"])
@accuracy(threshold=0.99)
def test_nested(ascend_model, golden_dump, check_accuracy, x):
    inputs = {"x": np.float32(x)}
    golden = golden_dump("nested_if.onnx", inputs)
    check_accuracy(ascend_model("nested_if.onnx").run(inputs), golden)
'''


def test_an_if_reading_the_shape_of_an_if_kept_for_its_inputs_is_compared(pytester):
    onnx.save(nested_if_model(), str(pytester.path / "nested_if.onnx"))
    pytester.makepyfile(test_nested=TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert "not compared" not in result.stdout.str()

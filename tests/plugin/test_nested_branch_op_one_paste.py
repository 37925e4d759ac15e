"""A per_op or ignore entry naming an op inside an If nested in an If's branch, both decided by
the input values (silero_vad's LSTM in If '.../decoder/If_1' in If 'If_0'): the refusal named
the immediate owner, which pasted was refused again naming the outer If (H110). It names the
op a run executes and a comparison judges, the outermost If that stays an operator, so one
paste is taken."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "graph"))
from test_nested_branch_owner import nested_model  # noqa: E402

TEST = """
import numpy as np
from pytest_ascend_accuracy import accuracy

@accuracy(threshold=0.5, {setting})
def test_nested(ascend_model, golden_dump, check_accuracy):
    inputs = {{"x": np.linspace(0.1, 0.99, 8, dtype=np.float32).reshape(1, 8)}}
    check_accuracy(ascend_model("nested.onnx").run(inputs), golden_dump("nested.onnx", inputs))
"""


@pytest.mark.parametrize("setting, what, pasted", [
    ("per_op={'deep': 0.4}", "per_op entry 'deep'", "per_op={'outer': 0.4}"),
    ("ignore=['deep']", "ignore entry 'deep'", "ignore=['outer']")])
def test_an_op_in_a_nested_branch_is_named_by_the_op_compared(pytester, setting, what, pasted):
    nested_model(pytester.path / "nested.onnx")
    pytester.makepyfile(test_nested=TEST.format(setting=setting))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines([f"*{what} names an op inside the then_branch of If 'inner', "
                                 "within 'outer', which a run executes and a comparison judges "
                                 "as one op: name 'outer'*"])
    pytester.makepyfile(test_nested=TEST.format(setting=pasted))
    out = pytester.runpytest("-p", "no:cacheprovider")
    assert "configuration error" not in out.stdout.str()  # one paste taken
    out.assert_outcomes(passed=1)

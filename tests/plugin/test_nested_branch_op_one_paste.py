"""A per_op or ignore entry naming an op inside an If nested in an If's branch, both decided by
the input values (silero_vad's LSTM in If '.../decoder/If_1' in If 'If_0'): the refusal named
the immediate owner, which pasted was refused again naming the outer If (H110). It names the
op a run executes and a comparison judges, the outermost If that stays an operator, so one
paste is taken. A glob in ignore reaching only such ops is refused the same way (H113:
silero_vad's ignore=['If_0_then_branch__Inline_0__/decoder/*'] never named If_0); a keep_dtype
entry naming a branch op is refused offering the OpType:: entry ATC keeps it by (ATC keeps by
type on every parsed node, branches included). Each advice pasted is taken."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "graph"))
from test_nested_branch_owner import nested_model  # noqa: E402

TEST = """
import numpy as np
from pytest_ascend_accuracy import accuracy, keep_dtype

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


@pytest.mark.parametrize("setting, refusal, pasted", [
    ("ignore=['de*']", "ignore entry 'de*' (a glob) matches no op of model 'nested' a "
     "comparison judges, but 1 op inside If branches, e.g. 'deep' (in the then_branch of If "
     "'inner', within 'outer'), which a run executes and a comparison judges as one op: name "
     "'outer'", "ignore=['outer']"),
    ("modes=[keep_dtype(['deep'])]", "keep_dtype entry 'deep' names an op inside the "
     "then_branch of If 'inner', within 'outer': ATC applies keep_dtype to the graph as its "
     "parser built it*'OpType::Mul' keeps it: modes=[keep_dtype(['OpType::Mul'])]",
     "modes=[keep_dtype(['OpType::Mul'])]")])
def test_branch_advice_pasted_is_taken(pytester, setting, refusal, pasted):
    nested_model(pytester.path / "nested.onnx")
    pytester.makepyfile(test_nested=TEST.format(setting=setting))
    result = pytester.runpytest("-p", "no:cacheprovider")
    text = " ".join(result.stdout.str().split())  # brackets: no fnmatch
    assert all(part in text for part in refusal.split("*"))
    pytester.makepyfile(test_nested=TEST.format(setting=pasted))
    out = pytester.runpytest("-p", "no:cacheprovider")
    assert "configuration error" not in out.stdout.str()
    out.assert_outcomes(passed=1)

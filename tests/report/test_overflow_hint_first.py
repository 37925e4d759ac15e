"""A float16-range finding after the first failing op is named, never printed as its fix: the
failure block printed ``keep_dtype(['Mul_3'])`` (and high precision) for a check failing first at
conv1_relu, whose golden values stay within float16: pasted, conv1_relu still fails. Where the
findings are underflows only, the fallback's "no float16 overflow seen" says where values flush
to 0 (after the first failing op) instead of leaving them unsaid."""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.fp16_range import UNDERFLOW, RangeFinding, RangeFindings
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.failure_text import default_hint
from pytest_ascend_accuracy.report.hints import MODES, next_step

UNEXPLAINED = ("values leave the float16 range at Mul_3 (NaN/Inf in the actual output or "
               "|golden| > 65504), but not at or before the first failing op (conv1_relu): no "
               "op list is known to fix it")


def _result(nan=True):
    f16, f32 = (lambda v: np.array(v, np.float16)), (lambda v: np.array(v, np.float32))
    actual = DumpSet.from_arrays(
        {"Conv_0": [f16([1, 2, 3, 4])], "conv1_relu": [f16([1, 2, 3, 4])],
         "Add_2": [f16([1, 1, 1, -1])], "Mul_3": [f16([1, np.nan if nan else 2, 3, 4])]},
        op_types={"Conv_0": "Conv2D", "conv1_relu": "Conv2D", "Add_2": "Add", "Mul_3": "Mul"})
    golden = DumpSet.from_arrays(
        {"Conv_0": [f32([1, 2, 3, 4])], "conv1_relu": [f32([1, 2, 3, 5])],
         "Add_2": [f32([1, 1, 1, 1])], "Mul_3": [f32([1, 2, 3, 4])]})
    result = compare_dumps(actual, golden)
    return result, result.judge(0.999)


def test_an_overflow_after_the_first_failure_is_named_not_offered():
    result, verdict = _result()
    assert verdict.first.row.op_name == "conv1_relu"
    hint = next_step(verdict, ())
    assert hint.kind == MODES and not hint.modes, hint
    assert hint.reason == UNEXPLAINED
    assert hint.advice.startswith("run with --accuracy-diagnose to find one by running")
    text = default_hint(verdict, (), result)
    assert text.startswith(UNEXPLAINED + "; to find one by running, diagnose(model, inputs, ")
    cli = default_hint(verdict, (), result, cli=True)
    assert cli.startswith(UNEXPLAINED + "; ascend-accuracy diagnose MODEL.onnx --threshold "
                          "0.999"), cli
    assert " finds one by running (high precision, ops kept in float32, " in cli, cli
    for said in (hint.text(), text, cli):
        assert "keep_dtype" not in said and "HIGH_PRECISION" not in said, said


def test_an_overflow_at_the_first_failure_is_still_its_fix():
    _, verdict = _result()
    found = RangeFindings([RangeFinding("conv1_relu", "input:0", 1e5)])
    found.checked = 1
    hint = next_step(verdict, found)
    assert hint.kind == "keep_dtype" and "conv1_relu" in hint.modes[0].keep_dtype, hint.text()


def test_the_fallback_says_values_flush_only_after_the_first_failure():
    _, verdict = _result(nan=False)
    found = RangeFindings([RangeFinding("Add_2", "input:1", 3e-9, UNDERFLOW)])
    found.checked = 2
    hint = next_step(verdict, found)
    assert hint.reason.startswith(
        "no float16 overflow seen; values flush to 0 only after the first failing op (Add_2 "
        "input:1 underflows to 0 (|3e-09|))"), hint.reason
    assert "values flush to 0 only after the first failing op (Add_2" in default_hint(
        verdict, found)
    # at the first failing op: the keep_dtype fix, no such note
    at_first = RangeFindings([RangeFinding("conv1_relu", "input:1", 3e-9, UNDERFLOW)])
    at_first.checked = 2
    assert "flush to 0 only after" not in next_step(verdict, at_first).text()

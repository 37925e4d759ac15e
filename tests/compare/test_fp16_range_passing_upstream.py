"""Ops upstream of the failures that pass a loosened threshold are looked at for float16 range.

The overflow model's failure block offered "threshold=0.396693 with scale_tolerance=2.51"; pasted,
norm (1e9 variance) passed and fc2 failed with "no float16 overflow seen": only ignored ops
upstream were looked at. A passing op is looked at where the default check fails it; one whose
values stayed close is no suspect, whatever its operands hold.
"""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.fp16_range import failing_ops_past_fp16
from pytest_ascend_accuracy.compare.thresholds import Policy
from pytest_ascend_accuracy.core.modes import DEFAULT
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef
from pytest_ascend_accuracy.report.hints import next_step

X = np.linspace(1.0, 2.0, 8).astype(np.float32)
M = np.linspace(-1.0, 1.0, 8).astype(np.float32)
N = np.linspace(0.5, 3.0, 8).astype(np.float32)


def _ref(values, kind="output", index=0, source=None):
    return TensorRef.from_array(np.asarray(values, np.float32), kind, index, source=source)


def _golden(side_branch=False):
    """mask (an operand of -1e9) -> norm (an operand of 1e9) -> fc; ``side_branch``: norm feeds
    only a branch of its own, not fc."""
    norm_out = "pack#norm.0" if not side_branch else "pack#other.0"
    return DumpSet([
        OpRecord("mask", "Add", order=0,
                 inputs=(_ref(X, "input", 0), _ref(np.full(8, -1e9), "input", 1)),
                 outputs=(_ref(M, source="pack#mask.0"),)),
        OpRecord("norm", "BatchNormalization", order=1,
                 inputs=(_ref(M, "input", 0, "pack#mask.0"), _ref(np.full(8, 1e9), "input", 1)),
                 outputs=(_ref(N, source="pack#norm.0"),)),
        OpRecord("fc", "MatMul", order=2, inputs=(_ref(N, "input", 0, norm_out),),
                 outputs=(_ref(X),))])


def _actual():
    # mask equal; norm's values at 0.4x with a cosine of about 0.7 (fails the default check,
    # meets 0.3 with scale_tolerance 3); fc off (fails 0.3)
    norm = (N * 0.4 + np.where(np.arange(8) % 2, 0.6, -0.6)).astype(np.float32)
    return DumpSet.from_arrays({"mask": [M], "norm": [norm], "fc": [X[::-1].copy() - 1.5]})


def _judged(golden):
    result = compare_dumps(_actual(), golden)
    verdict = result.judge(Policy.build(0.3, scale_tolerance=3.0))
    assert [f.row.op_name for f in verdict.failures] == ["fc"]
    return result, verdict


def test_a_passing_op_the_default_check_fails_upstream_is_looked_at():
    golden = _golden()
    result, verdict = _judged(golden)
    found = failing_ops_past_fp16(golden, verdict, result.rows)
    assert [(f.op, f.slot) for f in found] == [("norm", "input:1")]  # mask stays close: unread
    assert found.passing == ("norm",) and found.ignored == ()
    hint = next_step(verdict, found, DEFAULT)
    assert [m.python_expr() for m in hint.modes][0] == "keep_dtype(['norm'])"
    assert hint.reason == ("golden operands leave the float16 range (norm input:1 reaches "
                           "|1e+09|; norm meets the loosened threshold (the default check fails "
                           "it) but feeds the failing ops)")


def test_a_passing_op_that_does_not_feed_the_failure_is_not_named():
    golden = _golden(side_branch=True)
    result, verdict = _judged(golden)
    found = failing_ops_past_fp16(golden, verdict, result.rows)
    assert list(found) == [] and found.passing == ()
    assert next_step(verdict, found, DEFAULT).reason.startswith("no float16 overflow seen")

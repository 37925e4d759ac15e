"""Every member of a failing fused op has its golden operands looked at for float16 range.

A fused MatMul+Add row is matched to the Add's golden tensor; only the Add's operands were read,
so the MatMul's weight past 65504 went unseen: the hint called the Inf it made a NaN/Inf of
values within float16 and offered high precision, which still feeds a MatMul float16 (pasted, it
failed as before).
"""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.fp16_range import failing_ops_past_fp16
from pytest_ascend_accuracy.core.modes import DEFAULT
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef
from pytest_ascend_accuracy.report.hints import next_step

XS = np.full((1, 4), 1e-4, np.float32)
W = np.array([[1e5, 0.5], [0.2, -0.3], [0.1, 0.4], [-0.2, 0.3]], np.float32)
MM = XS @ W
B = np.array([0.1, -0.2], np.float32)
Y = MM + B


def _ref(values, kind="output", index=0, origin=None):
    return TensorRef.from_array(np.asarray(values, np.float32), kind, index, origin=origin)


def _golden(*extra):
    return DumpSet([
        OpRecord("fc/MatMul", "MatMul", order=0,
                 inputs=(_ref(XS, "input", 0), _ref(W, "input", 1)), outputs=(_ref(MM),)),
        OpRecord("fc/Add", "Add", order=1, inputs=(_ref(MM, "input", 0), _ref(B, "input", 1)),
                 outputs=(_ref(Y),)), *extra])


def _fused(*extra, value=np.inf):
    """The device's fused op, one output the Add's (by origin), with ``value`` at one spot."""
    out = Y.copy()
    out[0, 0] = value
    return DumpSet([OpRecord("fc/MatMul", "MatMulV2", original_names=("fc/MatMul", "fc/Add"),
                             outputs=(_ref(out, origin=("fc/Add", 0)),), order=0), *extra])


def test_the_weight_of_a_fused_member_past_65504_is_found_and_kept():
    golden = _golden()
    verdict = compare_dumps(_fused(), golden).judge(0.95)
    assert [(f.row.golden_name, f.row.original_names) for f in verdict.failures] == [
        ("fc/Add", ("fc/MatMul", "fc/Add"))]
    found = failing_ops_past_fp16(golden, verdict)
    assert [f.describe() for f in found] == ["fc/MatMul input:1 reaches |1e+05|"]
    hint = next_step(verdict, found, DEFAULT)
    assert hint.kind == "keep_dtype"
    assert [m.python_expr() for m in hint.modes] == ["keep_dtype(['fc/MatMul', 'fc/Add'])"]


def test_the_members_of_only_the_first_failing_rows_are_read():
    """Three failing rows are looked at, each with every member; a fourth is not read."""
    extra = [OpRecord(f"op{k}", "Relu", order=2 + k, inputs=(_ref(np.full(2, 1e5), "input", 0),),
                      outputs=(_ref(np.ones(2)),)) for k in range(3)]
    actual = [OpRecord(f"op{k}", "Relu", order=1 + k, outputs=(_ref(-np.ones(2)),))
              for k in range(3)]
    golden = _golden(*extra)
    verdict = compare_dumps(_fused(*actual, value=-5.0), golden).judge(0.95)
    assert len(verdict.failures) == 4
    found = failing_ops_past_fp16(golden, verdict)
    assert [f.op for f in found] == ["fc/MatMul", "op0", "op1"]  # op2: the fourth row

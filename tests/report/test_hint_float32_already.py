"""No keep_dtype hint names an op only for its own values where the failing run outputs it in
float32 already (high precision, or the mode keeps it): pasted, that mode converts the op as the
run did, and printed itself again (tests/plugin/test_hint_tiny_float32.py, the real case). The
hint keeps an op whose float32 output turns NaN/Inf (float16's doing before it was stored so, or
a fault), a Cube op (keep_dtype changes its float16 inputs), and an op whose operand leaves the
range; and never offers the test's own mode."""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.fp16_range import RangeFinding, RangeFindings
from pytest_ascend_accuracy.core.modes import HIGH_PRECISION, keep_dtype
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.failure_text import default_hint
from pytest_ascend_accuracy.report.fp16_fix_ops import keep_dtype_names
from pytest_ascend_accuracy.report.hints import KEEP_DTYPE, next_step

BIG = np.linspace(7e4, 9e4, 64).astype(np.float32)
#: fc's own output past 65504, as ``golden_inputs_past_fp16`` finds it
FC_OUT = RangeFinding("fc", "output:0", 9e4)


def _verdict(actual_fc, op_type="Add"):
    """``fc``: golden values past 65504, the actual ``actual_fc``, failing."""
    golden = DumpSet.from_arrays({"fc": [BIG]}, op_types={"fc": op_type})
    actual = DumpSet.from_arrays({"fc": [actual_fc]}, op_types={"fc": op_type})
    return compare_dumps(actual, golden).judge(0.95)


def _found(*findings):
    found = RangeFindings(findings)
    found.checked = 2
    return found


def test_an_op_output_in_float32_already_is_not_named():
    verdict = _verdict(-BIG)  # float32, no NaN/Inf, the sign flipped: fails its cosine
    assert keep_dtype_names(verdict, _found()) == ([], "")
    assert keep_dtype_names(verdict, _found(FC_OUT)) == ([], "")
    hint = next_step(verdict, _found(), HIGH_PRECISION)
    assert hint.kind != KEEP_DTYPE and "keep_dtype" not in "".join(
        m.python_expr() for m in hint.modes), hint.text()
    assert "keep_dtype" not in default_hint(verdict, _found())
    # beside an op the fix does change, it is left out and the reason says why
    golden = DumpSet.from_arrays({"norm": [np.ones(64, np.float32)], "fc": [BIG]},
                                 inputs={"norm": [np.full(64, 1e9, np.float32)]})
    actual = DumpSet.from_arrays({"norm": [-np.ones(64, np.float16)], "fc": [-BIG]})
    verdict = compare_dumps(actual, golden).judge(0.95)
    names, reason = keep_dtype_names(verdict, _found(RangeFinding("norm", "input:0", 1e9)))
    assert names == ["norm"], (names, reason)
    assert reason.endswith("; fc is left out (this run outputs it in float32 already: keeping "
                           "it in float32 changes nothing)"), reason


def test_float32_nan_inf_a_cube_op_and_a_float16_output_stay_named():
    inf = np.full(64, np.inf, np.float32)  # stored as float32, turned Inf: float16's doing
    assert keep_dtype_names(_verdict(inf), _found(FC_OUT))[0] == ["fc"]
    assert keep_dtype_names(_verdict(-BIG, "MatMul"), _found(FC_OUT))[0] == ["fc"]
    saturated = np.full(64, -65504, np.float16)  # float16, finite: keep_dtype changes it
    assert keep_dtype_names(_verdict(saturated), _found(FC_OUT))[0] == ["fc"]
    # an operand past 65504 (not its own values): keeping it changes what it reads
    found = _found(RangeFinding("fc", "input:0", 1e9))
    assert keep_dtype_names(_verdict(-BIG), found)[0] == ["fc"]


def test_the_tests_own_mode_is_never_offered():
    """An op the mode keeps already (whatever dtype the dump says): no keep_dtype hint adding
    nothing to the mode."""
    verdict = _verdict(np.full(64, -65504, np.float16))
    mode = keep_dtype(["fc"])
    assert next_step(verdict, _found(FC_OUT), keep_dtype([])).modes[0] == mode  # unkept
    hint = next_step(verdict, _found(FC_OUT), mode)
    assert mode not in hint.modes and hint.kind != KEEP_DTYPE, hint.text()

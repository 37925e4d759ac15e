import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.fp16_range import RangeFinding, golden_inputs_past_fp16
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.failure_text import default_hint


def _golden():
    return DumpSet.from_arrays(
        {"fc": [np.ones(4, np.float32)], "norm": [np.ones(4, np.float32)], "out": [np.ones(4, np.float32)]},
        inputs={"fc": [np.ones(4, np.float32), np.full(4, 3.0, np.float32)],
                "norm": [np.ones(4, np.float32), np.array([1e9, 1.0, -7e4, np.inf], np.float32),
                         np.arange(4)],
                "out": [np.full(4, -1e5, np.float32)]})


def test_operands_past_65504_are_found_in_order_and_limited():
    found = golden_inputs_past_fp16(_golden(), ["fc", "norm", "out"], limit=2)
    assert found == [RangeFinding("norm", "input:1", 1e9)]  # inf ignored: not a range problem
    assert found[0].describe() == "norm input:1 reaches |1e+09|"
    assert golden_inputs_past_fp16(_golden(), ["missing", "out"]) == [RangeFinding("out", "input:0", 1e5)]


def test_hint_points_at_keep_dtype_when_only_an_operand_overflows():
    actual = DumpSet.from_arrays({"fc": [np.ones(4)], "norm": [np.array([1.0, -1, 1, -1])], "out": [np.ones(4)]})
    verdict = compare_dumps(actual, _golden()).judge(0.95)
    assert default_hint(verdict).startswith("no float16 overflow seen")
    hint = default_hint(verdict, golden_inputs_past_fp16(_golden(), ["norm"]))
    assert hint == ("golden operands leave the float16 range (norm input:1 reaches |1e+09|): convert "
                    "with mode=\"high_precision\", or keep these ops in float32 with keep_dtype=['norm']")


def test_the_hint_keeps_both_the_op_with_the_big_operand_and_the_ops_past_the_range():
    """An op fed an operand past 65504 fails first; ops after it fail on their own values. The
    keep_dtype advice names both kinds, in graph order: keeping only the later ones leaves the
    first failing (found pasting the printed advice on overflow() followed by a Mul by 1e5)."""
    from pytest_ascend_accuracy.core.modes import DEFAULT
    from pytest_ascend_accuracy.report.hints import next_step

    golden = DumpSet.from_arrays(
        {"norm": [np.ones(4, np.float32)], "fc": [np.full(4, 7e4, np.float32)]},
        inputs={"norm": [np.ones(4, np.float32), np.full(4, 1e9, np.float32)],
                "fc": [np.ones(4, np.float32)]})
    actual = DumpSet.from_arrays({"norm": [np.array([1.0, -1, 1, -1])],
                                  "fc": [np.full(4, np.inf)]})
    verdict = compare_dumps(actual, golden).judge(0.95)
    ranges = golden_inputs_past_fp16(golden, ["norm", "fc"])
    hint = next_step(verdict, ranges, DEFAULT)
    assert hint.kind == "keep_dtype"
    assert hint.modes[0].python_expr() == "keep_dtype(['norm', 'fc'])"
    assert hint.reason.startswith("golden operands leave the float16 range (norm input:1 "
                                  "reaches |1e+09|), and values leave the float16 range")
    assert default_hint(verdict, ranges).endswith("keep_dtype=['norm', 'fc']")

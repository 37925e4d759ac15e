"""The failure block says where the model's outputs pass, and only there (audit 33: whisper's
front-end failed at an intermediate Log whose -Inf its clamp absorbs; ``report.outputs_note``)."""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.failure_text import failure_text
from pytest_ascend_accuracy.report.outputs_note import outputs_lines


def _result(output_actual):
    actual = DumpSet.from_arrays({"log": [np.array([1, -np.inf, 3], np.float16)],
                                  "clamp": [np.array(output_actual, np.float16)]})
    golden = DumpSet.from_arrays({"log": [np.array([1, -23, 3], np.float32)],
                                  "clamp": [np.array([1, -10, 3], np.float32)]})
    golden.meta["output_nodes"] = ["clamp"]
    result = compare_dumps(actual, golden, kl=False)
    result.meta.setdefault("golden", {})["output_nodes"] = ["clamp"]
    return result


def test_outputs_that_pass_are_named_with_their_figure():
    result = _result([1, -10, 3])
    verdict = result.judge(0.99)
    assert outputs_lines(result, verdict, "{:.6f}".format) == [
        "model outputs: clamp (cosine 1.000000; rel_l2 0.000000) passes its threshold; the "
        "check fails at ops before it"]
    assert "model outputs: clamp" in failure_text(result, verdict)


def test_a_failing_output_is_said_to_fail_and_a_passing_check_says_nothing():
    """Audit 35: a failing output had no line (Smart Turn's probability, 0.114 against 0.221,
    failed by the one-element rule); it is named with its figure and FAILS."""
    result = _result([1, 5, 3])
    verdict = result.judge(0.99)
    (line,) = outputs_lines(result, verdict, "{:.6f}".format)
    assert line.startswith("model outputs: clamp (cosine ") and line.endswith(") FAILS"), line
    assert line in failure_text(result, verdict)
    passing = _result([1, -10, 3])
    assert outputs_lines(passing, passing.judge(0.99, ignore=["log"]), str) == []


def test_an_output_failing_by_nan_or_inf_says_why_beside_a_passing_figure():
    """Review RB4 of audit 35: an output whose cosine passes but which holds an Inf the golden
    does not read "cosine 1.000000 ... FAILS" with no reason."""
    big = np.ones(64, np.float32)
    actual = DumpSet.from_arrays({"y": [np.concatenate([big[:-1], [np.inf]]).astype(np.float16)]})
    golden = DumpSet.from_arrays({"y": [big]})
    result = compare_dumps(actual, golden, kl=False)
    result.meta.setdefault("golden", {})["output_nodes"] = ["y"]
    verdict = result.judge(0.99)
    (line,) = outputs_lines(result, verdict, "{:.6f}".format)
    assert line.endswith(": NaN/Inf on one side only at 1 position (actual 0 NaN, 1 +Inf, 0 -Inf; "
                         "golden 0 NaN, 0 +Inf, 0 -Inf)) FAILS"), line

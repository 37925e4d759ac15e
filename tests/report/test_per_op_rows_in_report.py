"""A tensor passed by its own per_op entry was drawn below the chart's threshold line with nothing
saying why (``report/html_report.py`` promised a passing row is drawn at or above its threshold),
and the PASSED heading read "2 tensors meet cosine >= 0.95" where one met ``max_abs <= 0.5``
instead (a review of the per-op metric entries). Its tooltip now names the entry that judged it,
the chart's footnote counts such rows, and the heading says per-op thresholds took part, as the
FAILED line already did."""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.html_report import chart_svg


def _result():
    golden = {"good": [np.linspace(1, 2, 64, dtype=np.float32)],
              "tiny": [np.linspace(1e-8, 2e-6, 64, dtype=np.float32)]}
    actual = {"good": [golden["good"][0].astype(np.float16)],
              "tiny": [golden["tiny"][0][::-1].copy()]}  # reversed: cosine far below 0.95
    return compare_dumps(DumpSet.from_arrays(actual), DumpSet.from_arrays(golden))


def test_a_row_passed_by_its_own_per_op_entry_says_so_in_the_chart_and_the_heading():
    result = _result()
    assert not result.judge(0.95).passed  # the default alone fails the reversed tensor
    verdict = result.judge(0.95, per_op={"tiny": {"max_abs": 0.5}})
    assert verdict.passed
    assert verdict.describe() == ("accuracy PASSED: 2 tensors meet cosine >= 0.95 or their "
                                  "per-op threshold (1 op)")
    svg = chart_svg(result, verdict)
    assert "judged by per_op &#x27;tiny&#x27;: max_abs &lt;= 0.5" in svg
    assert "(2 compared tensors; 1 judged by its per_op threshold, not the line: hover it)" in svg


def test_without_per_op_entries_nothing_changes():
    result = _result()
    verdict = result.judge(-1.0)
    assert verdict.describe() == "accuracy PASSED: 2 tensors meet cosine >= -1"
    svg = chart_svg(result, verdict)
    assert "per_op" not in svg and "(2 compared tensors)" in svg

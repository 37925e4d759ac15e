"""msaccucmp's plain figure is named beside the judged one only where the two read differently as
printed (6 decimals). At threshold=0.9999 the real PP-OCRv4 recogniser's failure block said
"msaccucmp's plain cosine: #263 0.999689" under a table showing 0.999689 (compare.json: judged
and plain differed in the 12th decimal), and report.html added "(msaccucmp's plain cosine X)"
with the same X to about 15 chart points. The judged rel_l2 (compare.json version 4) gets the
same rule and, where it does differ, the same footnote."""
import csv
import dataclasses
import html
import io
import re

import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.csv_report import csv_text
from pytest_ascend_accuracy.report.failure_text import failure_text, summary_text
from pytest_ascend_accuracy.report.html_report import html_text

SOFT = "p2o.Softmax.1"
FOOT = ("the figure judged (float16 values below its smallest normal on both sides counted as "
        "equal, as the notes say)")


def _result(judged_moves):
    """Three rows just under 0.9999, the softmax's judged cosine and rel_l2 moved from
    msaccucmp's by ``judged_moves`` (1e-12: two float16 subnormals counted as equal; 2e-5: a
    visible change)."""
    rng = np.random.default_rng(0)
    actual, golden = {}, {}
    for name in ("conv", SOFT, "fc"):
        x = rng.standard_normal(256).astype(np.float32)
        actual[name], golden[name] = [(x + 1e-2 * rng.standard_normal(256)).astype(np.float32)], [x]
    r = compare_dumps(DumpSet.from_arrays(actual), DumpSet.from_arrays(golden))
    rows = []
    for row in r.rows:
        if row.op_name == SOFT:
            m = row.metrics
            row = dataclasses.replace(row, metrics=dataclasses.replace(
                m, normal_cosine=m.cosine + judged_moves, normal_rel_l2=m.rel_l2 - judged_moves,
                tiny_equal=2))
        rows.append(row)
    return dataclasses.replace(r, rows=tuple(rows))


def _tips(page):
    return [html.unescape(t) for t in re.findall(r"<title>([^<]*)</title></circle>", page)]


def test_figures_equal_as_printed_get_no_footnote_tip_or_csv_note():
    r = _result(1e-12)
    m = r.row(SOFT).metrics
    assert m.value("cosine") != m.cosine and f"{m.value('cosine'):.6f}" == f"{m.cosine:.6f}"
    failing = r.judge(0.99999, scale_tolerance=2)
    assert not failing.passed and SOFT in {f.row.op_name for f in failing.failures}
    assert FOOT not in failure_text(r, failing)
    assert FOOT not in summary_text(r, r.judge(0.9, scale_tolerance=2))
    page = html_text(r, failing)
    assert _tips(page) and not any("msaccucmp" in t for t in _tips(page))
    rows = list(csv.reader(io.StringIO(csv_text(r, failing))))
    assert not any("msaccucmp's plain cosine" in c for row in rows for c in row)


def test_figures_that_read_differently_are_named_each_under_its_own_metric():
    r = _result(2e-5)
    m = r.row(SOFT).metrics
    order = r.row(SOFT).order
    failing = r.judge(0.99999, scale_tolerance=2)
    lines = failure_text(r, failing).splitlines()
    assert f"  cosine: {FOOT}; msaccucmp's plain cosine: #{order} {m.cosine:.6f}" in lines
    assert f"  rel_l2: {FOOT}; msaccucmp's plain rel_l2: #{order} {m.rel_l2:.6f}" in lines
    tips = _tips(html_text(r, failing))
    assert any(t.endswith(f"(msaccucmp's plain cosine {m.cosine:.6f})") for t in tips)
    assert any(t.endswith(f"(msaccucmp's plain rel_l2 {m.rel_l2:.6f})") for t in tips)

"""Every report shows the cosine the verdict judged (``TensorMetrics.value("cosine")``), not
msaccucmp's plain one, for a float16 tensor of values below float16's smallest normal
(``compare/tiny_values.py``): the HTML chart drew such a passing row under its threshold line,
and the failure block's tables listed a figure other than the one judged. The CSV keeps
msaccucmp's cosine and says which one was judged.

The tensor is the real PP-OCRv4 detector's case in small: a sigmoid's saturated tail, all below
float16's smallest normal, the device's output that golden correctly rounded to float16 (msaccucmp's
cosine 0.9939, judged 1).
"""
import csv
import html
import io
import re

import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.csv_report import csv_text
from pytest_ascend_accuracy.report.failure_text import failure_text, summary_text
from pytest_ascend_accuracy.report.html_report import html_text

TINY = "p2o.Sigmoid.0"


def _tiny_pair():
    """(golden float32, device float16): every value below float16's smallest normal."""
    logits = np.linspace(-30.0, -14.6, 4096)
    golden = (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)
    return golden, golden.astype(np.float16)


def _compare(order=("conv", TINY, "fc"), bad=()):
    """A comparison of the tiny row among float32 rows (``bad``: ones far off)."""
    rng = np.random.default_rng(0)
    actual, golden = {}, {}
    for name in order:
        if name == TINY:
            g, a = _tiny_pair()
        else:
            g = rng.standard_normal(256).astype(np.float32)
            a = g + (0.8 if name in bad else 1e-4) * rng.standard_normal(256).astype(np.float32)
        actual[name], golden[name] = [a], [g]
    return compare_dumps(DumpSet.from_arrays(actual), DumpSet.from_arrays(golden))


def _between(m):
    """A cosine threshold above msaccucmp's figure that the judged one meets."""
    judged = m.value("cosine")
    assert judged - m.cosine > 1e-3  # the case: the two figures differ visibly
    thr = round((m.cosine + judged) / 2, 6)
    assert m.cosine < thr <= judged
    return thr


def _svg_points(page):
    """The cosine panel's points of the page's embedded chart: {title name: (cy, r, fill,
    title)}, and its threshold line's y."""
    svg = page[page.index("<svg"):page.index("</svg>")]
    panel = svg[:svg.index("rel-L2 (log)")]  # the cosine panel comes first
    points = {}
    for cy, r, fill, title in re.findall(r'<circle cx="[\d.]+" cy="([\d.]+)" r="(\d)" '
                                         r'fill="([^"]+)"><title>([^<]*)</title></circle>', panel):
        title = html.unescape(title)
        points[title.split(":")[0].split(" ", 1)[1]] = (float(cy), r, fill, title)
    line_y = re.search(r'<line x1="\d+" y1="([\d.]+)" x2="\d+" y2="[\d.]+" stroke="#b3261e" '
                       r'stroke-dasharray="5,4"/>', panel)
    return points, float(line_y.group(1))


def test_the_html_chart_draws_a_passing_tiny_row_at_its_judged_cosine_above_the_threshold():
    r = _compare()
    m = r.row(TINY).metrics
    thr = _between(m)
    v = r.judge(thr, scale_tolerance=2)
    assert v.passed
    page = html_text(r, v)
    points, line_y = _svg_points(page)
    cy, radius, fill, title = points[TINY]
    assert cy <= line_y  # SVG y grows downward: at or above the threshold line
    assert (radius, fill) == ("2", "#1f6fb2")  # not marked failed
    assert title == (f"#{r.row(TINY).order} {TINY}: {m.value('cosine'):.6f} "
                     f"(msaccucmp's plain cosine {m.cosine:.6f})")
    # the table's cosine column too
    row = page[page.index(f'<td class="w">{TINY}</td>'):]
    assert re.search(r'<td class="n">([^<]*)</td>', row).group(1) == f"{m.value('cosine'):.6f}"


def test_a_passing_summary_lists_the_judged_cosine_and_names_msaccucmps():
    r = _compare()
    m = r.row(TINY).metrics
    v = r.judge(_between(m), scale_tolerance=2)
    text = summary_text(r, v)
    line = next(s for s in text.splitlines() if f" {TINY} " in s)
    assert f"{m.value('cosine'):.6f}" in line.split() and f"{m.cosine:.6f}" not in line.split()
    assert (f"  cosine: the figure judged (float16 values below its smallest normal on both sides "
            f"counted as equal, as the notes say); msaccucmp's plain cosine: "
            f"#{r.row(TINY).order} {m.cosine:.6f}") in text.splitlines()


def _rel_l2_failure(order):
    """Judged by max_abs, which the tiny row fails (at half its own figure) as does ``conv``:
    the cosine column is a figure beside the judged one. (rel_l2 is judged with float16's close
    subnormal positions as equal too, since compare.json version 4: the tiny row passes it.)"""
    r = _compare(order, bad=("conv",))
    m = r.row(TINY).metrics
    v = r.judge(m.max_abs / 2, metric="max_abs")
    assert not v.passed and {f.row.op_name for f in v.failures} == {"conv", TINY}
    return r, m, failure_text(r, v)


def test_the_failure_blocks_next_worst_table_shows_the_judged_cosine():
    r, m, text = _rel_l2_failure(("conv", TINY))
    lines = text.splitlines()
    head = lines.index("next worst operators (1 of 1):")
    cells = lines[head + 2].split()
    assert cells[:4] == [str(r.row(TINY).order), TINY, "-", f"{m.value('cosine'):.6f}"]
    assert lines[head + 3] == (
        "  cosine: the figure judged (float16 values below its smallest normal on both sides "
        f"counted as equal, as the notes say); msaccucmp's plain cosine: "
        f"#{r.row(TINY).order} {m.cosine:.6f}")


def test_the_first_failing_operators_cosine_beside_another_metric_is_the_judged_one():
    r, m, text = _rel_l2_failure((TINY, "conv"))
    assert f"  cosine         {m.value('cosine'):.6f}" in text.splitlines()
    assert f"(msaccucmp's formula: {m.cosine:.6f})" in text  # its notes name the other


def test_the_csv_keeps_msaccucmps_cosine_says_which_was_judged_and_agrees_with_the_verdict():
    r = _compare(bad=("fc",))
    m = r.row(TINY).metrics
    v = r.judge(_between(m), scale_tolerance=2)
    rows = {row["NPUDump"]: row for row in csv.DictReader(io.StringIO(csv_text(r, v)))}
    tiny = rows[TINY]
    assert tiny["CosineSimilarity"] == f"{m.cosine:.6f}"  # msaccucmp's, on purpose
    assert tiny["CompareFailReason"].endswith(
        f"CosineSimilarity is msaccucmp's plain cosine; the cosine judged is "
        f"{m.value('cosine'):.6f}")
    failed = {f.row.op_name for f in v.failures}
    assert {name: row["IsPrecisionError"] for name, row in rows.items()} == {
        name: "YES" if name in failed else "NO" for name in rows}
    assert tiny["IsPrecisionError"] == "NO" and rows["fc"]["IsPrecisionError"] == "YES"
    assert "the cosine judged" not in rows["conv"]["CompareFailReason"]

"""A failing check's report links its ``--accuracy-diagnose`` page, and so does the run's index:
report.html said nothing of the diagnosis written beside it (H85), and a test's second failure,
reported in ``<test>-2/``, has its diagnosis in ``<test>/diagnosis-2/``, which no page named."""
import json
import re
from pathlib import Path

import pytest

from test_diagnosis_per_failure import TWO_FAILING

pytest.importorskip("_pytest.subtests")  # pytest >= 9: the subtests fixture is pytest's own


def _page_links(page: Path):
    return [h for h in re.findall(r'href="([^"#][^"]*)"', page.read_text())]


def test_each_failures_report_links_its_own_diagnosis(pytester, models_dir):
    pytester.makepyfile(test_two=TWO_FAILING)
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose",
                                "--accuracy-report=rep")
    result.stdout.fnmatch_lines(["*FAILED test_two.py::test_seeds - contains 2 failed subtests"])
    named = [line.split("full diagnosis: ", 1)[1] for line in result.outlines
             if "full diagnosis: " in line]  # as each failure names its diagnosis
    rep = pytester.path / "rep"
    linked = []
    for folder in ("test_two.py--test_seeds", "test_two.py--test_seeds-2"):
        page = rep / folder / "report.html"
        line = re.search(r'<p id="diagnosis">diagnosis \(--accuracy-diagnose\): <a href="([^"]+)">',
                         page.read_text())
        assert line, folder
        target = (page.parent / line.group(1)).resolve()
        assert target.is_file() and target.name == "diagnosis.html"
        run = json.loads((rep / folder / "compare.json").read_text())["run"]
        assert run["diagnosis"] == line.group(1)
        linked.append(target.parent)
    assert linked == [(pytester.path / n).resolve().parent for n in named]
    assert linked[0] != linked[1]  # each failure its own: diagnosis/ and diagnosis-2/
    index = json.loads((rep / "index.json").read_text())
    by_page = {e["page"]: e["diagnosis"] for e in index["folders"]}
    assert by_page == {f"{f}/report.html": (p / "diagnosis.html").relative_to(rep.resolve())
                       .as_posix() for f, p in zip(("test_two.py--test_seeds",
                                                    "test_two.py--test_seeds-2"), linked)}
    hrefs = _page_links(rep / "index.html")
    assert sum(h.endswith("diagnosis.html") for h in hrefs) == 2
    assert all((rep / h).is_file() for h in hrefs)  # every index link resolves


def test_without_a_diagnosis_nothing_is_linked(pytester, models_dir):
    pytester.makepyfile(test_two=TWO_FAILING)
    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep")
    for page in (pytester.path / "rep").glob("*/report.html"):
        assert 'id="diagnosis"' not in page.read_text()
        assert json.loads((page.parent / "compare.json").read_text())["run"]["diagnosis"] is None
    index = json.loads((pytester.path / "rep" / "index.json").read_text())
    assert [e["diagnosis"] for e in index["folders"]] == [None, None]


ONE_FAILING = '''
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_over(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/overflow.onnx")
    check_accuracy(ascend_model("models/overflow.onnx").run(inputs),
                   golden_dump("models/overflow.onnx", inputs))
'''

BOOM = '''
import pytest_ascend_accuracy.triage.flow as flow

_diagnose = flow.diagnose


def _boom(*a, **k):
    raise RuntimeError("boom inside the diagnosis")


def pytest_configure(config):
    flow.diagnose = _boom


def pytest_unconfigure(config):  # (this run is in the suite's own process)
    flow.diagnose = _diagnose
'''

TERMINATED = '''
import os
import signal

import pytest_ascend_accuracy.triage.report as report

_html_page = report.html_page


def _terminated(*a, **k):  # a CI cancel (SIGTERM) while the diagnosis writes its files
    os.kill(os.getpid(), signal.SIGTERM)
    return _html_page(*a, **k)


report.html_page = _terminated
'''


def test_an_error_in_the_diagnosis_is_shown_after_the_failure(pytester, models_dir):
    """Run before the failure's report, outside its handling, a diagnosis that raised hid the
    failure's own text (its first failing operator and hint) (a review)."""
    pytester.makepyfile(test_one=ONE_FAILING)
    pytester.makeconftest(BOOM)
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose",
                                "--accuracy-report=rep")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*first failing operator*", "*During handling of the above "
                                 "exception, another exception occurred*",
                                 "*RuntimeError: boom inside the diagnosis"])
    run = json.loads((pytester.path / "rep" / "test_one.py--test_over" / "compare.json")
                     .read_text())["run"]
    assert run["first_failing_op"] and run["diagnosis"] is None


def test_a_job_cancelled_in_the_diagnosis_keeps_the_checks_reports(pytester, models_dir):
    """The set moved into place after the diagnosis: a SIGTERM in its conversions (minutes on
    a device) left only a staging folder (a review). It is in place first, whole."""
    pytester.makepyfile(test_one=ONE_FAILING)
    pytester.makeconftest(TERMINATED)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--accuracy-diagnose",
                                           "--accuracy-report=rep")
    assert result.ret != 0
    folder = pytester.path / "rep" / "test_one.py--test_over"
    assert {"compare.csv", "compare.json", "report.html", "tensors"} <= {
        p.name for p in folder.iterdir()}
    assert not [p for p in (pytester.path / "rep").iterdir() if ".partial-" in p.name]
    assert json.loads((folder / "compare.json").read_text())["run"]["passed"] is False

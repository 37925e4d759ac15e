"""The ascend-accuracy summary lines: plurals, grid, failure lines, cache counters."""
import pytest

from pytest_ascend_accuracy.plugin.session import CheckRecord, GoldenWrite
from pytest_ascend_accuracy.plugin.terminal_report import plural, summary_lines


def test_plural():
    assert [plural(n, "model") for n in (0, 1, 2)] == ["0 models", "1 model", "2 models"]
    assert plural(1, "miss") == "1 miss" and plural(3, "miss") == "3 misses"


def rec(nodeid, model, mode, passed, **kw):
    return CheckRecord(nodeid=nodeid, model=model, mode=mode, passed=passed, **kw)


def test_summary_lines():
    records = [
        rec("t.py::test_a[default]", "overflow", "default", False, first_op="norm",
            first_value=0.412345678, threshold=0.95),
        rec("t.py::test_a[high_precision]", "overflow", "high_precision", True),
        rec("t.py::test_b", "mlp", "default", True),
        rec("t.py::test_c", "mlp", "default", False, first_op="fc1/Add", first_value=None),
    ]
    lines = summary_lines(records, backend="emulator backend", cache_stats={"hits": 1, "misses": 2},
                          golden_writes=[GoldenWrite("golden/mlp", "written (missing)")])
    assert lines == [
        "backend: emulator backend",
        "4 accuracy checks: 2 passed, 2 failed (2 models x 2 modes)",
        "  model     default     high_precision",
        "  overflow  FAILED      passed",
        "  mlp       1/2 passed  -",
        "FAILED t.py::test_a[default] [overflow, default]: first failing op norm "
        "(cosine 0.412346 < 0.95)",
        "FAILED t.py::test_c [mlp, default]: first failing op fc1/Add "
        "(cosine undefined: NaN/Inf or not compared)",
        "cache: 1 hit, 2 misses",
        "1 golden file written:",
        "  golden/mlp: written (missing)",
    ]


def test_singular_and_rebuilt():
    lines = summary_lines([rec("t.py::t", "m", "default", True)], backend="b",
                          cache_stats={"hits": 0, "misses": 1, "rebuilt": 1}, report_dir="out")
    assert lines[1] == "1 accuracy check: 1 passed, 0 failed (1 model x 1 mode)"
    assert lines[-2:] == ["cache: 0 hits, 1 miss, 1 corrupt entry rebuilt", "reports: out"]


def test_error_metric_failure_line():
    lines = summary_lines([rec("t.py::t", "m", "default", False, metric="max_abs", threshold=0.5,
                               first_op="x", first_value=1.25)], backend="b", cache_stats={})
    assert "FAILED t.py::t [m, default]: first failing op x (max_abs 1.250000 > 0.5)" in lines


PER_OP = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.3, per_op={"norm": 0.5})
def test_strict_norm(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/overflow.onnx")
    actual = ascend_model("models/overflow.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/overflow.onnx", inputs))


@accuracy(per_op={"relu1": 0.9999999})
def test_tight(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/passing_mlp.onnx")
    actual = ascend_model("models/passing_mlp.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/passing_mlp.onnx", inputs))
'''


def test_the_summary_names_the_threshold_the_first_failure_failed(pytester, models_dir):
    """The summary line printed the marker's threshold (cosine 0.396693 < 0.3) where a per_op
    one failed the op (< 0.5), and thresholds printed with :g read 'cosine 1.000000 < 1'
    (review helper)."""
    pytester.makepyfile(test_po=PER_OP)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=2)
    run.stdout.fnmatch_lines(["accuracy FAILED: * fail cosine >= 0.3 or their per-op threshold "
                              "(1 op) or the scale guard *; *"])
    run.stdout.fnmatch_lines(["*test_strict_norm [[]overflow, default[]]: first failing op norm "
                              "(cosine 0.396693 < 0.5)"])
    tight = [line for line in run.outlines if "test_tight [" in line and "first failing op" in line]
    assert tight and "< 0.9999999)" in tight[0] and "1.000000 <" not in tight[0], tight


def test_a_failed_check_is_shown_beside_its_tests_outcome():
    from pytest_ascend_accuracy.plugin.terminal_report import check_status

    records = [rec("t.py::test_x", "m", "default", False, first_op="a", first_value=0.1),
               rec("t.py::test_c", "m", "default", False, first_op="a", first_value=0.1),
               rec("t.py::test_f", "m", "default", False, first_op="a", first_value=0.1),
               rec("t.py::test_p", "m", "high_precision", True)]
    outcomes = {"t.py::test_x": "xfailed", "t.py::test_c": "passed", "t.py::test_f": "failed",
                "t.py::test_p": "passed"}
    assert [check_status(r, outcomes) for r in records] == ["xfail", "caught", "FAILED", "passed"]
    assert check_status(records[0], {}) == "FAILED"  # outcome unknown: as before
    lines = summary_lines(records, backend="b", cache_stats={}, outcomes=outcomes)
    assert lines[1] == ("4 accuracy checks: 1 passed, 3 failed, of them 1 in an xfailed test and "
                        "1 caught by a passing test (1 model x 2 modes)")
    assert lines[2:4] == ["  model  default     high_precision", "  m      0/3 passed  passed"]
    assert lines[4:7] == [
        "CAUGHT t.py::test_c [m, default] (the test passed): first failing op a (cosine 0.100000 < 0.95)",
        "FAILED t.py::test_f [m, default]: first failing op a (cosine 0.100000 < 0.95)",
        "XFAIL t.py::test_x [m, default]: first failing op a (cosine 0.100000 < 0.95)"]


def test_each_tests_outcome_comes_from_the_reporters_stats():
    from types import SimpleNamespace as R

    from pytest_ascend_accuracy.plugin.terminal_report import outcomes_by_test

    stats = {"passed": [R(nodeid="a"), R(nodeid="e")], "xfailed": [R(nodeid="x")],
             "xpassed": [R(nodeid="xp")], "error": [R(nodeid="e")], "": [R(nodeid="a")],
             "warnings": [R(message="w")]}
    assert outcomes_by_test(stats) == {"a": "passed", "e": "failed", "x": "xfailed", "xp": "xpassed"}


EXPECTED_FAILURES = '''
import pytest
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
from pytest_ascend_accuracy.report.assertion import AccuracyFailure


def check(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/overflow.onnx")
    check_accuracy(ascend_model("models/overflow.onnx").run(inputs),
                   golden_dump("models/overflow.onnx", inputs))


@accuracy(threshold=0.95)
def test_caught(ascend_model, golden_dump, check_accuracy):
    with pytest.raises(AccuracyFailure):
        check(ascend_model, golden_dump, check_accuracy)


@pytest.mark.xfail(reason="known fp16 overflow", strict=True)
@accuracy(threshold=0.95)
def test_known(ascend_model, golden_dump, check_accuracy):
    check(ascend_model, golden_dump, check_accuracy)


@accuracy(threshold=0.95)
def test_broken(ascend_model, golden_dump, check_accuracy):
    check(ascend_model, golden_dump, check_accuracy)
'''


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_summary_agrees_with_pytest_on_tests_that_expect_a_failure(pytester, models_dir,
                                                                       workers):
    """A test that caught its check's AccuracyFailure passed for pytest while the section said
    'FAILED ...', and so did an xfailed one: a CI grep for FAILED failed the build."""
    pytester.makepyfile(test_expected=EXPECTED_FAILURES)
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", *workers)
    run.assert_outcomes(passed=1, xfailed=1, failed=1)
    run.stdout.fnmatch_lines([
        "3 accuracy checks: 0 passed, 3 failed, of them 1 in an xfailed test and 1 caught by a "
        "passing test (1 model x 1 mode)",
        "  overflow  0/3 passed",
        "FAILED test_expected.py::test_broken [[]overflow, default[]]: first failing op norm *",
        "CAUGHT test_expected.py::test_caught [[]overflow, default[]] (the test passed): first "
        "failing op norm *",
        "XFAIL test_expected.py::test_known [[]overflow, default[]]: first failing op norm *"])
    assert [line for line in run.outlines if line.startswith("FAILED ")] == [
        line for line in run.outlines if line.startswith("FAILED test_expected.py::test_broken")]


def _report(nodeid, keywords, longrepr, when="call", outcome="failed"):
    """A failed report as the plugin's makereport hook leaves it: ``MARKED`` for a test that
    has the accuracy marker (``keywords`` holds "accuracy")."""
    from _pytest.reports import TestReport

    from pytest_ascend_accuracy.plugin.terminal_report import MARKED

    extra = {MARKED: True} if "marker:accuracy" in keywords else {}
    return TestReport(nodeid, ("t.py", 1, nodeid), {k: 1 for k in keywords}, outcome, longrepr,
                      when, **extra)


def test_accuracy_tests_that_failed_without_a_check_are_counted_and_named():
    """A stored golden refused before comparing: the section read "1 passed, 0 failed" beside
    pytest's failure. Reports as xdist's controller gets them (serialized by a worker)."""
    from _pytest.reports import TestReport

    from pytest_ascend_accuracy.plugin.terminal_report import failed_before_check

    def via_xdist(report):  # what a worker sends and the controller rebuilds
        return TestReport._from_json(report._to_json())

    refused = _report("t.py::test_refused", ["marker:accuracy", "test_refused"],
                      "ascend-accuracy configuration error: golden/mlp: this stored golden was "
                      "written from another model\nFix: run the test again with --accuracy-regen")
    # not @accuracy, in a folder named accuracy/ (the report's keywords hold parents' names)
    plain = _report("accuracy/t.py::test_plain", ["accuracy", "test_plain"], "AssertionError")
    checked = _report("t.py::test_checked", ["marker:accuracy"], "accuracy FAILED: ...")
    setup = _report("t.py::test_setup", ["marker:accuracy"], "E   " + "x" * 300, when="setup")
    stats = {"failed": [via_xdist(r) for r in (refused, plain, checked)],
             "error": [via_xdist(setup)]}
    unchecked = failed_before_check(stats, ["t.py::test_checked"])
    assert unchecked == [
        ("t.py::test_refused", "ascend-accuracy configuration error: golden/mlp: this stored "
                               "golden was written from another model", "FAILED"),
        ("t.py::test_setup", "E   " + "x" * 193 + "...", "ERROR")]  # pytest's word for it
    lines = summary_lines([rec("t.py::test_checked", "mlp", "default", True)], backend="b",
                          cache_stats={}, unchecked=unchecked)
    assert lines[1] == ("1 accuracy check: 1 passed, 0 failed (1 model x 1 mode); 2 @accuracy "
                        "tests failed without a check verdict")
    assert lines[4] == ("FAILED t.py::test_refused: no check verdict: ascend-accuracy "
                        "configuration error: golden/mlp: this stored golden was written from "
                        "another model")
    alone = summary_lines([], backend="b", cache_stats={}, unchecked=unchecked[:1])
    assert alone[1] == "no accuracy check ran: 1 @accuracy test failed without a check verdict"
    dataset = {"nodeid": "t.py::test_ds", "passed": True, "model": "m", "mode": "default",
               "metric": "top1", "device": 1.0, "reference": 1.0, "max_drop": 0.01,
               "samples": 4, "flipped": 0}
    beside = summary_lines([], backend="b", cache_stats={}, unchecked=unchecked[:1],
                           dataset_records=[dataset])
    assert beside[1:4] == ["1 @accuracy test failed without a check verdict",
                           "FAILED t.py::test_refused: no check verdict: ascend-accuracy "
                           "configuration error: golden/mlp: this stored golden was written from "
                           "another model", "1 dataset check: 1 passed, 0 failed"]


def test_an_unmarked_failing_test_in_an_accuracy_folder_is_not_listed(pytester):
    """The marker was read from the report's keywords, which hold every parent's name: any
    failing test under accuracy/ was listed as an @accuracy test without a verdict (review)."""
    pytester.mkdir("accuracy")
    (pytester.path / "accuracy" / "test_plain.py").write_text("def test_unrelated():\n"
                                                              "    assert 1 == 2\n")
    result = pytester.runpytest("accuracy")
    result.assert_outcomes(failed=1)
    result.stdout.no_fnmatch_line("*no check verdict*")


def test_a_file_one_test_wrote_and_others_found_unchanged_counts_the_writer_only():
    """One test wrote a missing golden, three found it unchanged: "written (missing) (by 4
    tests)" counted all four (a review); the tests that changed it are the ones counted."""
    from pytest_ascend_accuracy.plugin.terminal_report import written_file_lines

    writes = [GoldenWrite("golden/mlp", "written (missing)", "t.py::a")] + [
        GoldenWrite("golden/mlp", "unchanged (--accuracy-regen-all: regenerated the same bytes, "
                    "left as it was)", f"t.py::{k}") for k in "bcd"]
    assert written_file_lines(writes) == ["1 golden file written:",
                                          "  golden/mlp: written (missing)"]
    writes.append(GoldenWrite("golden/mlp", "written (missing)", "t.py::e"))
    assert written_file_lines(writes)[1] == "  golden/mlp: written (missing) (by 2 tests)"


def test_the_reports_line_names_the_index_only_where_it_lists_this_run(tmp_path):
    # a review: another session writing into the same folder ended later and rewrote the
    # index; the line still said it held this run's folders
    import json

    (tmp_path / "index.html").write_text("<html>")
    (tmp_path / "index.json").write_text(json.dumps({"run": {"id": "other"}}))
    args = dict(backend="b", cache_stats={}, report_dir=str(tmp_path))
    assert summary_lines([rec("t.py::t", "m", "default", True)], run_id="mine", **args)[-1] == \
        f"reports: {tmp_path}"
    assert summary_lines([rec("t.py::t", "m", "default", True)], run_id="other", **args)[-1] == \
        f"reports: {tmp_path} (this run's folders: {tmp_path / 'index.html'})"

"""Under ``--tb=no``, ``--tb=line`` and ``--tb=native`` pytest renders a failure itself; for an
error of this package its one line (the short summary's, ``--tb=line``'s) is the error's own
text, as under the default style. It read ``FAILED test_x.py::test_overflow -
pytest_ascend_accuracy.report.assertion.AccuracyF...``: the verdict cut off by the module
path (a CI user's trial)."""
import pytest

TESTS = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95)
def test_overflow(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/overflow.onnx")
    check_accuracy(ascend_model("models/overflow.onnx").run(inputs),
                   golden_dump("models/overflow.onnx", inputs))


@accuracy(threshold=0.95)
def test_mistake(ascend_model, golden_dump, check_accuracy):
    ascend_model("models/nosuch.onnx")
'''


@pytest.mark.parametrize("style", ["no", "line", "native", "auto"])
def test_the_one_line_is_the_errors_own_text(pytester, models_dir, style, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")  # summary lines whole
    pytester.makepyfile(test_x=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", f"--tb={style}", "-rf")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["FAILED test_x.py::test_overflow - accuracy FAILED: *",
                                 "FAILED test_x.py::test_mistake - *ONNX model*"])
    result.stdout.no_fnmatch_line("FAILED * - pytest_ascend_accuracy.*")
    if style == "line":
        result.stdout.fnmatch_lines(["*/test_x.py:8: accuracy FAILED: *first failure*",
                                     "*.py:*: ascend_model: ONNX model*"])


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_under_ci_the_summary_and_junit_give_the_headline_once(pytester, models_dir, monkeypatch,
                                                               workers):
    """Under ``CI`` pytest's short summary prints a failure's whole message: the report block,
    a plain string, was printed a second time there in every CI log, and JUnit's failure
    ``message`` was the whole block too."""
    import xml.etree.ElementTree as ET

    monkeypatch.setenv("CI", "true")
    pytester.makepyfile(test_x=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=j.xml", *workers)
    result.assert_outcomes(failed=2)
    out = result.stdout.lines
    assert sum(line.startswith("first failing operator") for line in out) == 1, out
    summary = out[next(k for k, line in enumerate(out) if "short test summary info" in line):]
    assert [line for line in summary if line.startswith("FAILED test_x.py::test_overflow")] == [
        next(line for line in summary if line.startswith("FAILED test_x.py::test_overflow"))]
    assert not any(line.startswith(("first failing", "  dump name")) for line in summary)
    failures = {c.get("name"): c.find("failure") for c in ET.parse(pytester.path / "j.xml")
                .iter("testcase")}
    message = failures["test_overflow"].get("message")
    assert message.startswith("accuracy FAILED: ") and "\n" not in message
    assert "first failing operator" in failures["test_overflow"].text  # the block, whole


def test_under_tb_no_an_errors_later_lines_stay_in_the_summary(pytester, models_dir,
                                                               monkeypatch, stored_golden_test):
    """``--tb=no`` prints no failure section: the short summary (whole under ``CI``) is the only
    place an error's ``Fix:`` line can appear, and cutting the crash line to its first line
    lost it (a review)."""
    import json

    monkeypatch.setenv("CI", "true")
    pytester.makepyfile(test_stored=stored_golden_test)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)  # written (missing)
    record = pytester.path / "golden" / "mlp" / "golden.json"
    record.write_text(json.dumps(dict(json.loads(record.read_text()), record_version=3,
                                      written_by="pytest-ascend-accuracy 9.1.0")))
    for style in ("no", "line", "auto"):
        result = pytester.runpytest("-p", "no:cacheprovider", f"--tb={style}")
        result.assert_outcomes(failed=1)
        fixes = [line for line in result.outlines if line.startswith("Fix: upgrade")]
        assert fixes, (style, result.outlines)

"""``--accuracy-diagnose`` runs no diagnosis for a test pytest expects to fail (xfail): its
failure text, where the diagnosis goes, is not shown for an xfailed test, and each diagnosis
costs minutes of conversions on a device. It says so in the failure (``-rx``'s reason stays
pytest's); ``--runxfail`` diagnoses it, and an xfail whose ``raises`` does not cover the
accuracy failure leaves it a real failure, diagnosed."""

import pytest

TEST = '''
import pytest
from pytest_ascend_accuracy import accuracy


@pytest.mark.xfail({args})
@accuracy(threshold=0.95)
def test_overflow(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/overflow.onnx")
    actual = ascend_model("models/overflow.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/overflow.onnx", inputs))
'''


def _diagnosed(run, root) -> bool:
    """Whether a diagnosis ran: its text in the failure, its fix folder in the report."""
    said = "diagnosis (--accuracy-diagnose, " in run.stdout.str()
    written = any(p.name == "diagnosis" for p in (root / "rep").rglob("*") if p.is_dir())
    assert said is written or "xfailed" in run.stdout.str()
    return written


@pytest.mark.parametrize("args, extra, outcome, diagnosed", [
    ("", [], {"xfailed": 1}, False),
    ("reason='known overflow'", ["--runxfail"], {"failed": 1}, True),
    ("raises=ZeroDivisionError", [], {"failed": 1}, True),
], ids=["xfail", "runxfail", "other-raises"])
def test_an_expected_failure_is_not_diagnosed(pytester, models_dir, args, extra, outcome,
                                              diagnosed):
    pytester.makepyfile(test_x=TEST.format(args=args))
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose",
                             "--accuracy-report=rep", *extra)
    run.assert_outcomes(**outcome)
    assert _diagnosed(run, pytester.path) is diagnosed, run.stdout.str()
    if not diagnosed:
        saved = next((pytester.path / "rep").rglob("compare.json")).read_text()
        assert '"diagnosis": null' in saved
        run.stdout.fnmatch_lines(["*1 failed, of them 1 in an xfailed test*"])

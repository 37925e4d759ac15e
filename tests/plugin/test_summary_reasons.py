"""The reason the summary and JUnit give a marked test that failed with no check verdict is the
plugin's own wording of its error, whatever --tb is: ``--tb=no`` gave them pytest's
``pytest_ascend_accuracy.errors.ConfigError: ...`` instead of ``ascend-accuracy configuration
error: ...``, so dashboards keyed on it differed between CI jobs (a CI trial)."""
import xml.etree.ElementTree as ET

import pytest

TEST = '''
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_missing_model(ascend_model):
    ascend_model("models/typo.onnx")
'''


@pytest.mark.parametrize("args", [(), ("--tb=no",), ("--tb=line",)],
                         ids=["auto", "tb-no", "tb-line"])  # (xdist sends the reason as it
# sends the marked flag, ``MARKED``: a report attribute)
def test_the_reason_is_the_same_under_every_tb(pytester, args):
    pytester.makepyfile(test_r=TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=j.xml", *args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED test_r.py::test_missing_model: no check verdict: "
                                 "ascend-accuracy configuration error: ascend_model: ONNX model "
                                 "'models/typo.onnx' not found*"])
    case = next(ET.parse(pytester.path / "j.xml").iter("testcase"))
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["accuracy_first_failing_reason"].startswith(
        "no check verdict: ascend-accuracy configuration error: ascend_model: ONNX model")

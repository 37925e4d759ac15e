"""A check failing by NaN/Inf on one side only records no ``accuracy_first_failing_cosine``: the
cosine of its finite positions, 1.000000 beside "NaN/Inf on one side at 1 position" on
basic-pitch's Log, read on a dashboard as a perfect op (audit 34). Its reason says why."""
import xml.etree.ElementTree as ET

from tests.compare.test_zero_singular import TEST, floored_log


def test_a_nan_inf_failure_records_its_reason_and_no_cosine(pytester):
    floored_log(pytester.path / "floored.onnx")
    pytester.makepyfile(test_padded=TEST.format(
        imports="from pytest_ascend_accuracy import accuracy", marker="@accuracy(threshold=0.99)"))
    result = pytester.runpytest("-p", "no:randomly", "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)
    props = {p.get("name"): p.get("value")
             for p in ET.parse(pytester.path / "junit.xml").iter("property")}
    assert props["accuracy_first_failing_op"] == "log"
    assert "NaN/Inf on one side" in props["accuracy_first_failing_reason"], props
    assert "accuracy_first_failing_cosine" not in props, props

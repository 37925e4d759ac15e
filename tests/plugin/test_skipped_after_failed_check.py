"""A test that catches its check's failure and calls ``pytest.skip`` is skipped for pytest, and
the ``ascend-accuracy`` section says so: ``SKIPPED ... (the test was skipped)``, grid cell
``skipped``, counted on the count line, as ``XFAIL``/``CAUGHT`` are. A CI trial read "overflow
FAILED / FAILED tests/test_outcomes.py::test_skip_after_fail ..." beside pytest's "1 skipped",
rc 0: a CI grep for FAILED failed a green build. Accuracy, dataset and pre-processing checks
alike; JUnit keeps ``<kind>_passed=false`` (a check failed: README) beside pytest's
``<skipped>``."""
import xml.etree.ElementTree as ET

import onnx

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp
from pytest_ascend_accuracy.plugin.terminal_report import outcomes_by_test
from pytest_ascend_accuracy.testing import models as tiny_models

BAD_AIPP = imagenet_aipp(src_hw=(16, 16)).replace("var_reci_chn_0: 0.0171248",
                                                  "var_reci_chn_0: 58.395")

TESTS = '''
import numpy as np
import pytest
from pytest_ascend_accuracy import AccuracyFailure, accuracy
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

OVF = "models/overflow.onnx"
SAMPLES = [{"x": np.random.default_rng([7, i]).random((1, 16), dtype=np.float32)}
           for i in range(2)]


@accuracy(threshold=0.95)
def test_acc_skip(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(OVF)
    try:
        check_accuracy(ascend_model(OVF).run(inputs, dump=True), golden_dump(OVF, inputs))
    except AccuracyFailure:
        pytest.skip("no NPU fix yet")


@accuracy(threshold=0.95)
def test_ds_skip(ascend_model, check_dataset):
    try:
        check_dataset(ascend_model(OVF), SAMPLES, metric="agreement", max_drop=0.01)
    except AccuracyFailure:
        pytest.skip("no NPU fix yet")


@accuracy()
def test_prep_skip(ascend_model, check_preprocessing):
    try:
        check_preprocessing(ascend_model("models/net.onnx", aipp="bad.cfg"),
                            random_rgb(1, 16, 16), reference=imagenet_reference)
    except AccuracyFailure:
        pytest.skip("no NPU fix yet")
'''


def test_a_failed_check_of_a_skipped_test_is_skipped_not_failed(pytester):
    tiny_models.save_models(pytester.path / "models", ["overflow"])
    onnx.save(tiny_models.conv_bn_relu(), str(pytester.path / "models" / "net.onnx"))
    (pytester.path / "bad.cfg").write_text(BAD_AIPP)
    pytester.makepyfile(test_skips=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=j.xml")
    result.assert_outcomes(skipped=3)
    out = result.stdout.str()
    section = out[out.index("ascend-accuracy"):]
    assert "FAILED" not in section, section
    result.stdout.fnmatch_lines([
        "1 accuracy check: 0 passed, 1 failed, of them 1 in a skipped test (1 model x 1 mode)",
        "  overflow  skipped",
        "SKIPPED test_skips.py::test_acc_skip [[]overflow, default[]] (the test was skipped): "
        "first failing op *",
        "1 pre-processing check: 0 passed, 1 failed, of them 1 in a skipped test",
        "SKIPPED test_skips.py::test_prep_skip (the test was skipped): AIPP file bad.cfg* "
        "disagrees with the reference pre-processing*",
        "1 dataset check: 0 passed, 1 failed, of them 1 in a skipped test",
        "SKIPPED test_skips.py::test_ds_skip [[]overflow, default[]] (the test was skipped): "
        "agreement drop *"])
    cases = {c.get("name"): c for c in ET.parse(pytester.path / "j.xml").iter("testcase")}
    for name, kind in (("test_acc_skip", "accuracy"), ("test_ds_skip", "dataset"),
                       ("test_prep_skip", "preprocessing")):
        props = {p.get("name"): p.get("value") for p in cases[name].iter("property")}
        assert props[f"{kind}_passed"] == "false", (name, props)
        assert cases[name].find("skipped") is not None


class _Report:
    def __init__(self, nodeid):
        self.nodeid = nodeid


def test_outcomes_know_a_skipped_test_and_a_later_failure_wins():
    """Skipped in its call, then an error in teardown: pytest counts the error."""
    stats = {"skipped": [_Report("s"), _Report("se")], "error": [_Report("se")]}
    assert outcomes_by_test(stats) == {"s": "skipped", "se": "failed"}

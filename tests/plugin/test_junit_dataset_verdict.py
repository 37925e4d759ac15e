"""A test's JUnit ``dataset_*`` and ``preprocessing_*`` properties are one verdict that agrees
with its outcome, as its ``accuracy_*`` ones are (pytester + the XML parsed).

A test of two ``check_dataset`` calls (or two ``check_preprocessing``) carried one set per
check, so ``dataset_passed`` repeated and a failing test read ``dataset_passed=true`` first;
one that failed after its dataset check passed read only ``true``.
"""

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp
from pytest_ascend_accuracy.plugin.junit_verdict import one_verdict
from pytest_ascend_accuracy.testing import models as tiny_models

from junit_report_props import junit_properties, names

GOOD = imagenet_aipp(src_hw=(16, 16))
BAD = GOOD.replace("var_reci_chn_0: 0.0171248", "var_reci_chn_0: 58.395")  # the std

TESTS = '''
import numpy as np
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

MLP, OVF = "models/passing_mlp.onnx", "models/overflow.onnx"
PASSING = [make_inputs(MLP, seed=s) for s in range(3)]
FAILING = [{"x": np.random.default_rng([7, i]).random((1, 16), dtype=np.float32)}
           for i in range(4)]


@accuracy(threshold=0.95)
def test_ds_pass_then_fail(ascend_model, check_dataset):
    check_dataset(ascend_model(MLP), PASSING, metric="agreement")
    check_dataset(ascend_model(OVF), FAILING, metric="agreement")


@accuracy(threshold=0.95)
def test_ds_one(ascend_model, check_dataset):
    check_dataset(ascend_model(MLP), PASSING, metric="agreement")


@accuracy(threshold=0.95)
def test_ds_one_then_assert(ascend_model, check_dataset):
    check_dataset(ascend_model(MLP), PASSING, metric="agreement")
    assert 1 == 2, "the test's own assert"


@accuracy()
def test_pp_pass_then_fail(ascend_model, check_preprocessing):
    for cfg in ("good.cfg", "bad.cfg"):
        check_preprocessing(ascend_model("models/net.onnx", aipp=cfg), random_rgb(2, 16, 16),
                            reference=imagenet_reference)
'''

DATASET = ["dataset_metric", "dataset_reference", "dataset_device", "dataset_drop",
           "dataset_max_drop", "dataset_samples", "dataset_flipped", "dataset_passed"]


def test_dataset_and_preprocessing_properties_state_one_verdict(pytester):
    import onnx

    tiny_models.save_models(pytester.path / "models", ["passing_mlp", "overflow"])
    onnx.save(tiny_models.conv_bn_relu(), str(pytester.path / "models" / "net.onnx"))
    (pytester.path / "good.cfg").write_text(GOOD)
    (pytester.path / "bad.cfg").write_text(BAD)
    pytester.makepyfile(test_checks=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml")
    result.assert_outcomes(passed=1, failed=3)
    props = junit_properties(pytester.path / "junit.xml")

    failing = props["test_ds_pass_then_fail"]
    got = dict(failing)
    assert names(failing).count("dataset_passed") == 1 == names(failing).count(
        "dataset_metric")
    # the unprefixed set is the failing check's, in the names a single check records
    assert names(failing)[:len(DATASET)] == DATASET
    assert got["dataset_passed"] == "false" and got["dataset_samples"] == "4"
    assert got["dataset_checks"] == "2"
    assert (got["dataset_check1_samples"], got["dataset_check1_passed"]) == ("3", "true")
    assert (got["dataset_check2_samples"], got["dataset_check2_passed"]) == ("4", "false")
    assert "dataset_first_failing_reason" not in got  # the failed check is the verdict

    assert names(props["test_ds_one"]) == DATASET  # one check: as it was recorded
    assert dict(props["test_ds_one"])["dataset_passed"] == "true"

    after = dict(props["test_ds_one_then_assert"])
    assert after["dataset_passed"] == "false" and "dataset_checks" not in after
    assert after["dataset_first_failing_reason"] == (
        "its checks passed, then the test failed: AssertionError: the test's own assert")

    pre = props["test_pp_pass_then_fail"]
    got = dict(pre)
    assert names(pre).count("preprocessing_passed") == 1
    assert names(pre)[0] == "preprocessing_passed"
    assert (got["preprocessing_passed"], got["preprocessing_aipp"]) == ("false", "bad.cfg:1")
    assert got["preprocessing_corrected"] == "bad.corrected.cfg"
    assert got["preprocessing_checks"] == "2"
    assert (got["preprocessing_check1_aipp"], got["preprocessing_check1_passed"]) == (
        "good.cfg:1", "true")
    assert (got["preprocessing_check2_aipp"], got["preprocessing_check2_passed"]) == (
        "bad.cfg:1", "false")
    # the accuracy verdict of a test without an accuracy check: the failed check's own line
    assert got["accuracy_first_failing_reason"].startswith("pre-processing check FAILED")


def test_each_kind_is_rewritten_on_its_own_and_once():
    acc = [("accuracy_model", "a"), ("accuracy_mode", "default"), ("accuracy_passed", "true")]
    ds1 = [("dataset_metric", "top1"), ("dataset_passed", "true")]
    ds2 = [("dataset_metric", "top5"), ("dataset_passed", "false")]
    props = [("mine", 1)] + ds1 + acc + ds2
    once = one_verdict(props, "DatasetFailure: top5 drop", marked=True)
    assert once == [("mine", 1)] + ds2 + [
        ("dataset_checks", "2"), ("dataset_check1_metric", "top1"),
        ("dataset_check1_passed", "true"), ("dataset_check2_metric", "top5"),
        ("dataset_check2_passed", "false"),
        # the accuracy check passed, the test failed by its dataset check: that check's line
        ("accuracy_model", "a"), ("accuracy_mode", "default"), ("accuracy_passed", "false"),
        ("accuracy_first_failing_reason", "DatasetFailure: top5 drop")]
    assert one_verdict(once, "DatasetFailure: top5 drop", marked=True) == once
    # a passing dataset check of a test its accuracy check failed: the accuracy line
    failed = acc[:2] + [("accuracy_passed", "false")]
    assert one_verdict(failed + ds1, "AccuracyFailure: norm", marked=True)[3:] == [
        ("dataset_metric", "top1"), ("dataset_passed", "false"),
        ("dataset_first_failing_reason", "AccuracyFailure: norm")]
    # no dataset check: no dataset set is made up
    assert one_verdict(acc, "AssertionError", marked=True)[3:] == [
        ("accuracy_first_failing_reason", "its checks passed, then the test failed: "
                                          "AssertionError")]

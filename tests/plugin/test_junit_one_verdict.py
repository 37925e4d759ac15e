"""A test's JUnit ``accuracy_*`` properties agree with its outcome (pytester + the XML parsed).

A test of two checks carried one set per check, ``accuracy_passed=true`` first where its second
check failed; one that failed after its checks passed said only ``true``; and an op failing
both its threshold and the scale guard had no ``accuracy_first_failing_reason``.
"""

import pytest

from pytest_ascend_accuracy.plugin.junit_verdict import one_verdict

from junit_report_props import junit_properties, names

TESTS = '''
import pytest

from pytest_ascend_accuracy import AccuracyFailure, accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

MLP, OVF = "models/passing_mlp.onnx", "models/overflow.onnx"


def _check(ascend_model, golden_dump, check_accuracy, model):
    inputs = make_inputs(model)
    check_accuracy(ascend_model(model).run(inputs), golden_dump(model, inputs))


@accuracy(threshold=0.95)
def test_pass_then_fail(ascend_model, golden_dump, check_accuracy):
    _check(ascend_model, golden_dump, check_accuracy, MLP)
    _check(ascend_model, golden_dump, check_accuracy, OVF)


@accuracy(threshold=0.95)
def test_both_pass(ascend_model, golden_dump, check_accuracy):
    _check(ascend_model, golden_dump, check_accuracy, MLP)
    _check(ascend_model, golden_dump, check_accuracy, MLP)


@accuracy(threshold=0.95)
def test_checks_pass_then_assert(ascend_model, golden_dump, check_accuracy):
    _check(ascend_model, golden_dump, check_accuracy, MLP)
    assert 1 == 2, "the test's own assert"


@accuracy(threshold=0.95)
def test_caught(ascend_model, golden_dump, check_accuracy):
    with pytest.raises(AccuracyFailure):
        _check(ascend_model, golden_dump, check_accuracy, OVF)
    _check(ascend_model, golden_dump, check_accuracy, MLP)
'''


def _run(pytester, *args):
    pytester.makepyfile(test_checks=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml", *args)
    result.assert_outcomes(passed=2, failed=2)
    return junit_properties(pytester.path / "junit.xml")


def test_each_tests_properties_state_one_verdict_that_agrees_with_its_outcome(pytester,
                                                                              models_dir):
    _assert_one_verdict(_run(pytester))


def test_xdist_workers_write_the_same_properties(pytester, models_dir):
    """A worker's reports reach the controller's junitxml serialised: one worker is that path
    (two cost 6.5 s here, each converting every model)."""
    pytest.importorskip("xdist")
    _assert_one_verdict(_run(pytester, "-n", "1",
                             "-W", "ignore:Benchmarks are automatically disabled"))


def _assert_one_verdict(props):
    failing = props["test_pass_then_fail"]
    got = dict(failing)
    assert names(failing).count("accuracy_passed") == 1 == names(failing).count(
        "accuracy_model")
    # the test's set describes its failing check, first, as a single check's does
    assert names(failing)[:3] == ["accuracy_model", "accuracy_mode", "accuracy_passed"]
    assert (got["accuracy_model"], got["accuracy_passed"]) == ("overflow", "false")
    assert got["accuracy_first_failing_op"] == "norm"
    # norm fails cosine and the scale guard: the reason says both
    assert got["accuracy_first_failing_reason"] == (
        "cosine < 0.95 and the scale guard: L2 norm 0.3998x the golden's, outside 0.5-2x")
    assert "keep_dtype=['norm']" in got["accuracy_hint"]
    # then each check's own set, indexed in check order
    assert got["accuracy_checks"] == "2"
    assert (got["accuracy_check1_model"], got["accuracy_check1_passed"]) == ("passing_mlp",
                                                                             "true")
    assert (got["accuracy_check2_model"], got["accuracy_check2_passed"]) == ("overflow", "false")
    assert got["accuracy_check2_first_failing_op"] == "norm"
    assert "accuracy_check1_first_failing_op" not in got

    both = dict(props["test_both_pass"])
    assert (both["accuracy_passed"], both["accuracy_model"], both["accuracy_checks"]) == (
        "true", "passing_mlp", "2")
    assert both["accuracy_check2_passed"] == "true"

    after = dict(props["test_checks_pass_then_assert"])  # one check: no indexed set
    assert after["accuracy_passed"] == "false" and "accuracy_checks" not in after
    assert after["accuracy_first_failing_reason"].startswith(
        "its checks passed, then the test failed: AssertionError: the test's own assert")

    caught = dict(props["test_caught"])  # a failed check, caught: the summary's CAUGHT
    assert (caught["accuracy_passed"], caught["accuracy_model"]) == ("false", "overflow")
    assert caught["accuracy_check2_passed"] == "true"


CHECK = [("accuracy_model", "a"), ("accuracy_mode", "default"), ("accuracy_passed", "true")]


def test_one_verdict_leaves_other_properties_where_they_were_and_is_idempotent():
    failed = [("accuracy_model", "b"), ("accuracy_mode", "default"),
              ("accuracy_passed", "false"), ("accuracy_hint", "h")]
    props = [("mine", 1)] + CHECK + [("dataset_passed", "true")] + failed + [("last", 2)]
    once = one_verdict(props, "AccuracyFailure", marked=True)
    assert once == [("mine", 1)] + failed + [
        ("accuracy_checks", "2"), ("accuracy_check1_model", "a"),
        ("accuracy_check1_mode", "default"), ("accuracy_check1_passed", "true"),
        ("accuracy_check2_model", "b"), ("accuracy_check2_mode", "default"),
        ("accuracy_check2_passed", "false"), ("accuracy_check2_hint", "h"),
        ("dataset_passed", "true"), ("last", 2)]
    assert one_verdict(once, "AccuracyFailure", marked=True) == once


def test_a_failure_no_accuracy_check_made_is_said_in_its_own_words():
    assert one_verdict(CHECK) == CHECK  # a passing test: as recorded
    assert one_verdict([], "ConfigError: x", marked=True) == [
        ("accuracy_passed", "false"), ("accuracy_first_failing_reason",
                                       "no check verdict: ConfigError: x")]
    assert one_verdict([], "ConfigError: x", marked=False) == []
    aipp = [("preprocessing_passed", "false")]
    assert dict(one_verdict(CHECK + aipp, "AIPP file f:3 disagrees"))[
        "accuracy_first_failing_reason"] == "AIPP file f:3 disagrees"
    assert one_verdict(aipp, "AIPP file f:3 disagrees", marked=True)[1:] == [
        ("accuracy_passed", "false"), ("accuracy_first_failing_reason", "AIPP file f:3 disagrees")]


def test_a_users_own_property_with_a_checks_prefix_stays_as_recorded():
    """``accuracy_note`` is the user's, not a check's field: with two checks it was taken into
    the first check's set and renamed ``accuracy_check1_note`` (a review)."""
    props = [("accuracy_model", "a"), ("accuracy_mode", "default"), ("accuracy_passed", "true"),
             ("accuracy_note", "user: run 1"),
             ("accuracy_model", "b"), ("accuracy_mode", "default"), ("accuracy_passed", "false"),
             ("accuracy_first_failing_op", "fc2"), ("accuracy_first_failing_cosine", "0.5")]
    out = one_verdict(props, failed="accuracy FAILED")
    assert ("accuracy_note", "user: run 1") in out
    assert not any(n.endswith("_note") and n != "accuracy_note" for n, _ in out)
    assert ("accuracy_check2_first_failing_cosine", "0.5") in out
    assert out[:3] == [("accuracy_model", "b"), ("accuracy_mode", "default"),
                       ("accuracy_passed", "false")]

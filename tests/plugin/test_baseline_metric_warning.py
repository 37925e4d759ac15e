"""A test judged by a metric its per-operator baseline does not judge is told so, once.

mean_abs, rmse, max_rel, mean_rel, acc_rel and kl are not recorded in a baseline, and max_abs
is recorded in each tensor's own units: the baseline judges cosine (and rel_l2) only, so a
regression of the test's own metric within its threshold passed it with nothing said."""
from pathlib import Path

from test_baseline_metric_rel_l2 import BASELINE, _save

#: the filter the warning and the README give: by message, so that a project's filterwarnings
#: also loads on an earlier version, which has no such class (an upgrade trial: pytest stopped
#: at start-up there with AttributeError)
FILTER = "ignore:the per-operator baseline does not judge"

TWO_CHECKS = '''
from pytest_ascend_accuracy import accuracy

M = "models/shifted.onnx"


@accuracy(metric="mean_abs", threshold=0.05, max_drop=0.002)
def test_abs(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    golden = golden_dump(M, inputs)
    check_accuracy(ascend_model(M).run(inputs), golden)
    check_accuracy(ascend_model(M).run(inputs), golden)
'''

TEXT = ("BaselineMetricWarning: the per-operator baseline does not judge mean_abs, which this "
        "test's threshold judges: it judges each operator's cosine drop (and rel_l2 rise, where "
        "rel_l2 judges it) by max_drop=0.002, more NaN/Inf and operators no longer compared or "
        "missing; a mean_abs that got worse within the threshold passes it. A test judged by "
        "cosine or rel_l2 has its own metric judged (to silence this: -W 'ignore:the "
        "per-operator baseline does not judge', or the same in the ini's filterwarnings)")


def _run(pytester, *args):
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def test_a_mean_abs_test_is_warned_once_whatever_its_checks(pytester):
    pytester.makepyfile(test_abs=TWO_CHECKS)
    _save(pytester, 2.0)
    first = _run(pytester)
    first.assert_outcomes(failed=1, warnings=1)  # the baseline was missing: written
    first.stdout.fnmatch_lines([f"  test_abs.py:10: {TEXT}"])
    result = _run(pytester)
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["test_abs.py::test_abs", f"  test_abs.py:10: {TEXT}"])


def test_max_abs_is_named_with_why_and_a_per_op_metric_too(pytester):
    pytester.makepyfile(test_abs=TWO_CHECKS.replace(
        'metric="mean_abs", threshold=0.05',
        'metric="max_abs", threshold=0.1, per_op={"shift": {"kl": 0.5}}'))
    _save(pytester, 2.0)
    result = _run(pytester)
    result.assert_outcomes(failed=1, warnings=1)
    result.stdout.fnmatch_lines([
        "*BaselineMetricWarning: the per-operator baseline does not judge max_abs and kl, which "
        "this test's thresholds judge: *; max_abs is recorded, but in each tensor's own units, "
        "which one max_drop cannot judge across operators; a max_abs or kl that got worse "
        "within the threshold passes it.*"])


def test_no_warning_without_a_baseline_or_once_the_test_is_judged_by_rel_l2(pytester):
    pytester.makepyfile(test_abs=TWO_CHECKS.replace(", max_drop=0.002", ""))
    _save(pytester, 2.0)
    _run(pytester).assert_outcomes(passed=1)  # no baseline check: nothing to say
    pytester.makepyfile(test_abs=TWO_CHECKS.replace('metric="mean_abs"', 'metric="rel_l2"'))
    _run(pytester).assert_outcomes(failed=1)  # written
    result = _run(pytester)
    result.assert_outcomes(passed=1)
    assert "BaselineMetricWarning" not in result.stdout.str()
    assert (pytester.path / BASELINE).is_file()


def test_the_ini_max_drop_warns_too(pytester):
    pytester.makepyfile(test_abs=TWO_CHECKS.replace(", max_drop=0.002", ""))
    pytester.makeini("[pytest]\nascend_accuracy_max_drop = 0.002\n")
    _save(pytester, 2.0)
    _run(pytester).assert_outcomes(failed=1, warnings=1)
    _run(pytester).assert_outcomes(passed=1, warnings=1)


def test_the_readmes_filter_silences_it(pytester):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert f"`-W '{FILTER}'` silences it" in " ".join(readme.split())
    pytester.makepyfile(test_abs=TWO_CHECKS)
    _save(pytester, 2.0)
    _run(pytester).assert_outcomes(failed=1, warnings=1)
    result = _run(pytester, "-W", FILTER)
    result.assert_outcomes(passed=1)
    assert "BaselineMetricWarning" not in result.stdout.str()
    pytester.makeini(f"[pytest]\nfilterwarnings =\n    error\n    {FILTER}\n")  # the ini form
    _run(pytester).assert_outcomes(passed=1)

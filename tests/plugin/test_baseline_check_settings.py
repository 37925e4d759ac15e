"""A baseline holds figures that do not depend on how the check judges them: the comparison is
made before the marker's threshold, metric or scale_tolerance is applied, and each op line's
cosine is the judged one whatever the metric. So a baseline written under one of these settings
is judged, op by op, under another (no "rebaseline required" that a --accuracy-regen would only
rewrite byte for byte), and still catches a drop; a change of mode is another file, or, under one
mode name, a "rebaseline required" naming it."""
from test_baseline_option import BASELINE, BASELINE_TEST, _raise_cosine

SETTINGS = "threshold=0.05, max_drop=0.002, scale_tolerance=None"


def test_another_metric_and_threshold_judge_the_same_figures(pytester, models_dir):
    pytester.makepyfile(test_bl=BASELINE_TEST)
    pytester.runpytest("-q").assert_outcomes(failed=1)  # written
    baseline = pytester.path / BASELINE
    written = baseline.read_text()
    pytester.makepyfile(test_bl=BASELINE_TEST.replace(
        SETTINGS, 'metric="rel_l2", threshold=5.0, max_drop=0.002, scale_tolerance=3.0'))
    pytester.runpytest("-q").assert_outcomes(passed=1)
    pytester.runpytest("-q", "--accuracy-regen-all").assert_outcomes(passed=1)
    assert baseline.read_text() == written  # the same figures, byte for byte
    _raise_cosine(baseline, "norm", 0.1)
    regressed = pytester.runpytest("-q")
    regressed.assert_outcomes(failed=1)
    regressed.stdout.fnmatch_lines(["accuracy baseline REGRESSED: 1 of 5 baselined operator "
                                    "lines got worse*",
                                    "  norm: cosine 0.496693 -> 0.396693 (drop 0.100000 > 0.002)"])


def test_a_mode_changed_under_its_name_is_named_and_the_printed_regen_records_it(pytester,
                                                                                 models_dir):
    test = BASELINE_TEST.replace(
        "from pytest_ascend_accuracy import accuracy",
        "from pytest_ascend_accuracy import accuracy\nfrom pytest_ascend_accuracy.core.modes "
        "import Mode").replace(SETTINGS, SETTINGS + ', modes=[Mode(label="fast", fusion=FUSION)]')
    pytester.makepyfile(test_bl=test.replace("FUSION", "True"))
    pytester.runpytest("-q").assert_outcomes(failed=1)  # written
    pytester.makepyfile(test_bl=test.replace("FUSION", "False"))
    changed = pytester.runpytest("-q", "--junitxml=junit.xml")
    changed.assert_outcomes(failed=1)
    # what changed, not only which file (the summary, JUnit: an upgrade trial's dashboard
    # could not tell why; "rebaseline required: accuracy-baselines/...yaml" was all)
    changed.stdout.fnmatch_lines(["FAILED *baseline rebaseline required: accuracy-baselines/"
                                  "models/overflow/fast.yaml: atc_args: * and 1 more change"])
    junit = (pytester.path / "junit.xml").read_text(encoding="utf-8")
    assert ('name="accuracy_baseline" value="rebaseline required: accuracy-baselines/models/'
            'overflow/fast.yaml: atc_args: ') in junit and "and 1 more change" in junit
    changed.stdout.fnmatch_lines([
        "accuracy baseline REBASELINE REQUIRED: accuracy-baselines/models/overflow/fast.yaml was "
        "recorded under another setup (2 changes)",
        "  atc_args: *'--fusion_switch_file=fusion_switch.cfg'[]]",
        "  mode: [[]*'fusion=True'*[]] -> [[]*'fusion=False'*[]]",
        "*",
        "To record a new baseline: rerun with --accuracy-regen (or --accuracy-regen-all)."])
    pytester.runpytest("-q", "--accuracy-regen").assert_outcomes(failed=1)
    pytester.runpytest("-q").assert_outcomes(passed=1)

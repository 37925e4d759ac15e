"""Per-operator baselines through the plugin (``@accuracy(max_drop=...)``), as a user meets them:
missing -> written and failing, then passing, a drop beyond max_drop failing with old -> new,
--accuracy-regen rewriting it, unseeded inputs refused."""
import re

BASELINE_TEST = """
from pytest_ascend_accuracy import accuracy

# a loose threshold keeps the fp16-broken model passing, so its cosines (0.4, 0.09) are what
# the baseline guards: a drop stays invisible to the threshold but not to the baseline
@accuracy(threshold=0.05, max_drop=0.002)
def test_overflow_kept(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/overflow.onnx", seed=0)
    actual = ascend_model("models/overflow.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/overflow.onnx", inputs))
"""
BASELINE = "accuracy-baselines/overflow/default.yaml"


def _raise_cosine(path, op, by):
    text = path.read_text()
    match = re.search(r'op: "%s".*?cosine: ([0-9.]+)' % re.escape(op), text)
    new = f"{float(match.group(1)) + by:.6f}"
    path.write_text(text[:match.start(1)] + new + text[match.end(1):])


def test_baseline_cycle(pytester, models_dir):
    pytester.makepyfile(test_bl=BASELINE_TEST)
    first = pytester.runpytest("-q")
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*accuracy baseline *default.yaml*", "1 baseline file written:",
                                f"  {BASELINE}: baseline missing"])
    baseline = pytester.path / BASELINE
    assert "seed: 0" in baseline.read_text()
    pytester.runpytest("-q").assert_outcomes(passed=1)

    before = baseline.read_text()
    _raise_cosine(baseline, "norm", -0.1)  # norm got better than its baseline: a note only
    pytester.runpytest("-q").assert_outcomes(passed=1)
    baseline.write_text(before)
    _raise_cosine(baseline, "norm", 0.1)  # norm used to be 0.1 higher: still above 0.05 now
    regressed = pytester.runpytest("-q")
    regressed.assert_outcomes(failed=1)
    regressed.stdout.fnmatch_lines(["accuracy baseline REGRESSED: 1 of * baselined operator lines got worse*",
                                    "  norm: cosine 0.496693 -> 0.396693 (drop 0.100000 > 0.002)",
                                    "To accept these values: rerun with --accuracy-regen*"])
    regressed.stdout.fnmatch_lines(["1 accuracy check: 0 passed, 1 failed *",
                                    "FAILED test_bl.py::test_overflow_kept [[]overflow, default[]]: "
                                    "baseline regressed: norm: cosine 0.496693 -> 0.396693 *"])

    regen = pytester.runpytest("-q", "--accuracy-regen")
    regen.assert_outcomes(failed=1)
    assert baseline.read_text() == before  # rewritten from this run, byte for byte
    pytester.runpytest("-q").assert_outcomes(passed=1)


def test_inputs_not_from_accuracy_inputs_are_refused(pytester, models_dir):
    pytester.makepyfile("""
        import numpy as np
        from pytest_ascend_accuracy import accuracy

        @accuracy(max_drop=0.002)
        def test_random(ascend_model, golden_dump, check_accuracy):
            inputs = {"x": np.random.rand(1, 16).astype(np.float32)}
            check_accuracy(ascend_model("models/passing_mlp.onnx").run(inputs),
                           golden_dump("models/passing_mlp.onnx", inputs))
    """)
    result = pytester.runpytest("-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*needs inputs a rerun can reproduce: take them from the "
                                 "accuracy_inputs fixture*random unseeded inputs are refused*"])
    assert not (pytester.path / "accuracy-baselines").exists()


def test_ini_max_drop_turns_baselines_on_and_bad_values_are_errors(pytester, models_dir):
    pytester.makeini("[pytest]\nascend_accuracy_max_drop = 0.01\n"
                     "ascend_accuracy_baseline_dir = bl\n")
    pytester.makepyfile("""
        def test_mlp(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("models/passing_mlp.onnx")
            check_accuracy(ascend_model("models/passing_mlp.onnx").run(inputs),
                           golden_dump("models/passing_mlp.onnx", inputs))
    """)
    pytester.runpytest("-q").assert_outcomes(failed=1)
    assert (pytester.path / "bl" / "passing_mlp" / "default.yaml").is_file()
    pytester.runpytest("-q").assert_outcomes(passed=1)
    pytester.makeini("[pytest]\nascend_accuracy_max_drop = lots\n")
    bad = pytester.runpytest("-q")
    assert bad.ret == 4
    bad.stderr.fnmatch_lines(["*ascend_accuracy_max_drop: must be a number within [[]0, 1[]], got 'lots'*"])


def test_bad_max_drop_in_the_marker_is_a_collection_error(pytester):
    pytester.makepyfile("""
        from pytest_ascend_accuracy import accuracy

        @accuracy(max_drop=-1)
        def test_x():
            pass
    """)
    result = pytester.runpytest("-q")
    result.stdout.fnmatch_lines(["*max_drop must be a number within [[]0, 1[]], got -1*"])
    assert result.ret != 0

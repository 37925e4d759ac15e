"""``check_accuracy(run, golden)`` where the golden was made from other inputs than the run's
(another seed, another shape): every operator differed, the first in graph order was blamed and
fusion/buffer modes were advised, and ``--accuracy-diagnose`` then said the default conversion
already met the threshold (H103, on PP-OCR cls and rec). Refused before comparing, saying what to
pass, whichever of the two the test made first; a golden of the run's own inputs passes."""

TESTS = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/passing_mlp.onnx"


@accuracy(threshold=0.99)
def test_run_first(ascend_model, golden_dump, check_accuracy):
    actual = ascend_model(M).run(make_inputs(M, seed=0))
    check_accuracy(actual, golden_dump(M, make_inputs(M, seed={SEED})))


@accuracy(threshold=0.99)
def test_golden_first(ascend_model, golden_dump, check_accuracy):
    golden = golden_dump(M, make_inputs(M, seed={SEED}))
    check_accuracy(ascend_model(M).run(make_inputs(M, seed=0)), golden)
'''

REFUSED = ("check_accuracy: the golden was made from other inputs than this run's (its inputs "
           "digest *..., the run's inputs: x float32 (1, 16)): compared so")
ADVICE = ("compared so every operator differs and no conversion mode can fix it; make the golden "
          "from the inputs the run was given: golden_dump(model, inputs) with the same inputs "
          "as run(inputs)")


def test_a_golden_of_other_inputs_is_refused_before_any_operator_is_blamed(pytester, models_dir):
    pytester.makepyfile(test_inputs=TESTS.replace("{SEED}", "1"))
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines_random([
        f"FAILED test_inputs.py::{name}: no check verdict: ascend-accuracy configuration error: "
        f"{REFUSED}*" for name in ("test_run_first", "test_golden_first")])
    assert " ".join(line[1:].strip() if line.startswith("E") else line.strip()
                    for line in result.outlines).count(ADVICE) == 2, result.stdout.str()
    assert "first failure in graph order" not in result.stdout.str()
    assert "diagnosis" not in result.stdout.str()

    # as the refusal says: the golden made from the inputs the run was given
    pytester.makepyfile(test_inputs=TESTS.replace("{SEED}", "0"))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


STORED = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/passing_mlp.onnx"


@accuracy(threshold=0.99)
def test_stored(ascend_model, golden_dump, check_accuracy):
    golden = golden_dump(M, make_inputs(M, seed={SEED}), path="golden/mlp")
    check_accuracy(ascend_model(M).run(make_inputs(M, seed=0)), golden)
'''


def test_a_stored_golden_of_other_inputs_is_refused_too(pytester, models_dir):
    """A stored golden (the CI flow) is held to the inputs of its ``golden_dump`` call, and so to
    a run of other ones, as a cached golden is."""
    pytester.makepyfile(test_stored=STORED.replace("{SEED}", "1"))
    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-regen-all")  # writes golden/mlp
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"FAILED test_stored.py::test_stored: no check verdict: "
                                 f"ascend-accuracy configuration error: {REFUSED}*"])

    pytester.makepyfile(test_stored=STORED.replace("{SEED}", "0"))
    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-regen")  # the golden's inputs changed
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

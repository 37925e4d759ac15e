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
    # (each failure's report holds the whole message; the summaries cut it at their width)
    assert sum(not line.startswith("FAILED") and ADVICE in line
               for line in result.outlines) == 2, result.stdout.str()
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


LATER = '''
import numpy as np
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/passing_mlp.onnx"


@accuracy(threshold=0.99)
def test_changed_after_the_run(ascend_model, golden_dump, check_accuracy):
    x = make_inputs(M, seed=0)
    golden = golden_dump(M, x)
    actual = ascend_model(M).run(x)
    x["x"] += 1.0  # the test's own later use of its array
    check_accuracy(actual, golden)


@accuracy(threshold=0.99)
def test_one_buffer_for_each_batch(ascend_model, golden_dump, check_accuracy):
    buf, om, pairs = np.empty((1, 16), np.float32), ascend_model(M), []
    for seed in (0, 1):
        buf[:] = make_inputs(M, seed=seed)["x"]
        pairs.append((om.run({"x": buf}), golden_dump(M, {"x": buf})))
    for actual, golden in pairs:
        check_accuracy(actual, golden)


@accuracy(threshold=0.99)
def test_golden_path_of_other_inputs(ascend_model, check_accuracy):
    check_accuracy(ascend_model(M).run(make_inputs(M, seed=0)), "golden/seed1")
'''


def test_inputs_are_taken_as_they_were_when_the_run_ran_and_a_golden_path_by_its_record(
        pytester, models_dir):
    """A test that changed or reused its arrays after the run was refused though the golden
    and the run had the same inputs; a stored golden given as a path carries no source, and a
    run of other inputs against it still blamed the first operator (H106)."""
    pytester.makepyfile(test_writer='''
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


def test_write(golden_dump):
    golden_dump("models/passing_mlp.onnx", make_inputs("models/passing_mlp.onnx", seed=1),
                path="golden/seed1")
''', test_later=LATER)
    pytester.runpytest("-p", "no:cacheprovider", "test_writer.py", "--accuracy-regen-all")
    result = pytester.runpytest("-p", "no:cacheprovider", "test_later.py")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([f"FAILED test_later.py::test_golden_path_of_other_inputs: no "
                                 f"check verdict: ascend-accuracy configuration error: "
                                 f"{REFUSED}*"])

"""A misspelled keyword argument of a fixture's function is a configuration error naming the
closest argument (Python's TypeError named none it takes); the suggestion passes pasted (H95)."""
import pytest

TEST = '''
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_mlp(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/passing_mlp.onnx", {seed}=1)
    golden = golden_dump("models/passing_mlp.onnx", inputs, {shape}=None)
    check_accuracy(ascend_model("models/passing_mlp.onnx").run(inputs), golden, {ignore}=[])
'''


@pytest.mark.parametrize("where, wrong, right", [
    ("accuracy_inputs", "sed", "seed"), ("golden_dump", "input_shap", "input_shape"),
    ("check_accuracy", "ignor", "ignore")])
def test_a_misspelled_keyword_names_the_closest_and_it_passes_pasted(
        pytester, models_dir, where, wrong, right):
    names = {"seed": "seed", "shape": "input_shape", "ignore": "ignore"}
    key = {"accuracy_inputs": "seed", "golden_dump": "shape", "check_accuracy": "ignore"}[where]
    pytester.makepyfile(test_kw=TEST.format(**dict(names, **{key: wrong})))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines([f"ascend-accuracy configuration error: {where}: unknown argument "
                              f"{wrong!r}; closest: {right!r}; it takes *"])
    pytester.makepyfile(test_kw=TEST.format(**dict(names, **{key: right})))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

"""A bare array (or a list) where a fixture wants inputs as ``{input name: array}``: refused
naming the model's inputs as the mapping to give, in every fixture that takes inputs. Before,
``golden_dump(m, x)`` failed with ``AttributeError: 'numpy.ndarray' object has no attribute
'items'``, ``golden_dump(m, x, path=...)`` with an ``IndexError`` from hashing, and
``accuracy_inputs(m, inputs=x)`` said ``baseline inputs: expected a non-empty mapping`` in a
test that has no baseline; ``om.run(x)`` named no input."""
import pytest

TESTS = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/passing_mlp.onnx"


def given(inputs):
    return {GIVEN}


@accuracy(threshold=0.99)
def test_golden(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, given(inputs)))


@accuracy(threshold=0.99)
def test_stored_golden(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, given(inputs), path="golden/mlp"))


@accuracy(threshold=0.99)
def test_run(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    check_accuracy(ascend_model(M).run(given(inputs)), golden_dump(M, inputs))


@accuracy(threshold=0.99, max_drop=0.01)
def test_user_inputs(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, inputs=given(make_inputs(M)))
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
'''


@pytest.mark.parametrize("bare", ["inputs['x']", "[inputs['x']]"], ids=["array", "list"])
def test_a_bare_array_is_refused_naming_the_mapping_and_the_mapping_passes(
        pytester, models_dir, bare):
    pytester.makepyfile(test_bare=TESTS.replace("{GIVEN}", bare))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=4)
    kind = "ndarray" if bare.startswith("inputs") else "list"
    for test, where in (("test_golden", "inputs of 'passing_mlp'"),
                        ("test_stored_golden", "inputs of 'passing_mlp'"),
                        ("test_run", "inputs of 'passing_mlp'"),
                        ("test_user_inputs", "accuracy_inputs(inputs=...) of 'passing_mlp'")):
        result.stdout.fnmatch_lines([
            f"FAILED test_bare.py::{test}: no check verdict: ascend-accuracy configuration "
            f"error: {where}: expected a mapping {{input name: array}}, got {kind}; the model's "
            f"inputs: x (give {{'x': ...}})"])
    result.stdout.no_fnmatch_line("*AttributeError*")
    result.stdout.no_fnmatch_line("*IndexError*")

    # the advice pasted: {'x': ...} with the array in its place
    pytester.makepyfile(test_bare=TESTS.replace("{GIVEN}", "{'x': inputs['x']}"))
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-regen-all")
    result.assert_outcomes(passed=4)

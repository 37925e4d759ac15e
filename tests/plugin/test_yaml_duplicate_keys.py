"""A key given twice in an accuracy suite is refused at collection, naming the file, both lines and
the fix: YAML keeps the last value, so a second ``models:`` dropped every entry above it from the
run and a second ``threshold:`` replaced the first, silently."""
import pytest

from pytest_ascend_accuracy.plugin.yaml_suite import load_suite

TWO_MODELS_KEYS = """models:
  - model: models/passing_mlp.onnx
    inputs: {seed: 0}
models:
  - model: models/overflow.onnx
    inputs: {seed: 0}
    modes: [high_precision]
"""

MERGED = """models:
  - model: models/passing_mlp.onnx
    inputs: {seed: 0}
  - model: models/overflow.onnx
    inputs: {seed: 0}
    modes: [high_precision]
"""

TWO_THRESHOLDS = """models:
  - model: models/passing_mlp.onnx
    inputs: {seed: 0}
    threshold: 0.5
    threshold: 0.99
"""


def test_a_second_models_key_is_refused_and_merging_them_runs_both(pytester, models_dir):
    pytester.makefile(".yaml", accuracy_dup=TWO_MODELS_KEYS)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(errors=1)
    run.stdout.fnmatch_lines([
        "invalid accuracy suite: accuracy_dup.yaml: line 4: key 'models' given twice in one "
        "mapping (first on line 1); YAML would keep the last value (the one read before this "
        "was checked) silently: merge them into one"])
    pytester.makefile(".yaml", accuracy_dup=MERGED)  # the fix, as printed
    run = pytester.runpytest("-p", "no:cacheprovider", "-q")
    run.assert_outcomes(passed=2)


@pytest.mark.parametrize("flow", [False, True])
def test_a_setting_given_twice_in_an_entry_is_refused(pytester, models_dir, flow):
    text = TWO_THRESHOLDS
    if flow:
        text = text.replace("    threshold: 0.5\n    threshold: 0.99\n",
                            "    per_op: {fc1: 0.5, fc1: 0.9}\n")
    pytester.makefile(".yaml", accuracy_dup=text)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(errors=1)
    key, where = ("fc1", "on the same line") if flow else ("threshold", "first on line 4")
    run.stdout.fnmatch_lines([f"invalid accuracy suite: accuracy_dup.yaml: line * key '{key}' "
                              f"given twice in one mapping ({where}); * silently: remove one"])


TWO_MERGES = """defaults: &defaults
  threshold: 0.99
models:
  - &mlp
    model: models/passing_mlp.onnx
    inputs: {seed: 0}
    threshold: 0.5
  - <<: *mlp
    <<: *defaults
    name: mlp_strict
"""


def test_a_second_merge_key_is_refused_and_the_printed_fix_runs(pytester, models_dir):
    """Two ``<<`` in one entry: which wins differs between PyYAML versions (6.0.3 the last,
    threshold 0.99 from defaults; 6.0.4 the first). The printed fix, one list listing first the
    one whose values win, collects the same test with threshold 0.99 whatever PyYAML is
    installed (6.0.4's own merge gave 0.5 for it: the clean-clone CI)."""
    pytester.makefile(".yaml", accuracy_dup=TWO_MERGES)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(errors=1)
    run.stdout.fnmatch_lines([
        "invalid accuracy suite: accuracy_dup.yaml: line 9: key '<<' given twice in one mapping "
        "(first on line 8); which one wins differs between YAML readers and versions: merge "
        "them into one list, <<: [...], listing first the one whose values win (as the merge "
        "spec has it)"])
    pytester.makefile(".yaml", accuracy_dup=TWO_MERGES.replace(
        "  - <<: *mlp\n    <<: *defaults\n", "  - <<: [*defaults, *mlp]\n"))
    run = pytester.runpytest("-p", "no:cacheprovider", "-q")
    run.assert_outcomes(passed=2)
    cases = load_suite(pytester.path / "accuracy_dup.yaml")
    assert [c.spec.threshold for c in cases if c.name == "mlp_strict"] == [0.99]

"""A failed dataset check gets the debugging flow under ``--accuracy-diagnose``, as a failed
accuracy check does: on its first flipped sample (the one the check traced to an operator),
from the test's mode, judged by its ``@accuracy`` policy; the fix it prints, pasted, makes the
check pass. Where no flow can run, the failure says why (it said nothing at all)."""
import re
from types import SimpleNamespace

import numpy as np

from pytest_ascend_accuracy.dataset.result import Culprit
from pytest_ascend_accuracy.testing import models as tiny_models

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy, {imports}

SAMPLES = [{{"x": np.random.default_rng([7, i]).random((1, 16), dtype=np.float32)}}
           for i in range(4)]


@accuracy({marker})
def test_ds(ascend_model, check_dataset):
    check_dataset(ascend_model("models/overflow.onnx"), SAMPLES, metric="agreement")
'''

SUITE = '''
models:
  - model: models/overflow.onnx
    threshold: 0.95
    modes: {modes}
    dataset: {{samples: samples, metric: agreement}}
'''

FIX = re.compile(r"^  fix: modes=\[(.*)\]  \(YAML: modes: \[(.*)\]; from pytest_ascend_accuracy "
                 r"import (.*)\)$", re.M)


def test_a_failed_dataset_check_is_diagnosed_on_its_flipped_sample_and_the_fix_pastes(pytester):
    tiny_models.save_models(pytester.path / "models", ["overflow"])
    pytester.makepyfile(test_ds=TEST.format(imports="accuracy", marker="threshold=0.95"))
    failed = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines([
        "first flipped sample 0: first operator below the threshold: norm *",
        "diagnosis (--accuracy-diagnose on the first flipped sample 0, * new conversions, from "
        "mode default): default fails at op norm; *",
        "  full diagnosis: .ascend-accuracy/diagnoses/test_ds.py--test_ds/diagnosis/"
        "diagnosis.txt"])
    assert (pytester.path / ".ascend-accuracy/diagnoses/test_ds.py--test_ds/diagnosis/"
                            "diagnosis.txt").is_file()
    fix = FIX.search(failed.stdout.str())
    assert fix.group(1) == "keep_dtype(['norm'])"
    pytester.makepyfile(test_ds=TEST.format(
        imports=fix.group(3), marker=f"threshold=0.95, modes=[{fix.group(1)}]"))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_yaml_dataset_item_reads_its_sample_file_and_the_yaml_fix_pastes(pytester):
    tiny_models.save_models(pytester.path / "models", ["overflow"])
    (pytester.path / "samples").mkdir()
    for i in range(3):
        np.savez(pytester.path / "samples" / f"s{i}.npz",
                 x=np.random.default_rng([7, i]).random((1, 16), dtype=np.float32))
    pytester.makefile(".yaml", accuracy_suite=SUITE.format(modes="[default]"))
    failed = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose", "-k", "dataset")
    failed.assert_outcomes(failed=1, deselected=1)
    failed.stdout.fnmatch_lines(["diagnosis (--accuracy-diagnose on the first flipped sample "
                                 "s0, * from mode default): *"])
    fix = FIX.search(failed.stdout.str())
    assert fix.group(2) == '{keep_dtype: ["norm"]}'
    pytester.makefile(".yaml", accuracy_suite=SUITE.format(modes=f"[{fix.group(2)}]"))
    pytester.runpytest("-p", "no:cacheprovider", "-k", "dataset").assert_outcomes(
        passed=1, deselected=1)


def _result(culprit, untracked=""):
    return SimpleNamespace(culprit=culprit, untracked=untracked)


def test_where_no_flow_can_run_the_failure_says_why():
    from pytest_ascend_accuracy.plugin.dataset_check import dataset_diagnosis

    def why(result, om=SimpleNamespace(mode="m", aipp=None), samples=(), reference=None):
        return dataset_diagnosis(None, om, samples, result, None, "t.py::t", reference)

    assert why(_result(None)) == (
        "diagnosis (--accuracy-diagnose): not run: no sample was traced to an operator (no "
        "sample's top-1 flipped); the flow restores operators that fail the @accuracy "
        "threshold on one sample")
    assert why(_result(Culprit("7", note="every operator meets the threshold"))) == (
        "diagnosis (--accuracy-diagnose): not run: the first flipped sample 7 was traced to no "
        "operator (every operator meets the threshold); the flow restores operators that fail "
        "the @accuracy threshold")
    traced = _result(Culprit("0", op="norm"))
    assert "reference_inputs(sample)" in why(traced, reference=lambda x: x)
    assert "not converted by ascend_model" in why(traced, om=SimpleNamespace(aipp=None))
    assert "one-pass iterator" in why(traced, samples=iter([{"x": 1}]))


def test_a_dynamic_model_converted_at_its_samples_shape_is_diagnosed(pytester):
    """``ascend_model`` of a model with a dynamic batch and no input_shape converts at each
    run's shape; the diagnosis takes the flipped sample's shape too (it was 'could not run')."""
    import onnx

    tiny_models.save_models(pytester.path / "models", ["overflow"])
    proto = onnx.load(pytester.path / "models" / "overflow.onnx")
    proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    onnx.save(proto, pytester.path / "models" / "overflow.onnx")
    pytester.makepyfile(test_ds=TEST.format(imports="accuracy", marker="threshold=0.95"))
    failed = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines([
        "diagnosis (--accuracy-diagnose on the first flipped sample 0, * new conversions, from "
        "mode default): default fails at op norm; *"])
    assert FIX.search(failed.stdout.str()).group(1) == "keep_dtype(['norm'])"

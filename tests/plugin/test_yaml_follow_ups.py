"""YAML suite items and Python tests share one path (plugin/check_flow.py): the hint in the
item's mode, ``--accuracy-diagnose`` from the item's own mode and inputs, and ``max_drop``
baselines."""
import pytest

from pytest_ascend_accuracy.testing import models as tiny_models

SUITE = '''
models:
  - name: overflow
    model: models/overflow.onnx
    threshold: 0.95
    modes: [fusion_off]
  - name: mlp
    model: models/mlp.onnx
    threshold: 0.99
    max_drop: 0.01
'''


@pytest.fixture
def suite(pytester):
    import onnx

    directory = pytester.mkdir("models")
    onnx.save(tiny_models.overflow_model(), str(directory / "overflow.onnx"))
    onnx.save(tiny_models.passing_mlp(), str(directory / "mlp.onnx"))
    (pytester.path / "accuracy_suite.yaml").write_text(SUITE)
    return pytester.path / "accuracy_suite.yaml"


def test_yaml_items_get_mode_hints_diagnosis_and_baselines(pytester, suite):
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose",
                             "--accuracy-report=rep")
    run.assert_outcomes(failed=2)  # overflow fails; mlp's baseline did not exist yet
    run.stdout.fnmatch_lines([
        "  modes=[FUSION_OFF | keep_dtype(['norm'])]",
        '    YAML: modes: [{base: fusion_off, keep_dtype: ["norm"]}]',
        "diagnosis (--accuracy-diagnose, * new conversion*, from mode fusion_off): fusion_off "
        "fails at op norm; high precision passes; keep_dtype {norm} restores *",
        "  fix: modes=[FUSION_OFF | keep_dtype(['norm'])]  (YAML: modes: "
        '[{base: fusion_off, keep_dtype: ["norm"]}]; from pytest_ascend_accuracy import '
        "FUSION_OFF, keep_dtype)",
    ])
    # max_drop in YAML: the baseline is written on the first run (which fails, as with
    # @accuracy(max_drop=...)) and judged on the next
    run.stdout.fnmatch_lines(["FAILED accuracy_suite.yaml::mlp[[]default[]] *: baseline missing: "
                              "*accuracy-baselines/models/mlp/default.yaml"])
    again = pytester.runpytest("-p", "no:cacheprovider", "-k", "mlp")
    again.assert_outcomes(passed=1)

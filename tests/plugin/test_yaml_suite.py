"""YAML suites collected and run as tests (pytester)."""
import numpy as np
import pytest

SUITE = """
defaults:
  threshold: 0.95
models:
  - name: mlp
    model: models/passing_mlp.onnx
    threshold: 0.99
    golden: golden/mlp
  - model: models/overflow.onnx
    modes: [default, high_precision, {keep_dtype: [norm]}]
    inputs: {seed: 1}
  - name: mlp_from_npy
    model: models/passing_mlp.onnx
    inputs: {x: data/x.npy}
"""


@pytest.fixture
def suite_project(pytester, models_dir):
    pytester.mkdir("data")
    np.save(pytester.path / "data" / "x.npy", np.linspace(0, 1, 16, dtype=np.float32).reshape(1, 16))
    pytester.makefile(".yaml", accuracy_models=SUITE)
    return pytester


def test_collects_model_x_mode_items(suite_project):
    result = suite_project.runpytest("--collect-only", "-q", "--strict-markers")
    result.stdout.fnmatch_lines([
        "accuracy_models.yaml::mlp[[]default]",
        "accuracy_models.yaml::overflow[[]default]",
        "accuracy_models.yaml::overflow[[]high_precision]",
        "accuracy_models.yaml::overflow[[]keep_dtype(norm)]",
        "accuracy_models.yaml::mlp_from_npy[[]default]",
        "5 tests collected*",
    ])


def test_other_yaml_files_are_not_collected(pytester, models_dir):
    pytester.makefile(".yaml", settings="models: [{model: models/passing_mlp.onnx}]")
    pytester.makefile(".yml", accuracy_more="models: [{model: models/passing_mlp.onnx}]")
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["accuracy_more.yml::passing_mlp[[]default]", "1 test collected*"])


def test_runs_with_summary(suite_project):
    result = suite_project.runpytest("-v", "-m", "accuracy", "--junitxml=out.xml")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines([
        "accuracy_models.yaml::mlp[[]default] FAILED*",  # its stored golden did not exist yet
        "accuracy_models.yaml::overflow[[]default] FAILED*",
        "accuracy_models.yaml::overflow[[]high_precision] PASSED*",
        "accuracy_models.yaml::overflow[[]keep_dtype(norm)] PASSED*",
        "accuracy_models.yaml::mlp_from_npy[[]default] PASSED*",
    ])
    result.stdout.fnmatch_lines([
        "*_ mlp[[]default] _*",
        "golden file golden/mlp did not exist: wrote it from passing_mlp (onnxruntime fp32).",
        "*_ overflow[[]default] _*",
        "accuracy FAILED: * first failure in graph order: norm (#2)",
        "",
        "first failing operator (#2 in graph order):",
    ])
    result.stdout.fnmatch_lines([
        "4 accuracy checks: 3 passed, 1 failed (2 models x 3 modes); 1 @accuracy test failed "
        "without a check verdict",
        "FAILED accuracy_models.yaml::overflow[[]default] [[]overflow, default]: first failing op norm *",
        "FAILED accuracy_models.yaml::mlp[[]default[]]: no check verdict: Failed: golden file "
        "golden/mlp did not exist: wrote it from passing_mlp (onnxruntime fp32).",
    ])
    assert "accuracy_first_failing_op" in (suite_project.path / "out.xml").read_text()
    again = suite_project.runpytest("-k", "mlp")
    again.assert_outcomes(passed=2)


@pytest.mark.parametrize("body, message", [
    ("models: [{model: models/passing_mlp.onnx, threshold: 7}]",
     "invalid accuracy suite: accuracy_bad.yaml: models[[]0].threshold: threshold must be within "
     "[[]0, 1], got 7.0"),
    ("models: [{model: models/passing_mlp.onnx, modes: [fast]}]",
     "invalid accuracy suite: accuracy_bad.yaml: models[[]0].modes[[]0]: unknown mode 'fast'; *"),
    ("models:\n  - {model: models/passing_mlp.onnx\n", "invalid accuracy suite: accuracy_bad.yaml: "
                                                      "not valid YAML: *"),
])
def test_invalid_suite_is_a_collection_error(pytester, models_dir, body, message):
    pytester.makefile(".yaml", accuracy_bad=body)
    pytester.makepyfile("def test_other(): pass")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ERROR collecting accuracy_bad.yaml*", message, "*1 error*"])


def test_yaml_golden_regen(suite_project):
    import onnx
    from onnx import numpy_helper

    suite_project.runpytest("-k", "mlp and not npy")  # writes golden/mlp
    suite_project.runpytest("-k", "mlp and not npy").assert_outcomes(passed=1)
    path = suite_project.path / "models" / "passing_mlp.onnx"
    model = onnx.load(str(path))
    for init in model.graph.initializer:
        if init.name == "fc2.weight":
            init.CopyFrom(numpy_helper.from_array(-numpy_helper.to_array(init), init.name))
    onnx.save(model, str(path))
    regen = suite_project.runpytest("-k", "mlp and not npy", "--accuracy-regen")
    regen.assert_outcomes(failed=1)
    regen.stdout.fnmatch_lines(["*rewrote it from models/passing_mlp.onnx and this test's inputs*",
                                "  golden/mlp: rewritten (--accuracy-regen: written from another "
                                "model or other inputs)"])
    suite_project.runpytest("-k", "mlp and not npy").assert_outcomes(passed=1)

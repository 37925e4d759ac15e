"""YAML suite parsing and validation (no pytest session): every error names file and key."""
from pathlib import Path

import numpy as np
import pytest

from pytest_ascend_accuracy.core.locations import shown
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.plugin.yaml_suite import load_suite


@pytest.fixture
def suite(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "mlp.onnx").write_bytes(b"not parsed at collection")
    (tmp_path / "models" / "conv.onnx").write_bytes(b"x")
    np.save(tmp_path / "x.npy", np.zeros((1, 16), np.float32))

    def write(text, name="accuracy_suite.yaml"):
        path = tmp_path / name
        path.write_text(text)
        return path
    return write


def test_full_suite(suite, tmp_path):
    path = suite("""
defaults:
  threshold: 0.9
  ignore: [Softmax_1]
  per_op: {relu1: 0.5}
models:
  - model: models/mlp.onnx
    modes: [default, high_precision, {keep_dtype: [norm]}, {base: fusion_off, keep_dtype: [a], name: fo}]
    threshold: {high_precision: 0.99}
    per_op: {relu2: 0.6}
    ignore: [fc3]
    inputs: {seed: 3, shapes: {x: [2, 16]}}
  - name: conv
    model: models/conv.onnx
    inputs: {x: x.npy}
    input_shape: {x: [1, 16]}
    golden: golden/conv
""")
    cases = load_suite(path, default_threshold=0.95)
    assert [c.test_name for c in cases] == [
        "mlp[default]", "mlp[high_precision]", "mlp[keep_dtype(norm)]", "mlp[fo]", "conv[default]"]
    mlp, hp = cases[0], cases[1]
    assert mlp.spec.threshold == 0.9 and hp.spec.threshold == 0.99
    assert mlp.spec.per_op_dict == {"relu1": 0.5, "relu2": 0.6}
    assert mlp.spec.ignore == ("Softmax_1", "fc3")
    assert mlp.inputs.seed == 3 and mlp.input_shape == {"x": (2, 16)}
    fo = cases[3].mode
    assert (fo.fusion, fo.keep_dtype, fo.name) == (False, ("a",), "fo")
    conv = cases[4]
    assert conv.model == tmp_path / "models" / "conv.onnx"
    assert conv.inputs.files == (("x", tmp_path / "x.npy"),) and conv.input_shape == {"x": (1, 16)}
    assert conv.golden == tmp_path / "golden" / "conv"
    assert conv.spec.ignore == ("Softmax_1",)
    loaded = conv.inputs.load(conv.model)
    assert loaded["x"].shape == (1, 16)


@pytest.mark.parametrize("body, where, problem", [
    ("- a", "", "a suite is a mapping with a 'models' list at the top level"),
    ("models: []", ": models", "must be a non-empty list of model entries"),
    ("model: x", ": model", "unknown key; closest: models; known: defaults, models"),
    ("defaults: {thresh: 1}\nmodels: [{model: models/mlp.onnx}]", ": defaults.thresh",
     "unknown key; closest: threshold; known: threshold, metric, per_op, ignore, modes, inputs, "
     "input_shape, max_drop, scale_tolerance"),
    ("models: [{model: models/none.onnx}]", ": models[0].model",
     "file not found: {d}/models/none.onnx ('models/none.onnx' from the suite's folder)"),
    ("models: [{name: m}]", ": models[0].model", "required: the ONNX file, relative to the suite file"),
    ("models: [{model: models/mlp.onnx, threshold: 2}]", ": models[0].threshold",
     "threshold must be within [0, 1], got 2.0"),
    ("models: [{model: models/mlp.onnx, threshold: {fusion_off: 0.9}}]",
     ": models[0].threshold.fusion_off", "not one of this model's modes (default)"),
    ("models: [{model: models/mlp.onnx, metric: cos}]", ": models[0].metric",
     "unknown metric 'cos'; closest: 'cosine'; known: cosine, rel_l2, max_abs, mean_abs, rmse, "
     "max_rel, mean_rel, acc_rel, kl"),
    ("models: [{model: models/mlp.onnx, threshold: {defualt: 0.9}}]",
     ": models[0].threshold.defualt",
     "not one of this model's modes (default); closest: 'default'"),
    ("models: [{model: models/mlp.onnx, modes: [turbo]}]", ": models[0].modes[0]",
     "unknown mode 'turbo'; known: default, high_precision, buffer_off, fusion_off"),
    ("models: [{model: models/mlp.onnx, modes: [{keep: [a]}]}]", ": models[0].modes[0].keep",
     "unknown mode key; known: base, name, precision_mode, keep_dtype, buffer_optimize, fusion, "
     "fusion_rules_off, extra"),
    ("models: [{model: models/mlp.onnx, modes: [{extra: [log]}]}]", ": models[0].modes[0].extra",
     "must map ATC options to values, e.g. {{log: info}}, got ['log']"),
    ("models: [{model: models/mlp.onnx, modes: [{precision_mode: fp8}]}]", ": models[0].modes[0]",
     "unknown precision_mode 'fp8'; known: force_fp16, allow_fp32_to_fp16, must_keep_origin_dtype, "
     "force_fp32, cube_fp16in_fp32out, allow_mix_precision, allow_mix_precision_fp16, "
     "allow_mix_precision_bf16, allow_fp32_to_bf16"),
    ("models: [{model: models/mlp.onnx, per_op: {relu: 1.5}}]", ": models[0].per_op",
     "per_op['relu'] must be within [0, 1], got 1.5"),
    ("defaults: {ignore: 3}\nmodels: [{model: models/mlp.onnx}]", ": defaults.ignore",
     "must be a list of op names, got 3"),
    ("models: [{model: models/mlp.onnx, inputs: {seed: -1}}]", ": models[0].inputs.seed",
     "must be a non-negative integer, got -1"),
    ("models: [{model: models/mlp.onnx, inputs: {seed: 0, shape: [1]}}]", ": models[0].inputs.shape",
     "a generator spec takes only 'seed' and 'shapes'"),
    ("models: [{model: models/mlp.onnx, inputs: {x: x.txt}}]", ": models[0].inputs.x",
     "must be a .npy file, got 'x.txt'"),
    ("models: [{model: models/mlp.onnx, inputs: {x: y.npy}}]", ": models[0].inputs.x",
     "file not found: {d}/y.npy ('y.npy' from the suite's folder)"),
    ("models: [{model: models/mlp.onnx, input_shape: {x: [1, 0]}}]", ": models[0].input_shape.x",
     "must be a list of positive integers, got [1, 0]"),
    ("models: [{model: models/mlp.onnx}, {model: models/mlp.onnx}]", ": models[1].name",
     "test mlp[default] is defined twice"),
    ("models: [{model: models/mlp.onnx, name: 'a[b]'}]", ": models[0].name",
     "must be a plain name (no [ ] / :), got 'a[b]'"),
    ("models: [{model: models/mlp.onnx, golden: 3}]", ": models[0].golden",
     "must be a path (a directory, relative to the suite file)"),
    ("models: [{model: models/mlp.onnx, modes: [default, default]}]", ": models[0].modes",
     "modes repeats default"),
])
def test_errors_name_file_and_key(suite, tmp_path, body, where, problem):
    path = suite(body)
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    shown_dir = shown(tmp_path, Path.cwd())  # (files: as pasted where pytest runs)
    assert str(info.value) == f"{path}{where}: {problem.format(d=shown_dir)}"


def test_a_missing_file_is_printed_as_pasted_where_pytest_runs(suite, tmp_path, monkeypatch):
    """Relative to where pytest runs and normalised (a YAML trial read
    ``file not found: /abs/dir/../x.onnx``)."""
    (tmp_path / "sub").mkdir()
    path = suite("models: [{model: sub/../none.onnx}]")
    monkeypatch.chdir(tmp_path / "sub")
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    assert str(info.value).endswith(": models[0].model: file not found: ../none.onnx "
                                    "('sub/../none.onnx' from the suite's folder)")


def test_invalid_yaml(suite):
    path = suite("models: [unclosed")
    with pytest.raises(ConfigError, match=r"accuracy_suite.yaml: not valid YAML: "):
        load_suite(path)


def test_safe_load_refuses_python_tags(suite):
    path = suite("models: !!python/object/apply:os.system ['echo hi']")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_suite(path)


def test_a_defaults_threshold_is_not_taken_for_a_model_of_another_metric(tmp_path):
    # a trial: defaults {threshold: 0.99} judged a model of metric rel_l2 as rel_l2 <= 0.99
    # (the marker refuses that), and defaults {metric: rel_l2, threshold: 0.1} a cosine model
    # as cosine >= 0.1: two false passes
    import onnx

    from pytest_ascend_accuracy.testing import models as tiny_models

    onnx.save(tiny_models.passing_mlp(), str(tmp_path / "mlp.onnx"))
    path = tmp_path / "accuracy_m.yaml"
    path.write_text("defaults: {threshold: 0.99}\n"
                    "models:\n  - {name: m, model: mlp.onnx, metric: rel_l2}\n")
    with pytest.raises(ConfigError, match=r"models\[0\]\.threshold: metric='rel_l2' needs an "
                                          r"explicit threshold"):
        list(load_suite(path))
    path.write_text("defaults: {metric: rel_l2, threshold: 0.1}\n"
                    "models:\n  - {name: m, model: mlp.onnx, metric: cosine}\n")
    [case] = list(load_suite(path, default_threshold=0.95))
    assert (case.spec.metric, case.spec.threshold) == ("cosine", 0.95)
    path.write_text("defaults: {metric: rel_l2, threshold: 0.1}\n"
                    "models:\n  - {name: m, model: mlp.onnx}\n")  # the defaults' own metric
    [case] = list(load_suite(path))
    assert (case.spec.metric, case.spec.threshold) == ("rel_l2", 0.1)


def test_a_defaults_per_op_number_is_one_of_the_defaults_metric(tmp_path):
    # a review: defaults per_op {fc2/MatMul: 0.99} (cosine: the defaults set no metric) judged
    # a model of metric rel_l2 as rel_l2 <= 0.99
    import onnx

    from pytest_ascend_accuracy.compare.thresholds import Threshold
    from pytest_ascend_accuracy.testing import models as tiny_models

    onnx.save(tiny_models.passing_mlp(), str(tmp_path / "mlp.onnx"))
    path = tmp_path / "accuracy_m.yaml"
    path.write_text("defaults: {per_op: {'*': 0.99}}\n"
                    "models:\n  - {name: m, model: mlp.onnx, metric: rel_l2, threshold: 0.5}\n")
    [case] = list(load_suite(path))
    assert dict(case.spec.per_op)["*"] == Threshold(0.99, "cosine")
    path.write_text("defaults: {per_op: {'*': 0.99}}\nmodels:\n  - {name: m, model: mlp.onnx}\n")
    [case] = list(load_suite(path))
    assert dict(case.spec.per_op)["*"] == 0.99  # the same metric: a number, as before

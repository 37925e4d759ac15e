"""README's rule for the numbers of ``defaults:`` (c9a02d2, 48ac615): they are of the defaults'
own metric; its examples, pasted, load as it says."""
import onnx
import pytest

from pytest_ascend_accuracy.compare.thresholds import Threshold
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.plugin.yaml_suite import load_suite
from pytest_ascend_accuracy.testing import models as tiny_models


@pytest.fixture
def suite(tmp_path):
    onnx.save(tiny_models.passing_mlp(), str(tmp_path / "mlp.onnx"))  # has op fc2/MatMul
    path = tmp_path / "accuracy_m.yaml"

    def load(defaults):
        path.write_text(f"defaults: {defaults}\nmodels:\n"
                        "  - {name: rel, model: mlp.onnx, metric: rel_l2, threshold: 0.5}\n"
                        "  - {name: cos, model: mlp.onnx}\n")
        return {case.name: case.spec for case in load_suite(path)}
    return load


def test_a_defaults_per_op_number_is_a_cosine_for_a_rel_l2_model_too(suite):
    specs = suite("{per_op: {fc2/MatMul: 0.99}}")
    assert dict(specs["rel"].per_op)["fc2/MatMul"] == Threshold(0.99, "cosine")
    assert dict(specs["cos"].per_op)["fc2/MatMul"] == 0.99


def test_a_defaults_per_op_threshold_of_another_metric_names_it(suite):
    with pytest.raises(ConfigError) as info:  # a plain 1.5 is checked as a cosine
        suite("{per_op: {fc2/MatMul: 1.5}}")
    assert "defaults.per_op: per_op['fc2/MatMul'] must be within [0, 1], got 1.5" in str(
        info.value), info.value
    specs = suite("{per_op: {fc2/MatMul: {rel_l2: 1.5}}}")  # README's spelling
    assert dict(specs["rel"].per_op)["fc2/MatMul"] == Threshold(1.5, "rel_l2")


def test_a_defaults_threshold_judges_only_models_of_its_metric(suite):
    specs = suite("{threshold: 0.99}")
    assert (specs["rel"].metric, specs["rel"].threshold) == ("rel_l2", 0.5)
    assert (specs["cos"].metric, specs["cos"].threshold) == ("cosine", 0.99)

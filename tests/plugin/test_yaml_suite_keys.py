"""YAML suite settings a trial with the PP-OCR models found dropped silently or refused without
their key: ``inputs.shapes`` against ``input_shape``, shared ``defaults:`` op names, ``extra``
ATC options of a mode, and errors raised while an item runs."""
from __future__ import annotations

import onnx
import pytest

from pytest_ascend_accuracy.testing import models as tiny_models


@pytest.fixture
def suite_project(pytester):
    """models/: passing_mlp (fc1/MatMul, relu1, ...), conv_bn_relu (conv1, bn1, relu1, ...,
    fc), if_model (shape, batch, is_one, pick, relu: its Shape folded at a fixed shape) and
    unnamed_model (a dynamic batch)."""
    directory = pytester.mkdir("models")
    for name in ("passing_mlp", "conv_bn_relu", "if_model", "unnamed_model"):
        onnx.save(getattr(tiny_models, name)(), str(directory / f"{name}.onnx"))
    return pytester


COLLECTION_ERRORS = {
    # inputs.shapes and input_shape that disagree: input_shape won, shapes was dropped
    "accuracy_shapes": ("models:\n  - model: models/unnamed_model.onnx\n"
                        "    inputs: {seed: 0, shapes: {x: [2, 4]}}\n"
                        "    input_shape: {x: [3, 4]}\n",
                        "models[[]0[]].inputs.shapes.x: [[]2, 4[]] disagrees with "
                        "models[[]0[]].input_shape.x: [[]3, 4[]]; both set the shape of input "
                        "'x'*"),
    "accuracy_shared_shapes": ("defaults:\n  inputs: {seed: 1, shapes: {x: [2, 4]}}\n"
                               "models:\n  - model: models/unnamed_model.onnx\n"
                               "    input_shape: {x: [3, 4]}\n",
                               "defaults.inputs.shapes.x: [[]2, 4[]] disagrees with "
                               "models[[]0[]].input_shape.x: [[]3, 4[]]*"),
    # a defaults glob matching an op of no model of the suite: a typo
    "accuracy_glob_typo": ("defaults:\n  ignore: ['fcc*']\nmodels:\n"
                           "  - model: models/passing_mlp.onnx\n"
                           "  - model: models/conv_bn_relu.onnx\n",
                           "defaults.ignore: ignore entry 'fcc[*]' (a glob) names no op of any "
                           "model of this suite ('passing_mlp', 'conv_bn_relu'); an entry of "
                           "defaults applies to the models with an op it names*"),
    # refused only when the item converted, naming no key
    "accuracy_extra": ("models:\n  - model: models/passing_mlp.onnx\n"
                       "    modes: [{extra: {buffer_optimze: off_optimize}}]\n",
                       "models[[]0[]].modes[[]0[]].extra.buffer_optimze: unknown ATC option "
                       "'buffer_optimze'; closest: 'buffer_optimize', which is set by the mode "
                       "itself: write it as the mode's own key, not in extra; the mode meant, "
                       "whole: buffer_off in a YAML suite's modes or --mode, BUFFER_OFF in "
                       "Python (extra takes*"),
    # a misspelled keep_dtype name: refused when the item converted, under the test id
    "accuracy_keep": ("models:\n  - model: models/passing_mlp.onnx\n"
                      "    modes: [{keep_dtype: [relu]}]\n",
                      "models[[]0[]].modes[[]0[]].keep_dtype: keep_dtype entry 'relu' is not an "
                      "op of model 'passing_mlp'; closest: 'relu2', 'relu1'*"),
    "accuracy_shared_keep": ("defaults:\n  modes: [default, {keep_dtype: ['OpType::Relux']}]\n"
                             "models:\n  - model: models/passing_mlp.onnx\n",
                             "defaults.modes[[]1[]].keep_dtype: keep_dtype entry "
                             "'OpType::Relux': no op of type 'Relux' in model 'passing_mlp'*"),
}


def test_suite_settings_refused_at_collection_name_their_keys(suite_project):
    for name, (text, _) in COLLECTION_ERRORS.items():
        suite_project.makefile(".yaml", **{name: text})
    suite_project.makefile(".yaml", accuracy_agree=(
        "models:\n  - model: models/unnamed_model.onnx\n"
        "    inputs: {seed: 0, shapes: {x: [3, 4]}}\n    input_shape: {x: [3, 4]}\n"))
    result = suite_project.runpytest("-p", "no:cacheprovider", "--collect-only", "-q")
    result.assert_outcomes(errors=len(COLLECTION_ERRORS))
    for name, (_, match) in COLLECTION_ERRORS.items():
        result.stdout.fnmatch_lines([f"invalid accuracy suite: {name}.yaml: {match}"])
    result.stdout.fnmatch_lines(["accuracy_agree.yaml::unnamed_model[[]default[]]"])


def test_shapes_and_input_shape_of_different_inputs_combine(tmp_path):
    from pytest_ascend_accuracy.plugin.yaml_suite import load_suite

    from onnx import TensorProto
    from onnx import helper as h

    model = tmp_path / "m.onnx"  # two dynamic inputs: x [N, 4] and other [K]
    graph = h.make_graph([h.make_node("Identity", ["x"], ["y"], name="ix"),
                          h.make_node("Identity", ["other"], ["z"], name="io")], "two",
                         [h.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
                          h.make_tensor_value_info("other", TensorProto.FLOAT, ["K"])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4]),
                          h.make_tensor_value_info("z", TensorProto.FLOAT, ["K"])])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(model))
    (tmp_path / "accuracy.yaml").write_text(
        "models:\n  - model: m.onnx\n    inputs: {seed: 0, shapes: {x: [2, 4]}}\n"
        "    input_shape: {other: [1]}\n")
    (case,) = load_suite(tmp_path / "accuracy.yaml")
    assert case.input_shape == {"x": (2, 4), "other": (1,)}


def test_shared_names_apply_where_they_match_and_runtime_errors_name_the_key(suite_project):
    """A defaults glob matching ops of one model failed the others ('matches no op of model');
    an error raised while an item ran named its test id, not the key; the advice for a
    misspelled extra option, pasted, collects and runs."""
    suite_project.makefile(".yaml", accuracy_shared=(
        "defaults:\n  ignore: ['fc1/*']\n  inputs: {seed: 0}\nmodels:\n"
        "  - model: models/passing_mlp.onnx\n  - model: models/conv_bn_relu.onnx\n"
        "    modes: [{buffer_optimize: off_optimize}]\n"))
    suite_project.makefile(".yaml", accuracy_folded=(
        "defaults:\n  ignore: [shape]\nmodels:\n  - model: models/if_model.onnx\n"
        "    input_shape: {x: [1, 4]}\n"))
    suite_project.makefile(".yaml", accuracy_own=(
        "models:\n  - model: models/passing_mlp.onnx\n  - model: models/if_model.onnx\n"
        "    input_shape: {x: [1, 4]}\n    ignore: [batch]\n"))
    result = suite_project.runpytest("-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines([
        "PASSED accuracy_shared.yaml::passing_mlp[[]default[]]*",
        "PASSED accuracy_shared.yaml::conv_bn_relu[[]buffer_off[]]*"])
    result.stdout.fnmatch_lines([
        "*configuration error: accuracy_folded.yaml: defaults.ignore: ignore entry 'shape' "
        "names only ops never compared here*"])
    result.stdout.fnmatch_lines([
        "*configuration error: accuracy_own.yaml: models[[]1[]].ignore: ignore entry "
        "'batch' names only ops never compared here*"])

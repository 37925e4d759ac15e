"""A YAML entry's ``inputs:`` of files is ``{<input name>: <file>.npy}``: ``{npz: x.npz}`` said
only "must be a .npy file" and ``{npy: x.npy}`` "no model input named 'npy'" (a trial), neither
the spelling that works nor whether an .npz is read. The error names both, with the model's own
input names; the spelling it gives, filled in, loads."""
import re

import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.plugin.yaml_suite import load_suite
from pytest_ascend_accuracy.testing import models as tiny_models


@pytest.fixture
def suite(tmp_path):
    (tmp_path / "models").mkdir()
    onnx.save(tiny_models.passing_mlp(), str(tmp_path / "models" / "mlp.onnx"))  # input 'x'
    np.save(tmp_path / "line.npy", np.zeros((1, 16), np.float32))
    np.savez(tmp_path / "line.npz", x=np.zeros((1, 16), np.float32))

    def write(inputs):
        path = tmp_path / "accuracy_suite.yaml"
        path.write_text(f"models: [{{model: models/mlp.onnx, inputs: {inputs}}}]\n")
        return path
    return write


@pytest.mark.parametrize("inputs, key, why", [
    ("{npz: line.npz}", "npz", "a .npz archive is not read in a YAML suite, a .npy file per "
                               "input is (got 'line.npz': save each array with numpy.save)"),
    ("{x: line.npz}", "x", "a .npz archive is not read in a YAML suite, a .npy file per input "
                           "is (got 'line.npz': save each array with numpy.save)"),
    ("{npy: line.npy}", "npy", "no model input named 'npy'"),
])
def test_the_error_names_the_spelling_with_the_models_input_names(suite, inputs, key, why):
    path = suite(inputs)
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    assert str(info.value) == (
        f"{path}: models[0].inputs.{key}: {why}; write inputs: {{x: <file>.npy}} (the inputs "
        "of mlp.onnx: x), or {seed: N} for generated inputs")
    spelled = re.search(r"write inputs: (\{.+?\})", str(info.value)).group(1)
    case, = load_suite(suite(spelled.replace("<file>", "line")))  # filled in, as it says
    assert case.inputs.files == (("x", path.parent / "line.npy"),)


def test_a_name_differing_only_in_case_is_the_closest():
    # a trial: difflib compares case, so 'Img_A' was offered 'img_b' and 'X' nothing for 'x'
    from pytest_ascend_accuracy.errors import closest_text

    assert closest_text("Img_A", ["img_a", "img_b"]) == "; closest: 'img_a'"
    assert closest_text("IMG_A", ["img_a", "img_b"]) == "; closest: 'img_a'"
    assert closest_text("X", ["x"]) == "; closest: 'x'"
    assert closest_text("img_c", ["img_a", "img_b"]) == "; closest: 'img_b'"  # difflib's, as before
    assert closest_text("zzz", ["img_a"]) == ""


def test_an_input_left_out_is_refused_when_the_suite_loads_with_the_mapping_to_write(tmp_path):
    # a trial: the missing input was found only when the item ran, naming no key and no fix
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"], name="add")], "two",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in ("a", "b")],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "two.onnx"))
    np.save(tmp_path / "a.npy", np.zeros((1, 4), np.float32))
    path = tmp_path / "accuracy_suite.yaml"
    path.write_text("models: [{model: two.onnx, inputs: {a: a.npy}}]\n")
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    assert str(info.value).endswith(
        "models[0].inputs: model input 'b' not given; write inputs: {a: a.npy, b: <file>.npy} "
        "(the inputs of two.onnx: a, b), or {seed: N} for generated inputs"), info.value
    np.save(tmp_path / "b.npy", np.ones((1, 4), np.float32))
    path.write_text("models: [{model: two.onnx, inputs: {a: a.npy, b: b.npy}}]\n")  # filled in
    assert len(list(load_suite(path))) == 1


def test_a_sequence_input_is_refused_as_such_not_asked_for_as_a_file(tmp_path):
    # a review: a model with a sequence input was told to write `s: <file>.npy`; pasted, the
    # run failed 'unsupported element type 0'
    from onnx import TensorProto, helper

    seq = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)
    graph = helper.make_graph(
        [helper.make_node("SequenceLength", ["s"], ["n"], name="len"),
         helper.make_node("Identity", ["x"], ["y"], name="id")], "seq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]), seq],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("n", TensorProto.INT64, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "seq.onnx"))
    np.save(tmp_path / "x.npy", np.zeros((1, 4), np.float32))
    path = tmp_path / "accuracy_suite.yaml"
    path.write_text("models: [{model: seq.onnx, inputs: {x: x.npy}}]\n")
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    assert str(info.value).endswith(
        "models[0].inputs: model input 's' is a sequence, not a tensor: ATC has no sequence "
        "tensors and no file feeds it; export the model with a tensor in its place"), info.value

"""The dynamic-dimension advice is a value that runs pasted, and the shape a conversion takes
from its inputs leaves static models as they were (their cache keys unchanged)."""
import numpy as np
import pytest
from onnx import TensorProto, helper as h

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
from pytest_ascend_accuracy.graph.shape_advice import DynamicShapeError
from pytest_ascend_accuracy.graph.shape_from_inputs import left_dynamic, shape_from_inputs
from pytest_ascend_accuracy.testing import models as tiny_models


def _model(*inputs):
    vis = [h.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs]
    nodes = [h.make_node("Identity", [n], [f"{n}_out"]) for n, _ in inputs]
    outs = [h.make_tensor_value_info(f"{n}_out", TensorProto.FLOAT, None) for n, _ in inputs]
    return h.make_model(h.make_graph(nodes, "g", vis, outs),
                        opset_imports=[h.make_opsetid("", 13)])


def test_the_advice_pasted_makes_the_inputs():
    """PP-OCRv4 rec's input [?, 3, ?, ?] (dim_params 'p2o.DynamicDimension.0', '?', ...)."""
    model = _model(("x", ["p2o.DynamicDimension.0", 3, "?", "p2o.DynamicDimension.1"]))
    with pytest.raises(DynamicShapeError) as info:
        make_inputs(model)
    assert "(...)" not in str(info.value)
    assert str(info.value).endswith("e.g. with 1 for each dynamic dimension: "
                                    "input_shape={'x': (1, 3, 1, 1)}")
    assert info.value.yaml_text().endswith("add to the entry: input_shape: {x: [1, 3, 1, 1]}")
    assert info.value.cli_text.endswith("--input-shape 'x:1,3,1,1'")
    pasted = {}
    exec(str(info.value).split("dimension: ")[-1], pasted)  # "input_shape={...}": Python
    assert make_inputs(model, input_shape=pasted["input_shape"])["x"].shape == (1, 3, 1, 1)


def test_an_input_without_a_declared_rank_gets_a_1d_example_said_as_such():
    with pytest.raises(DynamicShapeError) as info:
        make_inputs(_model(("ids", None)))
    assert "input_shape={'ids': (1,)}; 'ids' declares no rank" in str(info.value)


def test_odd_input_names_are_quoted_in_the_yaml_form():
    with pytest.raises(DynamicShapeError) as info:
        make_inputs(_model(("in:0", ["N"])))
    assert info.value.yaml_text().endswith('input_shape: {"in:0": [1]}')


def test_the_shape_comes_from_the_arrays_only_where_the_model_leaves_it_open():
    static = tiny_models.passing_mlp()
    arrays = make_inputs(static)
    assert shape_from_inputs(static, None, arrays) is None  # a static model: as it was
    dyn = _model(("a", ["N", 4]), ("b", [2, 4]))
    assert left_dynamic(dyn) == ["a"] and left_dynamic(dyn, "a:3,4") == []
    got = shape_from_inputs(dyn, None, {"a": np.zeros((5, 4)), "b": np.zeros((2, 4))})
    assert got == {"a": (5, 4)}
    assert shape_from_inputs(dyn, {"a": (3, 4)}, {"a": np.zeros((5, 4))}) == {"a": (3, 4)}


def test_the_ascend_backend_advice_is_a_shape_to_paste(tmp_path):
    from pytest_ascend_accuracy.backends.ascend.backend import input_shapes_for_atc

    inputs = {"x": (-1, 3, -1), "y": (2,)}
    with pytest.raises(ConfigError) as info:
        input_shapes_for_atc(tmp_path / "m.onnx", inputs, None)
    assert str(info.value).endswith("input_shape={'x': (1, 3, 1)}")
    assert input_shapes_for_atc(tmp_path / "m.onnx", inputs, {"x": (1, 3, 1)}) == {
        "x": (1, 3, 1), "y": (2,)}


def test_a_declared_zero_is_said_to_be_read_as_open_and_why_no_zero_converts():
    """An onnx sweep (its *_empty_set tests): a dimension declared 0 was called dynamic and
    shown '?', though onnxruntime's own words said 'Expected: 0'; it is read as a size left
    open (exporters write 0 so), and the error says so and that ATC converts no size 0."""
    import onnx
    from onnx import TensorProto, helper

    from pytest_ascend_accuracy.graph.onnx_graph import resolve_input_shapes
    from pytest_ascend_accuracy.graph.shape_advice import DynamicShapeError

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "zero",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 0, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 0, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    with pytest.raises(DynamicShapeError) as info:
        resolve_input_shapes(model, require_static=True)
    text = str(info.value)
    assert "input 'x' dimension 1 (declared 0) is dynamic (a declared 0 is read as a size " \
           "left open, as exporters write it; a real size 0 is no input ATC converts, " \
           "E10011" in text, text

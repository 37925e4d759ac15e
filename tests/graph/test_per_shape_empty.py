"""``graph.per_shape``: an array of size 0 where the model leaves the size open is refused before
the conversion is made, naming the array as its caller says where it came from, and the model;
``EmptyInputError.retold`` names another origin (a dataset check's sample)."""
import pytest
from onnx import TensorProto, helper

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.per_shape import EmptyInputError, PerShape

np = pytest.importorskip("numpy")


def _model(dims):
    node = helper.make_node("Relu", ["data"], ["out"], name="relu")
    graph = helper.make_graph([node], "empty_set",
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, dims)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_an_empty_array_is_refused_before_its_conversion_naming_where_it_came_from():
    made = []
    shapes = PerShape(_model([2, 0, 4]), None, made.append,
                      origin=lambda name: f"the array of {name!r} here")
    with pytest.raises(EmptyInputError) as info:
        shapes.get({"data": np.zeros((2, 0, 4), np.float32)}, "where")
    assert made == []  # nothing converted
    assert isinstance(info.value, ConfigError)
    assert str(info.value).startswith(
        "where: input 'data' of empty_set is empty: the array of 'data' here has shape "
        "[2, 0, 4] (the model declares [2, 0, 4]), and the conversion takes that shape; ATC "
        "refuses a size below 1"), str(info.value)
    retold = info.value.retold("sample 'a'", "the sample's array")
    assert str(retold).startswith("sample 'a': input 'data' of empty_set is empty: the "
                                  "sample's array has shape [2, 0, 4] (the model declares")
    # a full array of the model (its declared 0 is a size left open) converts
    shapes.get({"data": np.zeros((2, 3, 4), np.float32)}, "where")
    assert made == [{"data": (2, 3, 4)}]


def test_a_file_is_named_as_given_and_an_open_size_as_the_model_declares_it(tmp_path):
    import onnx

    path = tmp_path / "dyn.onnx"
    onnx.save(_model(["N", 4]), str(path))
    with pytest.raises(EmptyInputError, match=r"input 'data' of .*dyn\.onnx is empty: the "
                                              r"array given for it has shape \[0, 4\] \(the "
                                              r"model file declares \[N, 4\]\)"):
        PerShape(str(path), None, lambda shape: shape).get(
            {"data": np.zeros((0, 4), np.float32)}, "w")

"""A node reading a tensor nothing makes (a broken export) is refused where the model is
prepared, naming the node and the tensor: the golden run and the emulator failed on it with
a bare ``KeyError`` (``emulator run of 'bad' failed: 'bn_b'``)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.golden.onnxruntime_golden import run_golden
from pytest_ascend_accuracy.graph.prepare import prepare_model


def _model(second_input: str):
    w = numpy_helper.from_array(np.ones((4, 4), np.float32), "W")
    b = numpy_helper.from_array(np.ones((1, 4), np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["c"], name="mm"),
             helper.make_node("Add", ["c", second_input], ["y"], name="add")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph(nodes, "g", [x], [y], [w, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_a_tensor_nothing_makes_is_named_with_its_node(tmp_path):
    path = tmp_path / "bad.onnx"
    onnx.save(_model("bn_b"), str(path))
    message = (r"bad\.onnx: node 'add' \(Add\) reads 'bn_b', which is no graph input, no "
               r"initializer and no node's output: the model is broken")
    with pytest.raises(ConfigError, match=message):
        prepare_model(str(path))
    with pytest.raises(ConfigError, match=message):
        run_golden(str(path), {"x": np.ones((1, 4), np.float32)}, tmp_path / "golden")


def test_initializers_inputs_and_outputs_are_made():
    prepare_model(_model("b"))  # an initializer
    optional = _model("b")
    optional.graph.node[1].input.append("")  # an optional input left out
    prepare_model(optional)

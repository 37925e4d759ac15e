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


def _optional_left_out():
    """Clip's ``min`` left out (""), its ``max`` given (an ``Add`` with a third input "",
    the case before, is a model onnxruntime refuses: Add takes two)."""
    model = _model("b")
    model.graph.initializer.append(numpy_helper.from_array(np.array(6.0, np.float32), "hi"))
    model.graph.node[1].CopyFrom(helper.make_node("Clip", ["c", "", "hi"], ["y"], name="clip"))
    return model


def _sparse():
    """``b`` a sparse initializer (its values' name is the tensor's)."""
    model = _model("b")
    del model.graph.initializer[1]
    values = numpy_helper.from_array(np.array([2.0], np.float32), "b")
    indices = numpy_helper.from_array(np.array([3], np.int64), "b_indices")
    model.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [1, 4]))
    return model


def _ir3():
    """IR 3 (before 4, every initializer was listed as a graph input too)."""
    model = _model("b")
    model.ir_version = 3
    model.opset_import[0].version = 8
    model.graph.input.extend(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                             for t in model.graph.initializer)
    return model


def _if_reads_outer_scope():
    """An ``If`` whose branches read ``c`` and ``b`` of the graph around them and ``t`` of
    their own: only the top-level node inputs (here: ``cond``) are checked, against the
    top-level tensors (a branch's ``t`` is none of them)."""
    model = _model("b")
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4])
    branches = [helper.make_graph([helper.make_node(op, ["c", "b"], ["t"], name=op.lower()),
                                   helper.make_node("Relu", ["t"], ["out"], name="relu")],
                                  f"{op.lower()}_branch", [], [out]) for op in ("Add", "Sub")]
    model.graph.node[1].CopyFrom(helper.make_node(
        "If", ["cond"], ["y"], name="if", then_branch=branches[0], else_branch=branches[1]))
    model.graph.input.append(helper.make_tensor_value_info("cond", TensorProto.BOOL, []))
    return model


def _local_function():
    """A node of a model-local function (an onnx FunctionProto) reading an initializer."""
    model = _model("b")
    add_b = helper.make_function("local", "AddB", ["p", "q"], ["r"],
                                 [helper.make_node("Add", ["p", "q"], ["r"])],
                                 [helper.make_opsetid("", 13)])
    model.functions.append(add_b)
    model.opset_import.append(helper.make_opsetid("local", 1))
    model.graph.node[1].CopyFrom(helper.make_node("AddB", ["c", "b"], ["y"], name="add_b",
                                                  domain="local"))
    return model


@pytest.mark.parametrize("build", [
    lambda: _model("b"), _optional_left_out, _sparse, _ir3, _if_reads_outer_scope,
    _local_function], ids=["initializer", "optional input left out", "sparse initializer",
                           "IR 3 initializers as inputs", "If reads outer scope",
                           "model-local function"])
def test_every_way_a_tensor_is_made_is_made(build):
    import onnxruntime as ort

    model = build()
    # a valid model: onnxruntime loads it (a case it refused would prove nothing)
    ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    prepare_model(model)

"""Preparation of conformance-sweep models: an ``If`` decided by input values kept over its
inlined branch, and empty (zero-size) inputs, whose advice must not send the user to a shape
that is then refused."""
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper as h, numpy_helper as nh  # noqa: E402

from pytest_ascend_accuracy.errors import ConfigError  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import mark_all_outputs, ort_session  # noqa: E402
from pytest_ascend_accuracy.graph.prepare import prepare_model  # noqa: E402


def _if_model():
    then_g = h.make_graph([h.make_node("Add", ["x", "c"], ["t"])], "then", [],
                          [h.make_tensor_value_info("t", TensorProto.FLOAT, [3])])
    else_g = h.make_graph([h.make_node("Neg", ["x"], ["e"], name="negate")], "else", [],
                          [h.make_tensor_value_info("e", TensorProto.FLOAT, [3])])
    nodes = [h.make_node("ReduceSum", ["x"], ["s"], keepdims=0, name="sum"),
             h.make_node("Greater", ["s", "zero"], ["cond"], name="gt"),
             h.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g,
                         name="branch"),
             h.make_node("Relu", ["y"], ["z"], name="relu")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                     [h.make_tensor_value_info("z", TensorProto.FLOAT, [3])],
                     initializer=[nh.from_array(np.array(0, np.float32), "zero"),
                                  nh.from_array(np.array([1, 2, 3], np.float32), "c")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("x, node, value", [([1, 2, 3], "branch/then/Add_0", [2, 4, 6]),
                                            ([-1, -2, -3], "negate", [1, 2, 3])])
def test_an_if_known_from_the_inputs_only_stays_over_its_inlined_branch(x, node, value):
    """The device converts without inputs and runs the If as one operator: the golden keeps
    it, under its name, reading the branch's nodes inlined before it."""
    x = np.array(x, np.float32)
    prepared = prepare_model(_if_model(), inputs={"x": x})
    graph = prepared.model.graph
    names = [n.name for n in graph.node]
    assert names == ["sum", "gt", node, "branch", "relu"]
    kept = graph.node[3]
    assert list(kept.input) == ["cond"] and list(kept.output) == ["y"]
    assert prepared.report.kept_ifs == ("branch",) and prepared.report.subgraph_ops == ()
    assert prepared.report.inlined_ifs == (("branch", "then" if x[0] > 0 else "else"),)
    outs = [o for n in graph.node for o in n.output]
    mark_all_outputs(prepared.model)
    values = dict(zip(outs, ort_session(prepared.model.SerializeToString()).run(outs, {"x": x})))
    np.testing.assert_array_equal(values["y"], value)
    np.testing.assert_array_equal(values[graph.node[2].output[0]], value)


def test_without_inputs_the_if_is_left_as_it_is():
    prepared = prepare_model(_if_model())
    assert [n.name for n in prepared.model.graph.node] == ["sum", "gt", "branch", "relu"]
    assert prepared.report.kept_ifs == () and prepared.report.subgraph_ops == (("branch", "If"),)


def _empty_axes_model():
    g = h.make_graph([h.make_node("ReduceSum", ["data", "axes"], ["y"], name="rs", keepdims=1)],
                     "rsum", [h.make_tensor_value_info("data", TensorProto.FLOAT, [3, 2]),
                              h.make_tensor_value_info("axes", TensorProto.INT64, ["n"])],
                     [h.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def test_the_dynamic_input_advice_says_up_front_that_atc_takes_no_zero_dimension():
    with pytest.raises(ConfigError) as info:
        prepare_model(_empty_axes_model())
    assert str(info.value).endswith(
        "choose it (the sizes of the data you test with; a check converts one static shape, the "
        "shape of the inputs it compares, each size 1 or more (E10011)), e.g. with 1 for each "
        "dynamic dimension: "
        "input_shape={'axes': (1,)}")
    assert info.value.cli_text.endswith(
        "each size 1 or more (E10011)), e.g. with 1 for each dynamic dimension: "
        "--input-shape 'axes:1'")


def test_an_empty_input_shape_is_refused_saying_why_and_what_to_do():
    """The real shape of an empty input, pasted: ATC refuses it (E10011), and so do we, once,
    clearly, with the way out (the first message no longer suggests it)."""
    with pytest.raises(ConfigError) as info:
        prepare_model(_empty_axes_model(), input_shape={"axes": (0,)})
    assert str(info.value) == (
        "input_shape: shape of input 'axes' must be positive ints, got [0]: ATC refuses a size "
        "below 1 for an input it converts static (E10011), so an empty input cannot be fed to a "
        "converted "
        "model; make it a constant of the model (an initializer), or leave an optional input "
        "out of it")


def test_the_golden_runs_an_empty_input_it_is_given():
    """onnxruntime runs it: the shape came from the array, not from an input_shape (the golden
    refused it as "input_shape: ... must be positive ints" though none was given)."""
    inputs = {"data": np.ones((3, 2), np.float32), "axes": np.zeros((0,), np.int64)}
    prepared = prepare_model(_empty_axes_model(), inputs=inputs)
    assert dict(prepared.report.input_shapes)["axes"] == (0,)

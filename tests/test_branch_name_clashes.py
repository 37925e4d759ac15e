"""Ops sharing a name inside an If branch (a review): ATC's ONNX parser parses each branch as a
graph of its own, with a Data op for each outer value the If's branches read (its
IfSubgraphAdapter adds them as inputs), and its pre-check stops at a repeated name with E19009;
two branch nodes of one name failed in onnxruntime's words here, and a branch node named like
an outer value it reads converted and ran. A branch node named like a main-graph node is fine."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.parser_refusals import atc_parse_error, name_refusal
from pytest_ascend_accuracy.graph.prepare import prepare_model


def _if_model(then_names):
    """x -> Relu 'r' -> If(sum(r) > 0): then Neg, Abs of r (named ``then_names``), else r."""
    vi = h.make_tensor_value_info
    then = h.make_graph([h.make_node("Neg", ["r"], ["t1"], name=then_names[0]),
                         h.make_node("Abs", ["t1"], ["t2"], name=then_names[1])], "then", [],
                        [vi("t2", TP.FLOAT, [3])])
    other = h.make_graph([h.make_node("Identity", ["r"], ["e"], name="else/id")], "else", [],
                         [vi("e", TP.FLOAT, [3])])
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"),
             h.make_node("ReduceSum", ["r"], ["s"], name="rsum", keepdims=0),
             h.make_node("Greater", ["s", "zero"], ["c"], name="gt"),
             h.make_node("If", ["c"], ["y"], name="if", then_branch=then, else_branch=other)]
    graph = h.make_graph(nodes, "brm", [vi("x", TP.FLOAT, [3])], [vi("y", TP.FLOAT, [3])],
                         [onnx.numpy_helper.from_array(np.array(0.0, np.float32), "zero")])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])


@pytest.mark.parametrize("names, said", [
    (["bdup", "bdup"], "'bdup' names node[0] (Neg) and node[1] (Abs)"),
    (["r", "abs"], "'r' names node[0] (Neg) and graph input 'r' (its Data op)")])
def test_a_name_shared_inside_a_branch_is_refused_as_atc_refuses_it(names, said):
    model = _if_model(names)
    text = name_refusal("brm", model.graph)
    assert text.startswith("model 'brm' has ops that share a name in the then_branch of If 'if' "
                           "(a branch is parsed as a graph of its own, with a Data op for each "
                           "outer value the If's branches read): " + said)
    assert f"E19009 \"Op [{names[0]}] has a name conflict in the graph.\"" in text
    assert atc_parse_error(model) == ("E19009", f"Op [{names[0]}] has a name conflict in the "
                                                f"graph.")
    with pytest.raises(ConfigError, match="share a name in the then_branch"):
        prepare_model(model)


def test_a_branch_node_named_like_a_main_graph_node_is_taken():
    model = _if_model(["relu", "gt"])
    assert name_refusal("brm", model.graph) == "" and atc_parse_error(model) is None


def _unnamed_model(branch_abs_name):
    """An unnamed Relu in the main graph, and in the then branch an unnamed Neg (ATC: Neg_1,
    its counter of unnamed nodes goes on from the main graph) and an Abs named as given."""
    vi = h.make_tensor_value_info
    then = h.make_graph([h.make_node("Neg", ["r"], ["t1"]),
                         h.make_node("Abs", ["t1"], ["t2"], name=branch_abs_name)], "then", [],
                        [vi("t2", TP.FLOAT, [3])])
    other = h.make_graph([h.make_node("Identity", ["r"], ["e"], name="else/id")], "else", [],
                         [vi("e", TP.FLOAT, [3])])
    nodes = [h.make_node("Relu", ["x"], ["r"]),
             h.make_node("ReduceSum", ["r"], ["s"], name="rsum", keepdims=0),
             h.make_node("Greater", ["s", "zero"], ["c"], name="gt"),
             h.make_node("If", ["c"], ["y"], name="if", then_branch=then, else_branch=other)]
    graph = h.make_graph(nodes, "bu", [vi("x", TP.FLOAT, [3])], [vi("y", TP.FLOAT, [3])],
                         [onnx.numpy_helper.from_array(np.array(0.0, np.float32), "zero")])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])


def test_unnamed_branch_nodes_are_numbered_on_from_the_main_graph():
    """A review (H47): ATC names unnamed nodes with one counter across the main graph and then
    its subgraphs; each branch counted from 0 here, refusing a branch Abs named 'Neg_0' (ATC
    takes it: the unnamed Neg is Neg_1) and taking one named 'Neg_1' (ATC refuses it)."""
    assert atc_parse_error(_unnamed_model("Neg_0")) is None
    assert atc_parse_error(_unnamed_model("Neg_1")) == (
        "E19009", "Op [Neg_1] has a name conflict in the graph.")


def test_an_unnamed_if_is_named_as_atc_names_it():
    """A review (H49): an unnamed If was called by its position ('If_3'); ATC and the
    normalised graph call it by the counter of unnamed nodes ('If_0')."""
    model = _if_model(["bdup", "bdup"])
    model.graph.node[3].name = ""
    assert "in the then_branch of If 'If_0'" in name_refusal("brm", model.graph)


def test_refused_ops_are_named_by_atc_s_counter_not_their_position():
    """A review (H50): an unnamed ArgMax second in its graph, after a named op, was 'ArgMax_1'
    (its position); ATC's counter of unnamed nodes calls it 'ArgMax_0'."""
    vi = h.make_tensor_value_info
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"),
             h.make_node("ArgMax", ["r"], ["y"], axis=1, keepdims=0, select_last_index=1)]
    graph = h.make_graph(nodes, "am", [vi("x", TP.FLOAT, [1, 4])], [vi("y", TP.INT64, [1])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    code, text = atc_parse_error(model)
    assert code == "E11010" and text.startswith("Failed to parse the parameters of Op "
                                                "[ArgMax_0], optype [ai.onnx::13::ArgMax].")

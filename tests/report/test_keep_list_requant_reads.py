"""``report.requant_reads`` (review RD of audit 35): the ops making in float16 what a quantiser
a keep list adds reads, up every input, through integer and float32 ops, stopping where nothing
rounds. Models from ``onnx.helper``; the plugin-level contract (the hint pasted passes, or says
it may still fail) is ``tests/plugin/test_keep_list_requant_reads_pasted.py``."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.compare.golden_edges import graph_edges
from pytest_ascend_accuracy.report.requant_reads import float16_reads


def _model(nodes, inits=()):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _reads_model():
    """x -> act (Sigmoid) -> q1 (DynamicQuantizeLinear) -> conv (ConvInteger) -> cast ->
    wide (float32 already) -> add -> scaled -> q2 (the quantiser walked from), ``scaled``
    multiplying by ``add``'s Shape (``shape``, cast by ``shape_f``); ``kept_op`` (kept) feeding
    ``add`` too."""
    nodes = [helper.make_node("Sigmoid", ["x"], ["a"], name="act"),
             helper.make_node("DynamicQuantizeLinear", ["a"], ["aq", "as", "az"], name="q1"),
             helper.make_node("ConvInteger", ["aq", "w", "az"], ["acc"], name="conv"),
             helper.make_node("Cast", ["acc"], ["accf"], name="cast", to=TensorProto.FLOAT),
             helper.make_node("Mul", ["accf", "as"], ["wide"], name="wide"),
             helper.make_node("Tanh", ["x"], ["k"], name="kept_op"),
             helper.make_node("Add", ["wide", "k"], ["r"], name="add"),
             helper.make_node("Shape", ["r"], ["s"], name="shape"),
             helper.make_node("Cast", ["s"], ["sf"], name="shape_f", to=TensorProto.FLOAT),
             helper.make_node("Mul", ["r", "sf"], ["r2"], name="scaled"),
             helper.make_node("DynamicQuantizeLinear", ["r2"], ["yq", "ys", "yz"], name="q2")]
    return _model(nodes, [numpy_helper.from_array(np.ones((4, 4, 1, 1), np.int8), "w")])


def test_the_reads_walk_keeps_float16_ops_up_every_input_and_stops_where_nothing_rounds():
    graph = graph_edges(_reads_model())
    dtypes = {"act": "float16", "q1": "float16", "conv": "int32", "cast": "float16",
              "wide": "float32", "add": "float16", "shape": "int64", "scaled": "float16"}
    keep_name = {op: op for op in [*dtypes, "kept_op"]}  # (no row of shape_f: not named)
    ops = float16_reads(graph, "q2", {"kept_op"}, keep_name,
                        lambda op: dtypes[op] == "float16" if op in dtypes else None)
    # through the float32 Mul and the integer ConvInteger (not kept) to the Sigmoid; not the
    # kept Tanh, nor the Shape (reached through its Cast, unnamed) and what it reads
    assert ops == ["scaled", "add", "cast", "q1", "act"], ops
    assert float16_reads(graph, "q2", {"kept_op"}, keep_name,
                         lambda op: dtypes[op] == "float16" if op in dtypes else None,
                         left_out={"add"}) == ["scaled", "cast", "q1", "act"]
    # q1 reads the Sigmoid, which reads the graph input: nothing further up to keep
    assert float16_reads(graph, "q1", set(), keep_name, lambda op: True) == ["act"]
    assert float16_reads(graph, "act", set(), keep_name, lambda op: True) == []


def test_through_kept_ops_the_walk_reaches_a_branch_and_an_unkept_quantiser_is_found():
    """Review RK of audit 36: a kept join's float16 branch (K2); a quantiser no list keeps that
    kept values reach (K1); only a worst-position check walks at all (K3)."""
    from pytest_ascend_accuracy.compare.thresholds import Policy
    from pytest_ascend_accuracy.report.requant_reads import (unkept_quantiser,
                                                             worst_position_judged)

    graph = graph_edges(_reads_model())
    keep_name = {op: op for op in graph[0]}
    DQL = {"DynamicQuantizeLinear"}
    # from q2 up through the kept Add, Mul and Cast (and past the integer ConvInteger) to q1
    # and the Sigmoid, which stopping at kept ops never reaches
    kept = {"scaled", "add", "wide", "cast", "kept_op"}
    half = {"act", "q1"}.__contains__  # (the others integer or float32 here)
    assert float16_reads(graph, "q2", kept, keep_name, half) == []
    assert float16_reads(graph, "q2", kept, keep_name, half, through_kept=True) == ["q1", "act"]
    assert unkept_quantiser(graph, {"act"}, DQL) == ("q1", "act")
    assert unkept_quantiser(graph, {"kept_op"}, DQL) == ("q2", "kept_op")
    assert unkept_quantiser(graph, {"kept_op", "q2"}, DQL) is None
    assert not worst_position_judged(Policy.build(0.99))
    assert worst_position_judged(Policy.build(0.99, per_op={"out": {"max_abs": 0.001}}))
    assert worst_position_judged(None)

"""Helpers of the streaming tests (test_streaming.py, test_streaming_build_ahead.py)."""
import onnx
from onnx import TensorProto, helper

from pytest_ascend_accuracy.graph.onnx_graph import mark_all_outputs, ort_session


def one_run(model, feeds):
    ref = onnx.ModelProto()
    ref.CopyFrom(model)
    names = [o for n in ref.graph.node for o in n.output if o]
    mark_all_outputs(ref)
    return dict(zip(names, ort_session(ref.SerializeToString()).run(names, feeds)))


def chain(n=24, width=64 * 1024):
    """x -> (Add 1, Relu) * n/2: every tensor is width float32s, each read by the next node only."""
    nodes, inits = [], [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])]
    prev = "x"
    for k in range(n):
        out = f"t{k}"
        nodes.append(helper.make_node("Add" if k % 2 == 0 else "Relu",
                                      [prev, "one"] if k % 2 == 0 else [prev], [out], name=f"n{k}"))
        prev = out
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, width])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def runner_fills_its_window(run):
    """Wait (bounded) until the runner has computed all it may before the caller's next take:
    ``ahead`` segments, or those left. A consumer that slept a few milliseconds instead found a
    runner late on a loaded machine (30 ms late: the window never filled, and the caller
    waited for segments and built their sessions itself)."""
    runner, segments = run._runner, run.model.segments
    if runner is None:
        return
    left = sum(1 for t in range(run._next, len(segments)) if segments[t].outputs)
    with runner.cond:
        assert runner.cond.wait_for(
            lambda: len(runner.ready) >= min(runner.ahead, left) or runner.finished
            or runner.failed is not None, timeout=60)

"""A detector's selection in miniature (T2: Faster R-CNN's RPN TopK): scores that float16
computes with errors wider than their gaps (a coarse term lifted to 64 and back, where float16's
step is 1/16, plus a fine one), a TopK over them, a Gather of boxes by its indices and an op
after it whose golden values leave float16's range (box sides times 3e4, up to 9e4), then one
more (its Sqrt). On the emulator the TopK lists nearly the golden's set in another order, its
values distinct, so the Gather fails by position; ``area`` overflows in float16."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

#: the ops after the TopK, in graph order, and those whose values leave float16's range
AFTER = ("gather", "area", "side")
OVERFLOW = ("area", "side")


def near_tie_detector(n=300, k=100, feat=16, seed=0, big=3e4):
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((feat, n)) * 0.25).astype(np.float32)
    w2 = (rng.standard_normal((feat, n)) * 0.005).astype(np.float32)
    boxes = rng.uniform(0, 3, (n, 4)).astype(np.float32)

    def const(a, name):
        return numpy_helper.from_array(np.asarray(a), name)

    nodes = [helper.make_node("MatMul", ["x", "w1"], ["coarse"], name="coarse"),
             helper.make_node("Add", ["coarse", "offset"], ["lifted"], name="lift"),
             helper.make_node("Sub", ["lifted", "offset"], ["rough"], name="drop"),
             helper.make_node("MatMul", ["x", "w2"], ["fine"], name="fine"),
             helper.make_node("Add", ["rough", "fine"], ["scores"], name="scores"),
             helper.make_node("TopK", ["scores", "k"], ["top_v", "top_i"], name="topk", axis=-1),
             helper.make_node("Gather", ["boxes", "top_i"], ["picked"], name="gather", axis=0),
             helper.make_node("Mul", ["picked", "big"], ["area"], name="area"),
             helper.make_node("Sqrt", ["area"], ["side"], name="side")]
    graph = helper.make_graph(
        nodes, "near_tie_detector",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, feat])],
        [helper.make_tensor_value_info("side", TensorProto.FLOAT, [1, k, 4]),
         helper.make_tensor_value_info("top_v", TensorProto.FLOAT, [1, k])],
        [const(w1, "w1"), const(w2, "w2"), const(np.array([64.0], np.float32), "offset"),
         const(np.array([k], np.int64), "k"), const(boxes, "boxes"),
         const(np.array([big], np.float32), "big")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])

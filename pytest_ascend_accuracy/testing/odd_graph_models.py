"""Models of the odd-graphs and transformer trials' refusals, built in code (the shapes of the
trials' files): an IR 3 model listing its weights as inputs, two nodes of one name, a Trilu
folded at conversion. Shared by ``tests/test_odd_graph_fixes.py`` and
``tests/plugin/test_odd_graph_trial_fixes.py``."""
from __future__ import annotations

import numpy as np


def ir3_model():
    """x [2,8] -> MatMul W -> Add B -> Relu -> y, W and B listed as graph inputs too, as
    IR 3 (opset 7) requires of initializers (the trial's opset7_ir3.onnx)."""
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    w = nh.from_array(np.eye(8, dtype=np.float32), "W")
    b = nh.from_array(np.zeros(8, np.float32), "B")
    g = h.make_graph([h.make_node("MatMul", ["x", "W"], ["mm"]),
                      h.make_node("Add", ["mm", "B"], ["a"]),
                      h.make_node("Relu", ["a"], ["y"])], "ir3",
                     [h.make_tensor_value_info("x", T.FLOAT, [2, 8]),
                      h.make_tensor_value_info("W", T.FLOAT, [8, 8]),
                      h.make_tensor_value_info("B", T.FLOAT, [8])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 8])], [w, b])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 7)])
    m.ir_version = 3
    return m


def dup_model(first: str = "dup", second: str = "dup"):
    """x [2,8] -> MatMul W (unnamed) -> Relu (``first``) -> Sigmoid (``second``) -> Add x
    (unnamed) -> Mul x (named 'Add_3') -> y: by default node[1] and node[2] both 'dup' (the
    trial's dupname.onnx)."""
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    w = nh.from_array(np.eye(8, dtype=np.float32) * 0.5, "W")
    g = h.make_graph([h.make_node("MatMul", ["x", "W"], ["mm"]),
                      h.make_node("Relu", ["mm"], ["relu"], name=first),
                      h.make_node("Sigmoid", ["relu"], ["sig"], name=second),
                      h.make_node("Add", ["sig", "x"], ["add"]),
                      h.make_node("Mul", ["add", "x"], ["y"], name="Add_3")], "dups",
                     [h.make_tensor_value_info("x", T.FLOAT, [2, 8])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 8])], [w])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def trilu_model(running_trilu: bool = False):
    """A causal mask: Trilu of a constant ('causal_mask', folded at conversion) times x [1,4,4]
    ('apply_mask'), a Softmax; ``running_trilu``: a Trilu of the masked x ('tri_of_x', which
    runs) before the Softmax."""
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    nodes = [h.make_node("Trilu", ["ones"], ["mask"], name="causal_mask", upper=0),
             h.make_node("Mul", ["x", "mask"], ["masked"], name="apply_mask"),
             h.make_node("Softmax", ["masked"], ["y"], name="softmax", axis=-1)]
    if running_trilu:
        nodes[-1:] = [h.make_node("Trilu", ["masked"], ["tri"], name="tri_of_x", upper=1),
                      h.make_node("Softmax", ["tri"], ["y"], name="softmax", axis=-1)]
    g = h.make_graph(nodes, "trilu_folded", [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 4])],
                     [nh.from_array(np.ones((4, 4), np.float32), "ones")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 14)])
    m.ir_version = 8
    return m

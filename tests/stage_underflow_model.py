"""A model whose float16 run loses values stage after stage (the float16-underflow fix that may
still fail pasted; T1's LR-ASPP with random BatchNorm statistics): ``x @ w0``, ``w0`` flushing to
0 in float16 (the first failure, mm0), then 5 more MatMul+Relu stages, each scaling the values
by about ``shrink`` (0.5: stage 4 flushes values of its own, mm4act4; 1: none does), and a Mul
by 1e8."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper


def stage_underflow_model(shrink=0.5):
    rng = np.random.default_rng(1)
    inits, nodes, cur = [], [], "x"
    for k in range(6):
        w = rng.uniform(0.5, 1.5, (64, 64)) * (1e-8 if k == 0 else shrink / 64)
        inits.append(numpy_helper.from_array(w.astype(np.float32), f"w{k}"))
        nodes += [helper.make_node("MatMul", [cur, f"w{k}"], [f"m{k}"], name=f"mm{k}"),
                  helper.make_node("Relu", [f"m{k}"], [f"r{k}"], name=f"act{k}")]
        cur = f"r{k}"
    inits.append(numpy_helper.from_array(np.array(1e8, np.float32), "g"))
    nodes.append(helper.make_node("Mul", [cur, "g"], ["y"], name="grow"))
    graph = helper.make_graph(
        nodes, "stages", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model

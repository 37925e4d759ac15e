"""Tiny deterministic ONNX models built with ``onnx.helper`` (tests, examples, demos).

Each builder returns an ``onnx.ModelProto`` with fixed weights (seeded numpy), opset 17:

- ``passing_mlp``: three MatMul+bias layers with Relu; passes in fp16.
- ``overflow`` (``overflow_model``): an MLP whose BatchNormalization ``norm`` has running
  variances of 1e9 (past fp16's 65504, like the real PP-OCRv4 detector's first BN): in fp16 the
  variance becomes inf and most channels collapse to the bias, so default mode fails first at
  ``norm``; high
  precision (vector ops fp32) and ``keep_dtype(["norm"])`` pass. The overflow sits in an
  operand *of* ``norm`` on purpose: a value that overflows at an op's *output* is cast to fp16
  again at its consumer's input (on the NPU as in the emulator), so keeping one op fp32 cannot
  fix that case; it needs the consumer kept too.
- ``two_overflows``: like ``overflow`` with two such BatchNormalizations in a row (``norm_a``,
  ``norm_b``): keeping either alone in fp32 is not enough, only both together pass (triage).
- ``conv_bn_relu``: two Conv+BatchNormalization+Relu blocks (fusable), pooling, Gemm.
- ``transformer_block``: LayerNorm subgraph, attention (MatMul, Softmax), Gelu subgraph MLP,
  residuals; node names in PyTorch export style (``/attn/q/MatMul``); fp16 error is real but
  stays well within cosine 0.95.
- ``if_model``: an ``If`` on a shape condition (static once shapes are known), and
  ``unnamed_model``: unnamed nodes between named ones, a dynamic batch dimension.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Dict, List

import numpy as np

OPSET = 17


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _init(name: str, value) -> "onnx.TensorProto":  # noqa: F821
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(value), name)


def _model(nodes, inputs, outputs, inits, name: str):
    from onnx import helper

    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="pytest-ascend-accuracy")
    model.ir_version = 8
    return model


def _vi(name, shape, elem=1):
    from onnx import helper

    return helper.make_tensor_value_info(name, elem, shape)


def _linear(prefix: str, x: str, w: np.ndarray, b: np.ndarray, nodes, inits, out: str = None,
            names=("MatMul", "Add")) -> str:
    from onnx import helper

    wn, bn = f"{prefix}.weight", f"{prefix}.bias"
    inits += [_init(wn, w.astype(np.float32)), _init(bn, b.astype(np.float32))]
    mm = f"{prefix}/{names[0]}_output_0"
    out = out or f"{prefix}/{names[1]}_output_0"
    nodes += [helper.make_node("MatMul", [x, wn], [mm], name=f"{prefix}/{names[0]}"),
              helper.make_node("Add", [mm, bn], [out], name=f"{prefix}/{names[1]}")]
    return out


def passing_mlp():
    from onnx import helper

    r = _rng(1)
    nodes, inits = [], []
    h = _linear("fc1", "x", r.standard_normal((16, 32)) * 0.25, r.standard_normal(32) * 0.1, nodes, inits)
    nodes.append(helper.make_node("Relu", [h], ["relu1_out"], name="relu1"))
    h = _linear("fc2", "relu1_out", r.standard_normal((32, 32)) * 0.18, r.standard_normal(32) * 0.1, nodes, inits)
    nodes.append(helper.make_node("Relu", [h], ["relu2_out"], name="relu2"))
    _linear("fc3", "relu2_out", r.standard_normal((32, 8)) * 0.18, r.standard_normal(8) * 0.1, nodes, inits,
            out="y")
    return _model(nodes, [_vi("x", [1, 16])], [_vi("y", [1, 8])], inits, "passing_mlp")


def overflow_model():
    from onnx import helper

    r = _rng(2)
    nodes, inits = [], []
    h = _linear("fc1", "x", r.standard_normal((16, 32)) * 0.5, r.standard_normal(32) * 0.1, nodes, inits)
    inits += [_init("shape_c", np.array([1, 8, 4], np.int64)), _init("shape_flat", np.array([1, 32], np.int64))]
    nodes.append(helper.make_node("Reshape", [h, "shape_c"], ["channels"], name="to_channels"))
    var = np.full(8, 1e9, np.float32)
    var[[1, 5]] = 1.0
    scale = np.sqrt(var).astype(np.float32)  # normalised values keep their scale: y = x - mean
    inits += [_init("norm.scale", scale), _init("norm.bias", np.full(8, 0.01, np.float32)),
              _init("norm.mean", np.zeros(8, np.float32)), _init("norm.var", var)]
    nodes.append(helper.make_node("BatchNormalization", ["channels", "norm.scale", "norm.bias", "norm.mean",
                                                         "norm.var"], ["normed"], name="norm", epsilon=1e-5))
    nodes.append(helper.make_node("Reshape", ["normed", "shape_flat"], ["flat"], name="to_flat"))
    _linear("fc2", "flat", r.standard_normal((32, 8)) * 0.3, r.standard_normal(8) * 0.1, nodes, inits, out="y")
    return _model(nodes, [_vi("x", [1, 16])], [_vi("y", [1, 8])], inits, "overflow")


def conv_bn_relu():
    from onnx import helper

    r = _rng(3)
    nodes, inits = [], []
    x = "x"
    for k, (cin, cout) in enumerate([(3, 8), (8, 8)], start=1):
        w = (r.standard_normal((cout, cin, 3, 3)) * (1.0 / np.sqrt(cin * 9))).astype(np.float32)
        inits += [_init(f"conv{k}.weight", w), _init(f"conv{k}.bias", r.standard_normal(cout).astype(np.float32) * 0.1),
                  _init(f"bn{k}.scale", (1 + 0.1 * r.standard_normal(cout)).astype(np.float32)),
                  _init(f"bn{k}.bias", (0.1 * r.standard_normal(cout)).astype(np.float32)),
                  _init(f"bn{k}.mean", (0.1 * r.standard_normal(cout)).astype(np.float32)),
                  _init(f"bn{k}.var", (0.5 + r.random(cout)).astype(np.float32))]
        nodes += [
            helper.make_node("Conv", [x, f"conv{k}.weight", f"conv{k}.bias"], [f"conv{k}_out"], name=f"conv{k}",
                             pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
            helper.make_node("BatchNormalization", [f"conv{k}_out", f"bn{k}.scale", f"bn{k}.bias", f"bn{k}.mean",
                                                    f"bn{k}.var"], [f"bn{k}_out"], name=f"bn{k}"),
            helper.make_node("Relu", [f"bn{k}_out"], [f"relu{k}_out"], name=f"relu{k}"),
        ]
        x = f"relu{k}_out"
    nodes += [helper.make_node("GlobalAveragePool", [x], ["pooled"], name="gap"),
              helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten"),
              helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["y"], name="fc", transB=1)]
    inits += [_init("fc.weight", (r.standard_normal((4, 8)) * 0.3).astype(np.float32)),
              _init("fc.bias", (r.standard_normal(4) * 0.1).astype(np.float32))]
    return _model(nodes, [_vi("x", [1, 3, 16, 16])], [_vi("y", [1, 4])], inits, "conv_bn_relu")


def _layernorm(prefix: str, x: str, dim: int, nodes, inits, r) -> str:
    from onnx import helper

    p = prefix
    inits += [_init(f"{p}.two", np.array(2.0, np.float32)), _init(f"{p}.eps", np.array(1e-5, np.float32)),
              _init(f"{p}.weight", (1 + 0.1 * r.standard_normal(dim)).astype(np.float32)),
              _init(f"{p}.bias", (0.1 * r.standard_normal(dim)).astype(np.float32))]
    nodes += [
        helper.make_node("ReduceMean", [x], [f"{p}/mean"], name=f"{p}/ReduceMean", axes=[-1]),
        helper.make_node("Sub", [x, f"{p}/mean"], [f"{p}/centered"], name=f"{p}/Sub"),
        helper.make_node("Pow", [f"{p}/centered", f"{p}.two"], [f"{p}/sq"], name=f"{p}/Pow"),
        helper.make_node("ReduceMean", [f"{p}/sq"], [f"{p}/var"], name=f"{p}/ReduceMean_1", axes=[-1]),
        helper.make_node("Add", [f"{p}/var", f"{p}.eps"], [f"{p}/var_eps"], name=f"{p}/Add"),
        helper.make_node("Sqrt", [f"{p}/var_eps"], [f"{p}/std"], name=f"{p}/Sqrt"),
        helper.make_node("Div", [f"{p}/centered", f"{p}/std"], [f"{p}/normed"], name=f"{p}/Div"),
        helper.make_node("Mul", [f"{p}/normed", f"{p}.weight"], [f"{p}/scaled"], name=f"{p}/Mul"),
        helper.make_node("Add", [f"{p}/scaled", f"{p}.bias"], [f"{p}/out"], name=f"{p}/Add_1"),
    ]
    return f"{p}/out"


def transformer_block(seq: int = 8, dim: int = 32, heads: int = 2, ffn: int = 64):
    from onnx import helper

    r = _rng(4)
    hd = dim // heads
    nodes, inits = [], []
    s = 1.0 / np.sqrt(dim)
    ln1 = _layernorm("/ln1", "x", dim, nodes, inits, r)
    q = _linear("/attn/q", ln1, r.standard_normal((dim, dim)) * s, r.standard_normal(dim) * 0.1, nodes, inits)
    k = _linear("/attn/k", ln1, r.standard_normal((dim, dim)) * s, r.standard_normal(dim) * 0.1, nodes, inits)
    v = _linear("/attn/v", ln1, r.standard_normal((dim, dim)) * s, r.standard_normal(dim) * 0.1, nodes, inits)
    inits += [_init("/attn/heads_shape", np.array([1, seq, heads, hd], np.int64)),
              _init("/attn/merge_shape", np.array([1, seq, dim], np.int64)),
              _init("/attn/scale", np.array(np.sqrt(hd), np.float32))]
    for name, t, perm in (("q", q, [0, 2, 1, 3]), ("k", k, [0, 2, 3, 1]), ("v", v, [0, 2, 1, 3])):
        nodes += [helper.make_node("Reshape", [t, "/attn/heads_shape"], [f"/attn/{name}_heads"],
                                   name=f"/attn/{name}/Reshape"),
                  helper.make_node("Transpose", [f"/attn/{name}_heads"], [f"/attn/{name}_t"],
                                   name=f"/attn/{name}/Transpose", perm=perm)]
    nodes += [
        helper.make_node("MatMul", ["/attn/q_t", "/attn/k_t"], ["/attn/scores"], name="/attn/MatMul"),
        helper.make_node("Div", ["/attn/scores", "/attn/scale"], ["/attn/scaled"], name="/attn/Div"),
        helper.make_node("Softmax", ["/attn/scaled"], ["/attn/probs"], name="/attn/Softmax", axis=-1),
        helper.make_node("MatMul", ["/attn/probs", "/attn/v_t"], ["/attn/ctx"], name="/attn/MatMul_1"),
        helper.make_node("Transpose", ["/attn/ctx"], ["/attn/ctx_t"], name="/attn/Transpose", perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["/attn/ctx_t", "/attn/merge_shape"], ["/attn/merged"], name="/attn/Reshape"),
    ]
    o = _linear("/attn/o", "/attn/merged", r.standard_normal((dim, dim)) * s, r.standard_normal(dim) * 0.1,
                nodes, inits)
    nodes.append(helper.make_node("Add", ["x", o], ["/res1"], name="/Add"))
    ln2 = _layernorm("/ln2", "/res1", dim, nodes, inits, r)
    h = _linear("/mlp/fc1", ln2, r.standard_normal((dim, ffn)) * s, r.standard_normal(ffn) * 0.1, nodes, inits)
    inits += [_init("/mlp/act/sqrt2", np.array(np.sqrt(2.0), np.float32)),
              _init("/mlp/act/one", np.array(1.0, np.float32)), _init("/mlp/act/half", np.array(0.5, np.float32))]
    nodes += [
        helper.make_node("Div", [h, "/mlp/act/sqrt2"], ["/mlp/act/div"], name="/mlp/act/Div"),
        helper.make_node("Erf", ["/mlp/act/div"], ["/mlp/act/erf"], name="/mlp/act/Erf"),
        helper.make_node("Add", ["/mlp/act/erf", "/mlp/act/one"], ["/mlp/act/add"], name="/mlp/act/Add"),
        helper.make_node("Mul", [h, "/mlp/act/add"], ["/mlp/act/mul"], name="/mlp/act/Mul"),
        helper.make_node("Mul", ["/mlp/act/mul", "/mlp/act/half"], ["/mlp/act/out"], name="/mlp/act/Mul_1"),
    ]
    o2 = _linear("/mlp/fc2", "/mlp/act/out", r.standard_normal((ffn, dim)) / np.sqrt(ffn),
                 r.standard_normal(dim) * 0.1, nodes, inits)
    nodes.append(helper.make_node("Add", ["/res1", o2], ["y"], name="/Add_1"))
    return _model(nodes, [_vi("x", [1, seq, dim])], [_vi("y", [1, seq, dim])], inits, "transformer_block")


def if_model():
    """``y = x * 2`` if the batch size is 1 else ``x * 3``, then Relu (an If on a shape)."""
    from onnx import TensorProto, helper

    inits = [_init("one", np.array(1, np.int64)), _init("two", np.array(2.0, np.float32)),
             _init("three", np.array(3.0, np.float32)), _init("zero_idx", np.array(0, np.int64))]
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["then_out"])], "then", [],
                               [_vi("then_out", None)])
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "three"], ["else_out"], name="times3")],
                               "else", [], [_vi("else_out", None)])
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "zero_idx"], ["batch"], name="batch", axis=0),
        helper.make_node("Equal", ["batch", "one"], ["is_one"], name="is_one"),
        helper.make_node("If", ["is_one"], ["picked"], name="pick", then_branch=then_g, else_branch=else_g),
        helper.make_node("Relu", ["picked"], ["y"], name="relu"),
    ]
    return _model(nodes, [_vi("x", ["batch", 4], TensorProto.FLOAT)], [_vi("y", None)], inits, "if_model")


def nested_if_model():
    """``If`` 'pick' decided by the values of ``x`` (Identity, rank 2, when they sum above 0;
    else Squeeze, rank 1), then, in the then branch of 'wrap' (a constant condition: a
    conversion brings it up into the main graph), ``If`` 'by_rank' on the rank of pick's
    output (Relu, else Neg), squared: silero_vad_half's shape (H110). A conversion, which has
    no inputs, runs both as operators."""
    from onnx import TensorProto, helper

    def branch(node, out):
        return helper.make_graph([node], f"{node.name}_branch", [], [_vi(out, None)])

    inits = [_init("zero", np.array(0.0, np.float32)), _init("two", np.array(2, np.int64)),
             _init("always", np.array(True)), _init("axes", np.array([0], np.int64))]
    wrap_then = helper.make_graph([
        helper.make_node("Shape", ["y"], ["shp"], name="shape"),
        helper.make_node("Size", ["shp"], ["rank"], name="rank"),
        helper.make_node("Equal", ["rank", "two"], ["is_2d"], name="is_2d"),
        helper.make_node("If", ["is_2d"], ["z_in"], name="by_rank",
                         then_branch=branch(helper.make_node("Relu", ["y"], ["t2"], name="relu"),
                                            "t2"),
                         else_branch=branch(helper.make_node("Neg", ["y"], ["e2"], name="neg"),
                                            "e2"))], "wrap_then", [], [_vi("z_in", None)])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["positive"], name="positive"),
        helper.make_node("If", ["positive"], ["y"], name="pick",
                         then_branch=branch(helper.make_node("Identity", ["x"], ["t1"],
                                                             name="keep_rank"), "t1"),
                         else_branch=branch(helper.make_node("Squeeze", ["x", "axes"], ["e1"],
                                                             name="drop_rank"), "e1")),
        helper.make_node("If", ["always"], ["z"], name="wrap", then_branch=wrap_then,
                         else_branch=branch(helper.make_node("Identity", ["y"], ["e3"],
                                                             name="as_is"), "e3")),
        helper.make_node("Mul", ["z", "z"], ["out"], name="square"),
    ]
    return _model(nodes, [_vi("x", [1, 4], TensorProto.FLOAT)], [_vi("out", None)], inits,
                  "nested_if_model")


def unnamed_model():
    """Unnamed nodes, named ``dup`` and ``dup_1``, and a dynamic batch dimension ``N``. (Both
    were named ``dup``, renamed ``dup_1`` on preparation; ATC refuses a model whose ops share
    a name, E19009, and so does preparation now: ``graph.parser_refusals``.)"""
    from onnx import helper

    inits = [_init("w", np.full((4, 4), 0.5, np.float32)), _init("b", np.ones(4, np.float32))]
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["mm"]),
        helper.make_node("Add", ["mm", "b"], ["a"], name="dup"),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("Mul", ["r", "b"], ["y"], name="dup_1"),
    ]
    return _model(nodes, [_vi("x", ["N", 4])], [_vi("y", ["N", 4])], inits, "unnamed_model")


def two_overflows():
    from onnx import helper

    r = _rng(3)
    nodes, inits = [], []
    h = _linear("fc1", "x", r.standard_normal((16, 32)) * 0.5, r.standard_normal(32) * 0.1, nodes, inits)
    inits += [_init("shape_c", np.array([1, 8, 4], np.int64)), _init("shape_flat", np.array([1, 32], np.int64))]
    nodes.append(helper.make_node("Reshape", [h, "shape_c"], ["channels"], name="to_channels"))
    src = "channels"
    for k, name in enumerate(("norm_a", "norm_b")):
        var = np.full(8, 1e9, np.float32)
        var[[1 + k, 5 - k]] = 1.0
        inits += [_init(f"{name}.scale", np.sqrt(var).astype(np.float32)),
                  _init(f"{name}.bias", np.full(8, 0.01 * (k + 1), np.float32)),
                  _init(f"{name}.mean", np.zeros(8, np.float32)), _init(f"{name}.var", var)]
        nodes.append(helper.make_node("BatchNormalization", [src] + [f"{name}.{p}" for p in
                                      ("scale", "bias", "mean", "var")], [f"{name}_out"], name=name,
                                      epsilon=1e-5))
        src = f"{name}_out"
    nodes.append(helper.make_node("Reshape", [src, "shape_flat"], ["flat"], name="to_flat"))
    _linear("fc2", "flat", r.standard_normal((32, 8)) * 0.3, r.standard_normal(8) * 0.1, nodes, inits, out="y")
    return _model(nodes, [_vi("x", [1, 16])], [_vi("y", [1, 8])], inits, "two_overflows")


def fused_matmul_add(w=None, b=None):
    """``scale`` (x * 1e-4) -> ``fc/MatMul`` (@ ``w``) -> ``fc/Add`` (+ ``b``), x 1x16: the default
    mode fuses the MatMul and Add into one op. Without ``w``, a random 16x8 weight with a column
    of 1e5 (past float16's 65504, while the golden stays small); ``b``: random, or as given."""
    from onnx import helper

    r = _rng(0)
    if w is None:
        w = (r.standard_normal((16, 8)) * 0.3).astype(np.float32)
        w[:, 3] = 1e5
    if b is None:
        b = (r.standard_normal(w.shape[1]) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Mul", ["x", "s"], ["xs"], name="scale"),
             helper.make_node("MatMul", ["xs", "w"], ["mm"], name="fc/MatMul"),
             helper.make_node("Add", ["mm", "b"], ["y"], name="fc/Add")]
    inits = [_init("s", np.full(16, 1e-4, np.float32)), _init("w", np.asarray(w, np.float32)),
             _init("b", np.asarray(b, np.float32))]
    return _model(nodes, [_vi("x", [1, 16])], [_vi("y", [1, w.shape[1]])], inits, "fused")


MODELS: Dict[str, Callable] = {
    "passing_mlp": passing_mlp,
    "overflow": overflow_model,
    "conv_bn_relu": conv_bn_relu,
    "transformer_block": transformer_block,
}


def save_models(directory, names=None) -> List[Path]:
    """Write the example models as ``{name}.onnx`` into ``directory``; returns the paths."""
    import onnx

    out = Path(directory)
    os.makedirs(out, exist_ok=True)
    paths = []
    for name in names or MODELS:
        path = out / f"{name}.onnx"
        onnx.save(MODELS[name](), str(path))
        paths.append(path)
    return paths

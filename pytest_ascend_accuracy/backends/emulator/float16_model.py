"""A model that computes in float16 (a ``model.half()`` export, or float16 ops in a float32
model): every float16 op's output rounded to float16 before the next op reads it.

onnxruntime's CPU provider has float32 kernels only for most float16 ops (Mul, Add, MatMul,
Softmax, ...): its ``InsertCastTransformer`` casts their inputs to float32 and their outputs
back, then ``RemoveDuplicateCastTransformer`` drops each Cast pair between two such ops (at
any optimisation level), so a chain of float16 ops is computed in float32 throughout. The
emulator rounded float32 tensors only and let float16 ones through, so it inherited that
float32 carry: an attention export whose scores overflow float16 (inf, then NaN out of the
Softmax on a float16 device) passed with every row's cosine 1.0, and any float16 model's check
was vacuous (its largest error 0.0: a trial).

So the converted model computes a float16 model in float32 (``widen``: float16 initializers,
value types and ``Cast``/``dtype`` targets become float32) and each op that outputs float16 in
the model rounds that output to float16 as a float32 model's float16 op does (the Cast pair of
``rounding.rounding_nodes``, overflowing to inf or saturating as the chip does), whatever the
precision mode, since a mode lowers float32 ops and keeps a float16 op float16
(``must_keep_origin_dtype``, ``keep_dtype``: the origin dtype is float16). Only
``force_fp32``/``cube_fp16in_fp32out`` raise float16 ops (vector ops to float32, cube ops to
float16 in, float32 out: ATC's --precision_mode), and there the mode's precision applies as for
a float32 model. The model's float16 inputs are fed as they are and cast to float32 inside; its
float16 outputs are cast back to float16 at the end (``narrow_outputs``), and the dumps keep the
float16 dtype the device writes. A model with no float16 tensor is left untouched. A model
with ``If``/``Loop`` subgraphs is not widened (its branches would need their types rewritten).
"""
from __future__ import annotations

import dataclasses
from typing import Dict, Iterable, Set

import numpy as np

FLOAT, FLOAT16 = 1, 10  # onnx.TensorProto
#: modes that run a float16 op of the model in float32 (vector) or fp16-in/fp32-out (cube)
RAISING_MODES = ("force_fp32", "cube_fp16in_fp32out")
_TENSOR, _GRAPH, _GRAPHS = 4, 5, 10  # onnx.AttributeProto


def float16_tensors(proto, info) -> Set[str]:
    """The float16 tensors of ``proto`` (``info``: its ``tensor_info``) the emulator widens;
    empty for a model without any, or with subgraphs."""
    half = {t for t, (elem, _) in info.items() if elem == FLOAT16}
    if not half or any(a.type in (_GRAPH, _GRAPHS) for n in proto.graph.node for a in n.attribute):
        return set()
    return half


def widen(proto, info, half: Set[str], folder=None) -> None:
    """Rewrite ``proto`` (in place) to compute its float16 tensors ``half`` in float32, and mark
    them float32 in ``info``; the graph's inputs keep their float16 type (``widened_inputs``
    casts them)."""
    from onnx import numpy_helper

    from ...graph.external import initializer_array

    if not half:  # no float16 tensor, or subgraphs (float16_tensors): the model as it is
        return
    graph = proto.graph
    inputs = {i.name for i in graph.input}
    for k, t in enumerate(graph.initializer):
        if t.data_type == FLOAT16:
            value = initializer_array(t, folder).astype(np.float32)
            graph.initializer[k].CopyFrom(numpy_helper.from_array(value, t.name))
            inputs.discard(t.name)
    for vi in list(graph.value_info) + [o for o in graph.output if o.name not in inputs] + [
            i for i in graph.input if i.name not in inputs]:
        tt = vi.type.tensor_type
        if tt.elem_type == FLOAT16:
            tt.elem_type = FLOAT
    for node in graph.node:
        for a in node.attribute:
            if a.name in ("to", "dtype") and a.i == FLOAT16:
                a.i = FLOAT
            elif a.type == _TENSOR and a.t.data_type == FLOAT16:
                a.t.CopyFrom(numpy_helper.from_array(
                    numpy_helper.to_array(a.t).astype(np.float32), a.t.name))
    for t in half - inputs:
        info[t] = (FLOAT, info[t][1])


def widened_inputs(emitter, half: Set[str]) -> Dict[str, str]:
    """Cast each float16 graph input the converted model reads to float32 at its start:
    ``{input: its float32 copy}`` (values exact in float16)."""
    import onnx

    out: Dict[str, str] = {}
    for i in emitter.model.graph.input:
        if i.name in half and i.name not in emitter.consts:
            out[i.name] = wide = emitter.fresh(f"{i.name}__emu_f32")
            emitter.nodes.append(onnx.helper.make_node(
                "Cast", [i.name], [wide], name=emitter.prefix("widen"), to=FLOAT))
            emitter.exact[wide] = "fp16"
    return out


def origin_precision(precision: str, precision_mode: str, outputs: Iterable[str],
                     half: Set[str], op_types: Iterable[str] = ()) -> str:
    """A unit's precision where it outputs a float16 tensor of the model: ``fp16`` (module doc),
    but under ``RAISING_MODES`` what the mode gives, except for a ``Cast``'s own float16 output:
    a mode chooses an op's precision, not a conversion's target type (a review: under
    force_fp32 a float32 model's Cast to float16 and what followed were dumped in float32,
    where the parent, and the golden, overflowed float16)."""
    if half and any(o in half for o in outputs) and (
            precision_mode not in RAISING_MODES or set(op_types) & {"Cast", "CastLike"}):
        return "fp16"
    return precision


def narrow_outputs(proto, ops, half: Set[str], fresh) -> list:
    """Cast the model's float16 outputs (computed in float32) back to float16 under their own
    names; plan slots that fetched one fetch its float32 value. Returns ``ops`` so updated."""
    import onnx

    graph = proto.graph
    renamed: Dict[str, str] = {}
    for o in graph.output:
        if o.name in half and o.type.tensor_type.elem_type == FLOAT:
            renamed[o.name] = fresh(f"{o.name}__emu_f32")
            o.type.tensor_type.elem_type = FLOAT16
    if not renamed:
        return list(ops)
    for n in graph.node:
        for field in (n.input, n.output):
            for k, name in enumerate(field):
                if name in renamed:
                    field[k] = renamed[name]
    for old, new in renamed.items():
        graph.node.append(onnx.helper.make_node("Cast", [new], [old], name=f"emu::narrow::{old}",
                                                to=FLOAT16))

    def slot(s):
        return dataclasses.replace(s, fetch=renamed[s.fetch]) if (
            s.source == "run" and s.fetch in renamed) else s

    return [dataclasses.replace(op, inputs=tuple(slot(s) for s in op.inputs),
                                outputs=tuple(slot(s) for s in op.outputs)) for op in ops]

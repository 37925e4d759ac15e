"""What the FAKE ATC folds at conversion, and the ``Const`` ops its om json gets for it.

Real ATC computes a node whose inputs are all constant on the host at conversion (GE's
constant folding: constants, shapes of tensors of known shape and what only they feed), keeps
the value as a ``Const`` op, and never runs or dumps the node. The real om jsons show the
result (docs/formats.md section 4): ATC 6.0 tdnn's ``Cast_311``, a Cast of a constant, is no op
that runs but ``dynamic_const_67614_276``, a ``Const`` with an empty original-names list whose
output's ``_datadump_origin_name`` is ``Cast_311`` (index 0), read by ``Mul_312``.

The fake folds the nodes ``graph.folded_nodes`` names at the converted input shapes (the rule
the emulator folds by): ``running_model`` is the model without them, which the fake's op plan,
its dumps and its om json are made of; ``folded_consts`` gives the om json one ``Const`` per
folded tensor an op that runs reads, shaped as real ATC's: named
``dynamic_const_<FAKE_GRAPH_ID>_<k>``, its original-names list empty, its output's origin the
folded node that made the tensor. A tensor an ONNX ``Constant`` node holds gets a ``Const``
naming no origin (what ATC writes for such a node is not in the real files; many of tdnn's
``Const``s name none). Weights (initializers) get no ``Const``, as before.
"""
from __future__ import annotations

from typing import Dict, List

import numpy as np

#: the first number of the fake's ``dynamic_const_<n>_<k>`` names (ATC's: 67614 in the ATC 6.0
#: tdnn file, 48187 in the ATC 5.1 one); arbitrary
FAKE_GRAPH_ID = 10000


def running_model(fake):
    """``fake.model`` (a ``FakeOm``'s ONNX model) without the nodes the conversion folded, made
    once per ``FakeOm`` (its plan is read for every dump)."""
    cached = getattr(fake, "_running_model", None)
    if cached is not None:
        return cached
    import onnx

    folded = set(folded_node_names(fake.model, fake.input_shapes))
    model = fake.model
    if folded:
        model = onnx.ModelProto()
        model.CopyFrom(fake.model)
        kept = [n for n in model.graph.node if n.name not in folded]
        del model.graph.node[:]
        model.graph.node.extend(kept)
    fake._running_model = model
    return model


def folded_node_names(model, input_shapes) -> List[str]:
    """The nodes of ``model`` (names normalised) folded at conversion with its inputs of
    ``input_shapes`` (``{name: dims}``, the converted ones): ``graph.folded_nodes``."""
    import onnx

    from ..graph.folded_nodes import folded_nodes

    shaped = onnx.ModelProto()
    shaped.CopyFrom(model)
    for vi in shaped.graph.input:
        dims = input_shapes.get(vi.name)
        if dims is not None and all(int(d) >= 0 for d in dims):
            shape = vi.type.tensor_type.shape
            del shape.dim[:]
            for d in dims:
                shape.dim.add().dim_value = int(d)
    try:
        return folded_nodes(shaped)
    except Exception:  # noqa: BLE001 -- a model shape inference cannot read folds nothing
        return []


def folded_consts(fake, producer: Dict[str, str], first_id: int) -> list:
    """The om json's ``Const`` ops (``dump.om_json.OmOp``, ids from ``first_id``) for the
    folded tensors the ops of ``fake.plan()`` read; ``producer`` (``{tensor: "op:index"}``)
    gets each one's entry."""
    from ..dump.om_json import OmOp

    made = {o: (n, k) for n in fake.model.graph.node for k, o in enumerate(n.output) if o}
    running = {n.name for n in running_model(fake).graph.node}
    ops = []
    for op in fake.plan():
        for tensor in op.inputs:
            node, index = made.get(tensor, (None, 0))
            if node is None or node.name in running or tensor in producer:
                continue
            name = f"dynamic_const_{FAKE_GRAPH_ID}_{len(ops)}"
            origin = None if node.op_type == "Constant" else (node.name, index)
            ops.append(OmOp(name=name, type="Const", id=first_id + len(ops), npu_only=True,
                            output_origins=(origin,)))
            producer[tensor] = f"{name}:0"
    return ops


def fold_static(model, rounds: int = 8) -> None:
    """Fold what ATC folds before it infers shapes: tensors that depend on no input value
    (constants, shapes of static tensors: ``graph.static``) become initializers, so shape
    inference sees the shape a computed ``Reshape`` target gives (PP-OCR cls, rec: batch and
    length were left unknown). Only the static nodes are run; best effort (a model onnxruntime
    cannot fold keeps what inference finds without folding)."""
    import onnx

    from ..graph.onnx_graph import tensor_info
    from ..graph.static import evaluate, static_tensors

    graph = model.graph
    for _ in range(rounds):
        inits = {t.name for t in graph.initializer}
        info = tensor_info(model)
        static = static_tensors(model, info)
        nodes = [onnx.NodeProto() for _ in graph.node]
        for copy, node in zip(nodes, graph.node):
            copy.CopyFrom(node)
        folded = [bool(n.output) and all(o in static for o in n.output if o) for n in nodes]
        wanted = [o for n, f in zip(nodes, folded) if f for o in n.output if o and o not in inits]
        if not wanted:
            return
        cone = onnx.ModelProto()
        cone.CopyFrom(model)
        del cone.graph.node[:]
        cone.graph.node.extend(shape_constant(n, info) if n.op_type in ("Shape", "Size")
                               and n.input[0] not in static else n
                               for n, f in zip(nodes, folded) if f)  # reads no input value
        try:
            values = evaluate(cone, wanted)
        except Exception:  # noqa: BLE001 -- folding is best effort
            return
        del graph.node[:]
        graph.node.extend(n for n, f in zip(nodes, folded) if not f)
        graph.initializer.extend(onnx.numpy_helper.from_array(np.asarray(v), k)
                                 for k, v in values.items() if k not in inits)


def shape_constant(node, info):
    """A ``Constant`` holding what a ``Shape``/``Size`` of a fully known shape gives."""
    from onnx import helper, numpy_helper
    shape = [int(d) for d in info[node.input[0]][1]]
    if node.op_type == "Size":
        value = np.array(int(np.prod(shape, dtype=np.int64)), np.int64)
    else:
        attrs = {a.name: a.i for a in node.attribute}
        value = np.array(shape[attrs.get("start", 0):attrs.get("end", len(shape))], np.int64)
    return helper.make_node("Constant", [], list(node.output), name=node.name,
                            value=numpy_helper.from_array(value))

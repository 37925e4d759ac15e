"""Op faults on the nodes of an ``If`` branch that the emulator keeps as one operator.

An ``If`` whose condition depends on input values is not inlined at conversion (ATC converts
without inputs): the emulator runs it as one operator, its branches inside it. A fault on a
branch node (``Fault.on_op("branch/then/Add_0")``: by its own name, or unnamed as
``graph.inline`` names it in the golden) corrupts that node inside the branch, so it shows in
the ``If``'s outputs exactly when that branch runs, as a wrong kernel in the device's branch
would; without this, ``faults.check_fault_targets`` accepted the target and it was never active.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterator, List, Sequence, Tuple

FLOAT = 1  # onnx.TensorProto.FLOAT


def branch_nodes(if_node, if_name: str = "") -> Iterator[Tuple[str, object, object]]:
    """``(name, node, its graph)`` for every node of ``if_node``'s branches (nested ``If``
    branches included), named as ``graph.inline`` names them when inlined: its own name, or
    ``{if}/{then|else}/{op_type}_{j}``."""
    if_name = if_name or if_node.name
    for attr in if_node.attribute:
        if attr.name not in ("then_branch", "else_branch") or attr.type != 5:
            continue
        side = attr.name.partition("_")[0]
        for j, node in enumerate(attr.g.node):
            name = node.name or f"{if_name}/{side}/{node.op_type}_{j}"
            yield name, node, attr.g
            if node.op_type == "If":
                yield from branch_nodes(node, name)


def targets_in_branches(if_node, faults: Sequence) -> List:
    """The op faults (``op``, ``buffer``) among ``faults`` that name a node of ``if_node``'s
    branches."""
    if if_node.op_type != "If":
        return []
    names = {name for name, _, _ in branch_nodes(if_node)}
    return [f for f in faults if f.kind in ("op", "buffer") and f.target in names]


def apply_branch_faults(if_node, faults: Sequence, types: Dict[str, int],
                        prefix: Callable[[str], str]) -> None:
    """Corrupt, in place, the float outputs of the branch nodes of ``if_node`` (a copy the
    emulator runs) that ``faults`` name (``faults.fault_nodes``, inside the branch).
    ``types``: element type of the branch tensors (shape inference of the model)."""
    from .faults import fault_nodes

    for name, node, graph in list(branch_nodes(if_node)):
        for fault in (f for f in faults if f.target == name):
            for k, out in enumerate(node.output):
                if not out or types.get(out) != FLOAT:
                    continue
                raw = f"{out}__emu_raw"
                node.output[k] = raw
                more, inits = fault_nodes(fault, raw, out, prefix=prefix("fault"), shape=None)
                position = list(graph.node).index(node) + 1
                for n, extra in enumerate(more):
                    graph.node.insert(position + n, extra)
                graph.initializer.extend(inits)


def branch_types(model) -> Dict[str, int]:
    """Element types of the tensors inside ``model``'s ``If`` branches (shape inference)."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:
        inferred = model
    out: Dict[str, int] = {}
    stack = [a.g for n in inferred.graph.node for a in n.attribute if a.type == 5]
    while stack:
        g = stack.pop()
        for vi in list(g.value_info) + list(g.output):
            if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
                out[vi.name] = vi.type.tensor_type.elem_type
        stack.extend(a.g for n in g.node for a in n.attribute if a.type == 5)
    return out

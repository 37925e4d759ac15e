"""Op faults on the nodes of an ``If`` branch that the emulator keeps as one operator.

An ``If`` whose condition depends on input values is not inlined at conversion (ATC converts
without inputs): the emulator runs it as one operator, its branches inside it. A fault on a
branch node (``Fault.on_op("branch/then/Add_0")``: by its own name, or unnamed as
``graph.inline`` names it in the golden) corrupts that node inside the branch, so it shows in
the ``If``'s outputs exactly when that branch runs, as a wrong kernel in the device's branch
would; without this, ``faults.check_fault_targets`` accepted the target and it was never active.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Sequence

from ...errors import ConfigError
from .faults import FAULTABLE, branch_nodes, fault_chain, unfaultable


def targets_in_branches(if_node, faults: Sequence) -> List:
    """The op faults (``op``, ``buffer``) among ``faults`` that name a node of ``if_node``'s
    branches."""
    if if_node.op_type != "If":
        return []
    names = {name for name, _, _ in branch_nodes(if_node)}
    return [f for f in faults if f.kind in ("op", "buffer") and f.target in names]


def apply_branch_faults(if_node, faults: Sequence, types: Dict[str, int],
                        prefix: Callable[[str], str]) -> None:
    """Corrupt, in place, the floating-point outputs of the branch nodes of ``if_node`` (a
    copy the emulator runs) that ``faults`` name (``faults.fault_chain``, inside the branch:
    several faults on one node apply in turn). ``types``: element type of the branch tensors
    (shape inference of the model). A named node with no floating-point output is refused
    (``ConfigError``, ``faults.unfaultable``): the fault would do nothing."""
    for name, node, graph in list(branch_nodes(if_node)):
        mine = [f for f in faults if f.target == name]
        if not mine:
            continue
        outs = [(k, out, types.get(out, 0)) for k, out in enumerate(node.output) if out]
        if not any(elem in FAULTABLE for _, _, elem in outs):
            raise ConfigError("fault", unfaultable(
                mine, f"node {name!r} ({node.op_type}, in a branch of If {if_node.name!r})",
                [(out, elem) for _, out, elem in outs]))
        position = list(graph.node).index(node) + 1
        for k, out, elem in outs:
            if elem not in FAULTABLE:
                continue
            raw = f"{prefix('raw')}/{out}"
            node.output[k] = raw
            more, inits = fault_chain(mine, raw, out, elem=elem, prefix=prefix)
            for n, extra in enumerate(more):
                graph.node.insert(position + n, extra)
            position += len(more)
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

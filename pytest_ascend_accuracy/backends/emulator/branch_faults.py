"""Op faults on the nodes of an ``If`` branch that the emulator keeps as one operator.

An ``If`` whose condition depends on input values is not inlined at conversion (ATC converts
without inputs): the emulator runs it as one operator, its branches inside it. A fault on a
branch node (``Fault.on_op("branch/then/Add_0")``: by its own name, or unnamed as
``graph.inline`` names it in the golden) corrupts that node inside the branch, so it shows in
the ``If``'s outputs exactly when that branch runs, as a wrong kernel in the device's branch
would; without this, ``faults.check_fault_targets`` accepted the target and it was never active.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from ...errors import ConfigError
from ...graph.control_flow import subgraphs
from .faults import FAULTABLE, branch_nodes, fault_chain, unfaultable


def targets_in_branches(if_node, faults: Sequence) -> List:
    """The op faults (``op``, ``buffer``) among ``faults`` that name a node of ``if_node``'s
    branches."""
    if if_node.op_type != "If":
        return []
    names = {name for name, _, _ in branch_nodes(if_node)}
    return [f for f in faults if f.kind in ("op", "buffer") and f.target in names]


def apply_branch_faults(if_node, faults: Sequence, types: "BranchTypes",
                        prefix: Callable[[str], str]) -> None:
    """Corrupt, in place, the floating-point outputs of the branch nodes of ``if_node`` (a
    copy the emulator runs) that ``faults`` name (``faults.fault_chain``, inside the branch:
    several faults on one node apply in turn). ``types``: element type of the branch tensors
    (shape inference of the model, ``branch_types``: each branch its own). A named node with
    no floating-point output is refused (``ConfigError``, ``faults.unfaultable``): the fault
    would do nothing."""
    nodes = list(branch_nodes(if_node))
    paths = list(node_paths(if_node))  # the same walk: each node's graph
    for (name, node, graph), path in zip(nodes, paths):
        mine = [f for f in faults if f.target == name]
        if not mine:
            continue
        outs = [(k, out, types.elem(path, out) or 0) for k, out in enumerate(node.output)
                if out]
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


Path = Tuple[Tuple[object, int], ...]


def child_path(path: Path, owner: object, k: int) -> Path:
    """The path of subgraph ``k`` (``control_flow.subgraphs`` order) of a node: ``owner`` is
    the node's outputs (a node of the main graph) or its ordinal among the nodes with
    subgraphs of its graph (inside a subgraph: the emulator's copies rename none of the
    main graph's outputs, and add no node with a subgraph)."""
    return path + ((owner, k),)


def _graph_paths(nodes, path: Path) -> Iterator[Tuple[object, Path]]:
    ordinal = 0
    for node in nodes:
        subs = [g for _, g in subgraphs(node)]
        if not subs:
            continue
        owner = ordinal if path else tuple(node.output)
        ordinal += 1
        for k, g in enumerate(subs):
            yield g, child_path(path, owner, k)


def _inner_paths(g, path: Path) -> Iterator[Path]:
    ordinal = 0
    for node in g.node:
        yield path
        subs = [sub for _, sub in subgraphs(node)]
        for k, sub in enumerate(subs):
            yield from _inner_paths(sub, child_path(path, ordinal, k))
        ordinal += bool(subs)


def node_paths(if_node) -> Iterator[Path]:
    """The path of the graph of each node ``branch_nodes(if_node)`` yields, in its order."""
    for k, (_, g) in enumerate(subgraphs(if_node)):
        yield from _inner_paths(g, child_path((), tuple(if_node.output), k))


class BranchTypes:
    """Element types of the tensors inside a model's subgraphs, one map per subgraph (by its
    path, ``child_path``). optimum's merged decoders name values of then_branch and else_branch
    alike with different types (t5: ``/decoder/Add_output_0`` int64 in one, float in the
    other): one map for all branches gave float16 rounding to an int64 value, which
    onnxruntime refused (H340)."""

    def __init__(self, by_path: Dict[Path, Dict[str, int]]):
        self.by_path = by_path

    def elem(self, path: Path, name: str) -> Optional[int]:
        """The type of ``name`` as the graph at ``path`` sees it: its own value, else an
        enclosing subgraph's; None for one of the main graph's (or unknown)."""
        while path:
            types = self.by_path.get(path, {})
            if name in types:
                return types[name]
            path = path[:-1]
        return None


def branch_types(model) -> BranchTypes:
    """Element types of the tensors inside ``model``'s subgraphs (shape inference), each
    subgraph's own."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:
        inferred = model
    by_path: Dict[Path, Dict[str, int]] = {}
    stack = list(_graph_paths(inferred.graph.node, ()))
    while stack:
        g, path = stack.pop()
        types = by_path.setdefault(path, {})
        for vi in list(g.value_info) + list(g.output):
            if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
                types[vi.name] = vi.type.tensor_type.elem_type
        stack.extend(_graph_paths(g.node, path))
    return BranchTypes(by_path)

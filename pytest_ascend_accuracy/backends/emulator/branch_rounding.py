"""The ops inside an ``If`` the emulator keeps as one operator, computed in their precision.

An ``If`` whose condition depends on input values is not inlined at conversion (ATC converts
without inputs): the emulator runs it as one operator. It rounded only that operator's inputs
and outputs, so its branches ran in float32, and a trial's float16 overflow inside a branch
(``x * 300``, squared: 88209 > 65504) passed where the same ops written flat failed. ATC parses
each branch into a subgraph of the ``If`` (GraphEngine's ``IfSubgraphAdapter``) whose ops run
on the device under the conversion's precision like any other. So each op of a branch (nested
``If`` branches included) rounds its float inputs and outputs as ``rewrite`` rounds a unit's:
by its precision under the mode (``rounding.unit_precision``, keep_dtype's ``OpType::`` entries
included), value-preserving ops' outputs left as their rounded inputs make them.

A branch's constants are weights as the main graph's are: ATC's ONNX parser makes every
initializer a Const node itself, and folds what only constants feed, so a ``Constant`` node of
a branch (and a deterministic node that only static values feed, such as ``ConstantOfShape`` of
a constant shape) computes nothing on the device and rounds nothing: its float output reaches
each consumer in float32 and the consumer rounds it by its own precision, as ``rewrite`` rounds
a folded main-graph constant. Rounding a Constant's output as an fp16 op's made keep_dtype of a
Conv whose weights a branch's Constant holds a no-op (silero_vad.onnx: ``OpType::Conv2D``
changed nothing, bit for bit, while the same network with outer initializers changed), and made
a diagnosis "fix" it with ``OpType::Constant``.
"""
from __future__ import annotations

from typing import Callable, Dict, FrozenSet, Iterator, Optional, Set, Tuple

from ...graph.control_flow import subgraphs
from ...graph.static import NONDETERMINISTIC
from .branch_faults import Path, branch_types, child_path
from .rounding import VALUE_PRESERVING, rounding_nodes, rounds_inputs, rounds_outputs

FLOAT = 1  # onnx.TensorProto.FLOAT
_GRAPH = 5  # onnx.AttributeProto.GRAPH


def _branches(if_node) -> Iterator[object]:
    for attr in if_node.attribute:
        if attr.name in ("then_branch", "else_branch") and attr.type == _GRAPH:
            yield attr.g


def _branch_paths(if_node, path: Path, owner: object) -> Iterator[Tuple[object, Path]]:
    """Each branch of ``if_node`` with its path (``branch_faults.child_path``)."""
    for k, (attr, g) in enumerate(subgraphs(if_node)):
        if attr in ("then_branch", "else_branch"):
            yield g, child_path(path, owner, k)


def branch_names(if_node) -> Set[str]:
    """Every node and value name inside ``if_node``'s branches (nested ones included): names a
    rewrite must not reuse."""
    names: Set[str] = set()
    for g in _branches(if_node):
        names.update(t.name for t in g.initializer)
        for n in g.node:
            names.add(n.name)
            names.update(n.input)
            names.update(n.output)
            if n.op_type == "If":
                names |= branch_names(n)
    return names


def _folded(node, static: FrozenSet[str]) -> bool:
    return any(node.output) and all(o in static for o in node.output if o)


def _static_values(g, outer: FrozenSet[str]) -> FrozenSet[str]:
    """The values of branch ``g`` that do not depend on input values (``graph.static``'s rule
    within a branch): its initializers, ``outer`` ones, Constant outputs and the outputs of
    deterministic nodes without subgraphs that only those feed. A branch's outputs are not
    folded (the If passes them on, as a main graph's outputs are not)."""
    static: Set[str] = set(outer) | {t.name for t in g.initializer} | {""}
    outputs = {o.name for o in g.output}
    for node in g.node:
        if (node.op_type in NONDETERMINISTIC or node.domain not in ("", "ai.onnx")
                or any(a.type in (_GRAPH, 10) for a in node.attribute)):
            continue
        if node.op_type == "Constant" or all(i in static for i in node.input):
            static.update(o for o in node.output if o and o not in outputs)
    static.discard("")
    return frozenset(static)


class BranchRounder:
    """Rounds the ops of ``If`` branches in place. ``precision_of(node)``: the op's precision
    ("fp16", "fp16in", "bf16", "fp32"); ``is_float(name, path)``: whether an outer value or a
    value of the branch at ``path`` (``branch_faults.child_path``; by shape inference, each
    branch its own types) is float32; ``exact``: outer values already exact in a rounding
    kind (not rounded again); ``fresh(base)``: an unused name; ``prefix(what)``: a node name;
    ``bounds()``: the saturation bounds' initializer names (overflow "saturate")."""

    def __init__(self, precision_of: Callable[[object], str],
                 is_float: Callable[[str, Path], bool],
                 exact: Dict[str, str], overflow: str, fresh: Callable[[str], str],
                 prefix: Callable[[str], str], bounds: Callable[[], Tuple[str, str]]):
        self.precision_of = precision_of
        self.is_float = is_float
        self.outer_exact = dict(exact)
        self.overflow = overflow
        self.fresh = fresh
        self.prefix = prefix
        self.bounds = bounds
        #: whether a constant of a branch reaches an op that does not round it to float16:
        #: numbers that moved when constants became weights (``numerics`` 12)
        self.weights_unrounded = False

    def round_if(self, if_node, outer_static: FrozenSet[str] = frozenset()) -> None:
        """Round the branches of ``if_node``, a node of the main graph (a copy);
        ``outer_static``: the main graph's constants (its initializers)."""
        for g, path in _branch_paths(if_node, (), tuple(if_node.output)):
            self._round_graph(g, dict(self.outer_exact), path, outer_static)

    def _rounding(self, src: str, dst: str, kind: str):
        bounds = self.bounds() if kind == "fp16" and self.overflow == "saturate" else None
        return rounding_nodes(src, dst, kind, self.overflow, prefix=self.prefix("round"),
                              bounds=bounds)

    def _round_graph(self, g, exact: Dict[str, str], path: Path,
                     outer_static: FrozenSet[str] = frozenset()) -> None:
        floats = {t.name for t in g.initializer if t.data_type == FLOAT}
        static = _static_values(g, outer_static)
        made_here = static - outer_static - floats  # (rounded as fp16 ops' outputs before 12)

        def floaty(t: str) -> bool:
            return t in floats or self.is_float(t, path)

        rounded: Dict[Tuple[str, str], str] = {}
        nodes = []
        ordinal = 0  # among g's nodes with subgraphs (child_path)
        for node in list(g.node):
            owner = ordinal
            ordinal += any(True for _ in subgraphs(node))
            if node.op_type == "If":  # its own branches, each op in its precision
                for sub, sub_path in _branch_paths(node, path, owner):
                    self._round_graph(sub, dict(exact), sub_path, static)
                nodes.append(node)
                continue
            if _folded(node, static):  # a weight: its consumers round it (module docstring)
                nodes.append(node)
                continue
            precision = self.precision_of(node)
            in_kind: Optional[str] = rounds_inputs(precision)
            out_kind: Optional[str] = rounds_outputs(precision)
            if in_kind != "fp16" and any(t in made_here and floaty(t) for t in node.input):
                self.weights_unrounded = True
            if in_kind:
                for k, t in enumerate(node.input):
                    if not t or not floaty(t) or exact.get(t) == in_kind:
                        continue
                    if (t, in_kind) not in rounded:
                        dst = self.fresh(f"{t}__{in_kind}")
                        nodes.extend(self._rounding(t, dst, in_kind))
                        rounded[(t, in_kind)] = dst
                        exact[dst] = in_kind
                    node.input[k] = rounded[(t, in_kind)]
            nodes.append(node)
            if not out_kind:
                continue
            for k, o in enumerate(node.output):
                if not o or not floaty(o):
                    continue
                if node.op_type in VALUE_PRESERVING:  # its rounded inputs' values
                    exact[o] = out_kind
                    continue
                raw = self.fresh(f"{o}__emu_raw")
                node.output[k] = raw
                nodes.extend(self._rounding(raw, o, out_kind))
                exact[o] = out_kind
        del g.node[:]
        g.node.extend(nodes)


def round_branches(nodes, emitter, precision_of: Callable[[object], str]) -> None:
    """Round, in place, the branch ops of the ``If`` nodes among ``nodes`` (a ``rewrite``
    emitter's copies of a unit's nodes), with the emitter's names, types and exact values."""
    ifs = [n for n in nodes if n.op_type == "If"]
    if not ifs:
        return
    if emitter.branch_elem_types is None:
        emitter.branch_elem_types = branch_types(emitter.model)
    types = emitter.branch_elem_types

    def is_float(t: str, path: Path) -> bool:
        elem = types.elem(path, t)
        return elem == FLOAT if elem is not None else emitter.is_float(t)

    outer = frozenset(emitter.consts)  # the main graph's initializers, folded constants too
    for node in ifs:
        emitter.used |= branch_names(node)
        rounder = BranchRounder(precision_of, is_float, emitter.exact, emitter.overflow,
                                emitter.fresh, emitter.prefix, emitter.saturate_bounds)
        rounder.round_if(node, outer)
        if rounder.weights_unrounded:  # (the plan's info, what numerics.py reads)
            emitter.branch_weights_unrounded = True

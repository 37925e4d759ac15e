"""Fault injection: make one op, one fusion rule or buffer optimisation return wrong values.

For tests and demonstrations of the debugging flow (every branch of triage can be reproduced
deterministically). A ``Fault`` is a frozen value passed to ``EmulatorBackend(faults=...)``;
it is part of the conversion cache key. It is *active* only when its target is present in the
converted graph:

- ``Fault.on_op(name)``: the executed operator covering node ``name`` (the node itself, or the
  fused operator it was fused into) returns wrong values; a node folded away at conversion is
  not present;
- ``Fault.on_rule(rule)``: every fused operator produced by fusion rule ``rule`` returns wrong
  values; not active with fusion off or that rule switched off;
- ``Fault.on_buffer(name)``: the operator covering ``name`` returns wrong values only while
  buffer optimisation is on (``--buffer_optimize`` other than ``off_optimize``);
- ``Fault.on_input(name)``: a pre-processing mismatch (wrong AIPP mean/scale): an ``Aipp``
  operator named ``aipp_<input>`` is inserted after graph input ``name`` in every mode, and its
  output (dumped, as real AIPP ops are) feeds the model instead of the input.

Effects (applied to the operator's floating-point outputs before they are rounded and dumped;
float16 and double outputs are computed on in float32 and cast back: ``fault_chain``; an op
whose outputs hold no floating-point values is refused at conversion, ``unfaultable``, as a
fault reported active that changed nothing would prove a check that proves nothing):
``noise`` (default) adds ``amount`` x RMS(output) x a fixed pseudo-random pattern (seeded,
identical on every run), ``scale`` multiplies by ``amount``, ``offset`` adds ``amount``,
``nan`` turns every value into NaN.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ...errors import ConfigError, closest_text

KINDS = ("op", "rule", "buffer", "input")
FLOAT, FLOAT16, DOUBLE = 1, 10, 11  # onnx.TensorProto
#: the element types a fault corrupts (the effects are computed in float32)
FAULTABLE = (FLOAT, FLOAT16, DOUBLE)
EFFECTS = ("noise", "scale", "offset", "nan")


@dataclass(frozen=True)
class Fault:
    """A deterministic wrong result injected into the emulated NPU (see module docstring)."""

    kind: str
    target: str
    effect: str = "noise"
    amount: float = 1.0
    seed: int = 0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ConfigError("fault", f"unknown fault kind {self.kind!r}"
                                       f"{closest_text(self.kind, KINDS)}; known: "
                                       f"{', '.join(KINDS)}")
        if self.effect not in EFFECTS:
            raise ConfigError("fault", f"unknown fault effect {self.effect!r}"
                                       f"{closest_text(self.effect, EFFECTS)}; known: "
                                       f"{', '.join(EFFECTS)}")
        if not isinstance(self.target, str) or not self.target:
            raise ConfigError("fault", f"a fault needs a target name, got {self.target!r}")
        object.__setattr__(self, "amount", float(self.amount))
        object.__setattr__(self, "seed", int(self.seed))

    @classmethod
    def on_op(cls, name: str, effect: str = "noise", amount: float = 1.0, seed: int = 0) -> "Fault":
        return cls("op", name, effect, amount, seed)

    @classmethod
    def on_rule(cls, rule: str, effect: str = "noise", amount: float = 1.0, seed: int = 0) -> "Fault":
        return cls("rule", rule.rpartition(":")[2], effect, amount, seed)

    @classmethod
    def on_buffer(cls, name: str, effect: str = "noise", amount: float = 1.0, seed: int = 0) -> "Fault":
        return cls("buffer", name, effect, amount, seed)

    @classmethod
    def on_input(cls, name: str, effect: str = "scale", amount: float = 0.5, seed: int = 0) -> "Fault":
        return cls("input", name, effect, amount, seed)

    def key(self) -> Dict[str, object]:
        return {"kind": self.kind, "target": self.target, "effect": self.effect,
                "amount": self.amount, "seed": self.seed}

    def describe(self) -> str:
        return f"{self.kind} fault on {self.target!r}: {self.effect} ({self.amount:g})"

    def applies_to(self, unit, *, buffer_on: bool) -> bool:
        """Whether this fault corrupts ``unit`` (a fusion.Unit) in the converted graph."""
        if self.kind == "rule":
            return self.target in unit.rules
        if self.kind == "buffer" and not buffer_on:
            return False
        if self.kind == "input":
            return unit.name == aipp_name(self.target)
        return self.target in unit.members or self.target == unit.name


def aipp_name(input_name: str) -> str:
    """Name of the ``Aipp`` operator an input fault inserts after graph input ``input_name``."""
    return f"aipp_{input_name}"


def insert_aipp_nodes(graph, faults: Sequence[Fault]) -> List[str]:
    """For each input fault whose input exists, insert an Identity node ``aipp_<input>`` that
    the consumers of the input read instead (the fault corrupts it later, as for any op).
    Returns the inserted node names."""
    from onnx import helper

    names = {i.name for i in graph.input}
    inserted: List[str] = []
    for f in faults:
        if f.kind != "input" or f.target not in names or aipp_name(f.target) in inserted:
            continue
        node_name = aipp_name(f.target)
        out = f"{node_name}__out"
        for node in graph.node:
            for k, name in enumerate(node.input):
                if name == f.target:
                    node.input[k] = out
        graph.node.insert(0, helper.make_node("Identity", [f.target], [out], name=node_name))
        inserted.append(node_name)
    return inserted


def check_faults(faults: Sequence[Fault]) -> Tuple[Fault, ...]:
    out = []
    for f in faults or ():
        if not isinstance(f, Fault):
            raise ConfigError("faults", f"expected Fault values, got {type(f).__name__}")
        out.append(f)
    return tuple(out)


def check_fault_targets(faults: Sequence[Fault], model) -> None:
    """Every fault names what ``model`` has: a node (``op``, ``buffer``; or a fused operator's
    name, its members' names run together), a fusion rule the emulator imitates (``rule``), a
    graph input (``input``). A fault naming nothing would never be active, and the run would
    pass as if it had been injected: a ``ConfigError`` names the closest instead. (A fault on
    something a mode removes, such as a rule under fusion off, is inactive there and fine.)"""
    if not faults:
        return
    import difflib

    from ...graph.op_catalogue import model_ops
    from .fusion import RULES

    ops = model_ops(model)
    branch = _branch_names(model)
    if branch:  # a node of an If branch is a target too, and a close name to offer
        extra = [n for n in dict.fromkeys(branch) if n not in set(ops.names)]
        ops = replace(ops, names=ops.names + tuple(extra),
                      types=ops.types + tuple(branch[n] for n in extra))
    names = set(ops.names)
    inputs: Optional[List[str]] = None
    for f in faults:
        if f.kind == "rule":
            pool = list(RULES)
            if f.target in RULES:
                continue
        elif f.kind == "input":
            if inputs is None:
                inputs = _graph_inputs(model)
            pool = inputs
            if f.target in inputs:
                continue
        else:
            if f.target in names or _joined_names(f.target, names):
                continue
            text = f"{f.describe()}: " + ops._unknown(f.target, "target")
            head, _, tail = f.target.rpartition(":")
            effect = difflib.get_close_matches(tail, EFFECTS, n=1, cutoff=0.6)
            if head in names and effect:  # op:norm:scal: a misspelled effect read as the target's
                text += (f"; or a misspelled effect: {f.kind}:{head}:{effect[0]} (effects: "
                         f"{', '.join(EFFECTS)})")
            raise ConfigError("fault", text)
        near = difflib.get_close_matches(f.target, pool, n=3, cutoff=0.5)
        why, known = (("the emulator imitates no fusion rule of that name", "the emulator's rules")
                      if f.kind == "rule" else
                      (f"model {ops.label!r} has no graph input of that name", "its graph inputs"))
        raise ConfigError("fault", f"{f.describe()}: {why}"
                          + (f"; closest: {', '.join(repr(n) for n in near)}" if near else "")
                          + f" ({known}: {', '.join(pool[:12])}"
                          + (", ..." if len(pool) > 12 else "") + ")")


def _joined_names(target: str, names) -> bool:
    """Whether ``target`` is node names run together (a UBFusion operator's name)."""
    ends = {0}
    for end in range(1, len(target) + 1):
        if any(start in ends and target[start:end] in names for start in range(end)):
            ends.add(end)
    return len(target) in ends and not (target in names)


def _branch_names(model) -> Dict[str, str]:
    """``{name: op type}`` of the nodes of the main graph's ``If`` branches (nested ``If``
    branches included), named as ``branch_nodes`` (the emulator, for an ``If``
    it keeps) and ``graph.inline`` (for one it inlines) name them: their own name, or
    ``{if}/{then|else}/{op_type}_{j}`` after the ``If``'s name. Only these: ``graph.inline``
    never brings up a Loop's or a Scan's body, so a fault there would never be active."""
    from ...graph.names import normalize_node_names
    from ...graph.onnx_graph import load_model

    proto = load_model(model, weights=False)
    ifs = [n for n in proto.graph.node if n.op_type == "If"]
    if not ifs:
        return {}
    graph = type(proto.graph)()
    graph.node.extend(proto.graph.node)
    normalize_node_names(graph)  # an unnamed If is named as the emulator and golden name it
    return {name: node.op_type for n in graph.node if n.op_type == "If"
            for name, node, _ in branch_nodes(n)}


def branch_nodes(if_node, if_name: str = "") -> Iterator[Tuple[str, object, object]]:
    """``(name, node, its graph)`` for every node of ``if_node``'s branches (nested ones
    included), named as ``graph.inline`` names them when inlined
    (``graph.control_flow.inner_nodes``); nothing for another op."""
    from ...graph.control_flow import inner_nodes

    if if_node.op_type != "If":
        return
    for name, node, graph, _ in inner_nodes(if_node, if_name):
        yield name, node, graph


def _graph_inputs(model) -> List[str]:
    from ...graph.onnx_graph import load_model

    graph = load_model(model, weights=False).graph
    inits = {i.name for i in graph.initializer}
    return [i.name for i in graph.input if i.name not in inits]


def fault_nodes(fault: Fault, src: str, dst: str, *, prefix: str, shape: Optional[Tuple[int, ...]]):
    """ONNX nodes computing ``dst`` = fault(``src``) and the initializers they need.

    ``shape`` is the tensor's static shape when known (the noise pattern is then a seeded
    normal array); otherwise the pattern is ``sin(997 x + seed)``, also deterministic."""
    from onnx import helper, numpy_helper

    inits: List[object] = []

    def const(name: str, value) -> str:
        full = f"{prefix}/{name}"
        inits.append(numpy_helper.from_array(np.asarray(value, dtype=np.float32), full))
        return full

    if fault.effect == "scale":
        return [helper.make_node("Mul", [src, const("amount", fault.amount)], [dst], name=f"{prefix}/scale")], inits
    if fault.effect == "offset":
        return [helper.make_node("Add", [src, const("amount", fault.amount)], [dst], name=f"{prefix}/offset")], inits
    if fault.effect == "nan":
        return [helper.make_node("Mul", [src, const("nan", np.nan)], [dst], name=f"{prefix}/nan")], inits
    nodes = [
        helper.make_node("Mul", [src, src], [f"{prefix}/sq"], name=f"{prefix}/sq"),
        helper.make_node("ReduceMean", [f"{prefix}/sq"], [f"{prefix}/ms"], name=f"{prefix}/ms", keepdims=1),
        helper.make_node("Sqrt", [f"{prefix}/ms"], [f"{prefix}/rms"], name=f"{prefix}/rms"),
    ]
    if shape is not None and all(isinstance(d, int) and d > 0 for d in shape):
        pattern = np.random.default_rng(fault.seed).standard_normal(shape).astype(np.float32)
        pat = const("pattern", pattern)
    else:
        nodes += [
            helper.make_node("Mul", [src, const("freq", 997.0)], [f"{prefix}/phase0"], name=f"{prefix}/phase0"),
            helper.make_node("Add", [f"{prefix}/phase0", const("seed", float(fault.seed) + 0.5)],
                             [f"{prefix}/phase"], name=f"{prefix}/phase"),
            helper.make_node("Sin", [f"{prefix}/phase"], [f"{prefix}/pattern"], name=f"{prefix}/sin"),
        ]
        pat = f"{prefix}/pattern"
    nodes += [
        helper.make_node("Mul", [pat, f"{prefix}/rms"], [f"{prefix}/noise0"], name=f"{prefix}/noise0"),
        helper.make_node("Mul", [f"{prefix}/noise0", const("amount", fault.amount)], [f"{prefix}/noise"],
                         name=f"{prefix}/noise"),
        helper.make_node("Add", [src, f"{prefix}/noise"], [dst], name=f"{prefix}/add"),
    ]
    return nodes, inits


def fault_chain(faults: Sequence[Fault], src: str, dst: str, *, elem: int,
                prefix: Callable[[str], str], shape: Optional[Tuple[int, ...]] = None):
    """ONNX nodes computing ``dst`` = the ``faults`` applied in turn to ``src`` (each to the
    previous one's result), and the initializers they need. ``elem``: the tensor's element
    type (``FAULTABLE``): float16 and double are cast to float32, corrupted, and cast back.
    ``prefix()`` gives a fresh name prefix each call."""
    from onnx import helper

    nodes: List[object] = []
    inits: List[object] = []
    cur = src
    if elem != FLOAT:
        cur = prefix("fault_f32")
        nodes.append(helper.make_node("Cast", [src], [cur], name=cur, to=FLOAT))
    for k, fault in enumerate(faults):
        here = prefix("fault")
        nxt = dst if elem == FLOAT and k == len(faults) - 1 else f"{here}/out"
        more, extra = fault_nodes(fault, cur, nxt, prefix=here, shape=shape)
        nodes.extend(more)
        inits.extend(extra)
        cur = nxt
    if elem != FLOAT:
        nodes.append(helper.make_node("Cast", [cur], [dst], name=prefix("fault_back"), to=elem))
    return nodes, inits


def unfaultable(faults: Sequence[Fault], where: str, outputs: Sequence[Tuple[str, int]]) -> str:
    """Why ``faults`` cannot corrupt ``where`` (an operator, a branch node), whose outputs
    ``[(tensor, element type), ...]`` hold no floating-point values: a fault would do nothing
    while the run reported it active."""
    from onnx.helper import tensor_dtype_to_string

    def kind(elem: int) -> str:
        if not elem:
            return "of unknown type"
        try:
            return tensor_dtype_to_string(elem).replace("TensorProto.", "").lower()
        except Exception:
            return "of unknown type"

    shown = ", ".join(f"{t} {kind(e)}" for t, e in outputs) or "none"
    return (f"{'; '.join(f.describe() for f in faults)}: {where} has no floating-point output "
            f"(its outputs: {shown}); a fault changes float16, float32 or double values only, "
            "so it would do nothing here: target the op that computes the float values")

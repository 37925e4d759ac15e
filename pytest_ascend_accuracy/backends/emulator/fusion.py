"""Operator fusion as the emulator models it: which ONNX nodes run as one fused operator.

With fusion on, ATC replaces known patterns with one operator (GraphFusion) and then fuses a
compute operator with the element-wise operators after it in the Unified Buffer (UBFusion).
A fused operator's intermediate values never leave the chip: they are neither rounded to the
operator's precision nor dumped; the operator is dumped once, under its fused name, with the
list of original op names (``_datadump_original_op_names``). The emulator's rules, named after
the ATC passes they imitate so that ``Mode(fusion_rules_off=(...))`` can switch one off:

GraphFusion (the fused op keeps the name of its first member):
  ``LayerNormFusionPass``      ReduceMean, Sub, Pow(2), ReduceMean, Add(eps), Sqrt, Div
                               [, Mul(gamma), Add(beta)] -> LayerNorm, under the documented
                               graph conditions of ATC's LayerNormONNXFusionPass, the pass that
                               fuses this ONNX spelling (``fusion_limits``; ``fusion_rules_off``
                               takes either name, ``core.fusion_passes``)
  ``GeluFusionPass``           Div(sqrt 2)|Mul(1/sqrt 2), Erf, Add(1), Mul, Mul(0.5) -> Gelu
                               (erf form; the tanh approximation, which the pass's page
                               atlasrr_30_0011 draws, is not matched)
  ``ConvBatchnormFusionPass``  Conv + BatchNormalization with constant weights and statistics:
                               the BN is folded into the Conv's weights and bias in float32 at
                               conversion (then rounded like any weight), as ATC does
  ``MatMulBiasAddFusionPass``  MatMul + Add of a 1-D constant bias along the last axis
UBFusion (the fused op's name concatenates its parts' names, e.g. ``conv1relu1``):
  ``TbeCommonRules0FusionPass``    Conv (or Conv+BN) + up to 3 element-wise ops
  ``ATbeMatmulElemwiseFusionPass`` MatMul/Gemm (or MatMul+bias) + one element-wise op or Gelu

Every rule requires that each member's outputs are consumed only inside the group (except the
group's final output), so shared tensors are never swallowed. Rules run in the order above.
A rule fuses only where the graph meets the conditions CANN documents for its pass
(``fusion_limits`` cites the pages); the products a pass is documented for (``core.fusion_passes``)
are not known here, so a check says where a fused op computed a value past float16's range that
an unfused run would round (``report.fused_overflow``).

keep_dtype (``keeps``: ``Mode.keeps_fp32``) follows the order of ATC's passes (docs/formats.md,
"keep_dtype and fusion"): GE marks each parsed node it names (``_keep_dtype``) before any fusion;
a GraphFusion op inherits the mark when any of its members has it (so it runs in float32 whole);
the dtypes are then judged node by node, Casts go where they differ, and UBFusion runs last, on
that graph: a kept piece and a piece not kept are never UB-fused (a Cast stands between them).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

import numpy as np

from ...core.fusion_passes import EMULATOR_RULE
from .optypes import ascend_type, node_ascend_type

GRAPH_RULES = ("LayerNormFusionPass", "GeluFusionPass", "ConvBatchnormFusionPass",
               "MatMulBiasAddFusionPass")
UB_RULES = ("TbeCommonRules0FusionPass", "ATbeMatmulElemwiseFusionPass")
RULES = GRAPH_RULES + UB_RULES
RULE_SECTION = {**{r: "GraphFusion" for r in GRAPH_RULES}, **{r: "UBFusion" for r in UB_RULES}}


def check_rules_off(rules_off: Sequence[str]) -> None:
    """Every ``fusion_rules_off`` entry names a rule the emulator imitates (``Section:`` naming
    its own section, when given): any other would switch nothing off here, silently. A
    ``ConfigError`` names the entry, the closest rules and every rule by section."""
    import difflib

    from ...errors import ConfigError

    for entry in rules_off:
        section, sep, name = entry.rpartition(":")
        name = EMULATOR_RULE.get(name, name)  # LayerNormONNXFusionPass: ATC's name of the rule
        if name in RULE_SECTION and (section == RULE_SECTION[name]
                                     or (not sep and RULE_SECTION[name] == "GraphFusion")):
            continue
        if name in RULE_SECTION and not sep:
            # a bare name goes into the switch file's GraphFusion section (core.modes), where
            # ATC would not switch a UBFusion rule off: the emulator would, and disagree
            why = (f"{name} is a UBFusion rule: a bare name goes into the fusion switch file's "
                   f"GraphFusion section, where ATC would not switch it off")
            near = [f"UBFusion:{name}"]
        elif name in RULE_SECTION:
            why = f"{name} is a {RULE_SECTION[name]} rule, not {section}"
            near = [f"{RULE_SECTION[name]}:{name}"] + ([name] if RULE_SECTION[name] ==
                                                       "GraphFusion" else [])
        else:
            why = "the emulator imitates no fusion rule of that name"
            # offered as it converts pasted: a UBFusion rule with its section (bare, it would
            # be refused in turn), a GraphFusion rule in the spelling the entry used
            near = [f"{RULE_SECTION[r]}:{r}" if sep or RULE_SECTION[r] == "UBFusion" else r
                    for r in difflib.get_close_matches(name, RULES, n=3, cutoff=0.5)]
        listed = "; ".join(f"{sec}: {', '.join(r for r in RULES if RULE_SECTION[r] == sec)}"
                           for sec in ("GraphFusion", "UBFusion"))
        raise ConfigError("mode", f"fusion_rules_off entry {entry!r}: {why}, so switching it "
                                  f"off would change nothing"
                          + (f"; closest: {', '.join(repr(n) for n in near)}" if near else "")
                          + f" (the emulator's rules: {listed})")

ELEMWISE_UNARY = frozenset({"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Clip", "HardSigmoid",
                            "HardSwish", "Elu", "Selu", "Softplus", "PRelu"})
ELEMWISE_BINARY = frozenset({"Add", "Sub", "Mul"})
MAX_CONV_ELEMWISE = 3


@dataclass
class Unit:
    """One executed operator of the converted model: a single node or a fused group."""

    nodes: List[object]                 # ONNX nodes to run, in order (may be rewritten)
    members: Tuple[str, ...]            # original node names covered, graph order
    member_types: Tuple[str, ...]
    name: str                           # the dumped operator name
    anchor_type: str                    # ONNX type (or LayerNorm/Gelu) deciding precision class
    op_type: str                        # Ascend-style type for dump files and the om json
    rules: Tuple[str, ...] = ()
    position: int = 0                   # graph index of the last member (execution order)
    output_origins: Dict[str, Tuple[str, int]] = field(default_factory=dict)

    @property
    def fused(self) -> bool:
        return len(self.members) > 1

    def external_inputs(self) -> List[str]:
        produced = {o for n in self.nodes for o in n.output if o}
        seen: List[str] = []
        for n in self.nodes:
            for i in n.input:
                if i and i not in produced and i not in seen:
                    seen.append(i)
        return seen


class _Graph:
    """Consumers/producers of a main graph, for pattern matching."""

    def __init__(self, graph, consts: Mapping[str, np.ndarray]):
        self.nodes = list(graph.node)
        self.consts = consts
        #: a LayerNorm or MatMul+Add pattern whose graph conditions (``fusion_limits``) left
        #: it, or its affine part, unfused: numerics 13 (``numerics.PARTIAL``)
        self.refused = False
        self.outputs = {o.name for o in graph.output}
        self.producer: Dict[str, int] = {}
        self.consumers: Dict[str, List[int]] = {}
        for i, n in enumerate(self.nodes):
            for o in n.output:
                if o:
                    self.producer[o] = i
            for t in n.input:
                if t:
                    self.consumers.setdefault(t, []).append(i)

    def only_consumer(self, tensor: str) -> Optional[int]:
        users = self.consumers.get(tensor, [])
        if len(users) != 1 or tensor in self.outputs:
            return None
        return users[0]

    def node(self, i: Optional[int], op_type: str):
        if i is None or self.nodes[i].op_type != op_type or self.nodes[i].domain not in ("", "ai.onnx"):
            return None
        return self.nodes[i]

    def const(self, name: str) -> Optional[np.ndarray]:
        return self.consts.get(name)

    def is_scalar(self, name: str, value: float, tol: float = 1e-3) -> bool:
        c = self.consts.get(name)
        return c is not None and c.size == 1 and abs(float(c.reshape(-1)[0]) - value) <= tol * max(1.0, abs(value))


# -- GraphFusion rules: each returns (member node indices, replacement nodes or None) ------------
def _match_layernorm(g: _Graph, i: int, ranks: Mapping[str, int]):
    """ReduceMean, Sub, Pow(2), ReduceMean, Add(eps), Sqrt, Div [, Mul(gamma), Add(beta)], where
    the nodes meet the pass's graph conditions (``fusion_limits``: keep_dims, the axes, the
    exponent's and epsilon's shapes, gamma's and beta's ranks); gamma and beta of another rank
    leave the Mul and Add out (the pass's pattern without them still fuses)."""
    from .fusion_limits import affine_ok, layernorm_core_ok

    sub = g.node(i, "Sub")
    if sub is None:
        return None
    rm1_i = g.producer.get(sub.input[1])
    rm1 = g.node(rm1_i, "ReduceMean")
    if rm1 is None or rm1.input[0] != sub.input[0] or g.only_consumer(rm1.output[0]) != i:
        return None
    users = g.consumers.get(sub.output[0], [])
    if len(users) != 2 or sub.output[0] in g.outputs:
        return None
    sq = next((u for u in users if g.nodes[u].op_type == "Pow"), None)
    dv = next((u for u in users if g.nodes[u].op_type == "Div" and g.nodes[u].input[0] == sub.output[0]), None)
    if sq is None or dv is None:
        return None
    rm2_i = g.only_consumer(g.nodes[sq].output[0])
    rm2 = g.node(rm2_i, "ReduceMean")
    add_i = g.only_consumer(rm2.output[0]) if rm2 is not None else None
    add = g.node(add_i, "Add")
    if add is None or not any(g.const(t) is not None for t in add.input):
        return None
    sqrt_i = g.only_consumer(add.output[0])
    sqrt = g.node(sqrt_i, "Sqrt")
    if sqrt is None or g.only_consumer(sqrt.output[0]) != dv or g.nodes[dv].input[1] != sqrt.output[0]:
        return None
    axes = layernorm_core_ok(g, rm1, rm2, g.nodes[sq], add, ranks.get(sub.input[0]))
    if axes is None:
        g.refused = True
        return None
    members = [rm1_i, i, sq, rm2_i, add_i, sqrt_i, dv]
    mul_i = g.only_consumer(g.nodes[dv].output[0])
    mul = g.node(mul_i, "Mul")
    bias_i = g.only_consumer(mul.output[0]) if mul is not None else None
    bias = g.node(bias_i, "Add")
    if (bias is not None and affine_ok(g, mul, g.nodes[dv].output[0], len(axes))
            and affine_ok(g, bias, mul.output[0], len(axes))):
        members += [mul_i, bias_i]
    elif mul is not None:  # (gamma alone, nn.LayerNorm(bias=False): fused before, review RX)
        g.refused = True
    return sorted(members), None, "LayerNorm", "LayerNorm"


def _match_gelu(g: _Graph, i: int):
    erf = g.node(i, "Erf")
    if erf is None:
        return None
    d_i = g.producer.get(erf.input[0])
    if d_i is None or g.only_consumer(erf.input[0]) != i:
        return None
    d = g.nodes[d_i]
    if not ((d.op_type == "Div" and g.is_scalar(d.input[1], 1.41421356)) or
            (d.op_type == "Mul" and g.is_scalar(d.input[1], 0.70710678))):
        return None
    x = d.input[0]
    add_i = g.only_consumer(erf.output[0])
    add = g.node(add_i, "Add")
    if add is None or not any(g.is_scalar(t, 1.0) for t in add.input):
        return None
    m1_i = g.only_consumer(add.output[0])
    m1 = g.node(m1_i, "Mul")
    if m1 is None:
        return None
    other = m1.input[0] if m1.input[1] == add.output[0] else m1.input[1]
    if other == x:
        m2_i = g.only_consumer(m1.output[0])
        m2 = g.node(m2_i, "Mul")
        if m2 is None or not any(g.is_scalar(t, 0.5) for t in m2.input):
            return None
        members = [d_i, i, add_i, m1_i, m2_i]
    else:
        h_i = g.producer.get(other)
        h = g.node(h_i, "Mul")
        if h is None or g.only_consumer(other) != m1_i or x not in h.input or not any(
                g.is_scalar(t, 0.5) for t in h.input):
            return None
        members = [h_i, d_i, i, add_i, m1_i]
    return sorted(members), None, "Gelu", "Gelu"


def _match_conv_bn(g: _Graph, i: int):
    from onnx import helper, numpy_helper

    conv = g.node(i, "Conv")
    if conv is None:
        return None
    bn_i = g.only_consumer(conv.output[0])
    bn = g.node(bn_i, "BatchNormalization")
    if bn is None or bn.input[0] != conv.output[0] or any(o for o in bn.output[1:]):
        return None
    w = g.const(conv.input[1])
    b = g.const(conv.input[2]) if len(conv.input) > 2 and conv.input[2] else None
    if w is None or (len(conv.input) > 2 and conv.input[2] and b is None):
        return None
    params = [g.const(t) for t in bn.input[1:5]]
    if any(p is None for p in params) or w.dtype != np.float32:
        return None
    scale, bias, mean, var = (p.astype(np.float64).reshape(-1) for p in params)
    eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
    factor = scale / np.sqrt(var + eps)
    if factor.shape[0] != w.shape[0]:
        return None
    w_new = (w.astype(np.float64) * factor.reshape((-1,) + (1,) * (w.ndim - 1))).astype(np.float32)
    b0 = b.astype(np.float64).reshape(-1) if b is not None else np.zeros_like(mean)
    b_new = ((b0 - mean) * factor + bias).astype(np.float32)
    w_name, b_name = f"{conv.name}/folded_weight", f"{conv.name}/folded_bias"
    node = helper.make_node("Conv", [conv.input[0], w_name, b_name], [bn.output[0]], name=conv.name)
    node.attribute.extend(conv.attribute)
    new_inits = [numpy_helper.from_array(w_new, w_name), numpy_helper.from_array(b_new, b_name)]
    return [i, bn_i], ([node], new_inits), "Conv", ascend_type("Conv")


def _match_matmul_bias(g: _Graph, i: int, ranks: Mapping[str, int]):
    """MatMul + Add of a 1-D constant bias as long as the output's last dimension
    (``fusion_limits.matmul_bias_ok``: no broadcast)."""
    from .fusion_limits import matmul_bias_ok

    mm = g.node(i, "MatMul")
    if mm is None:
        return None
    add_i = g.only_consumer(mm.output[0])
    add = g.node(add_i, "Add")
    if add is None:
        return None
    other = add.input[1] if add.input[0] == mm.output[0] else add.input[0]
    bias = g.const(other)
    if bias is None:
        return None
    if not matmul_bias_ok(bias, g.const(mm.input[1])):
        g.refused = True
        return None
    rank = ranks.get(mm.output[0], 2)
    return [i, add_i], None, "MatMul", "BatchMatMulV2" if rank > 2 else "MatMulV2"


# -- driver --------------------------------------------------------------------------------
def build_units(graph, consts: Mapping[str, np.ndarray], *, fusion: bool,
                rules_off: Sequence[str] = (), ranks: Optional[Mapping[str, int]] = None,
                keeps: Optional[Callable[[str, str], bool]] = None):
    """Split the (folded) main graph into executed units. Returns ``(units, new initializers)``.

    ``consts`` holds the values of the graph's initializers; ``ranks`` the ranks of tensors
    where known (for the MatMul type name); ``keeps(name, onnx_type)``: whether keep_dtype keeps
    that node (``Mode.keeps_fp32``; None: none is kept), so UBFusion does not join a kept unit to
    one not kept."""
    g = _Graph(graph, consts)
    off = {EMULATOR_RULE.get(r.rpartition(":")[2], r.rpartition(":")[2]) for r in rules_off}
    enabled = [r for r in RULES if fusion and r not in off]
    taken: Set[int] = set()
    groups: List[Tuple[List[int], object, str, str, str]] = []
    new_inits: List[object] = []
    matchers: Dict[str, Callable] = {
        "LayerNormFusionPass": lambda gg, ii: _match_layernorm(gg, ii, ranks or {}),
        "GeluFusionPass": _match_gelu,
        "ConvBatchnormFusionPass": _match_conv_bn,
        "MatMulBiasAddFusionPass": lambda gg, ii: _match_matmul_bias(gg, ii, ranks or {}),
    }
    for rule in (r for r in GRAPH_RULES if r in enabled):
        for i in range(len(g.nodes)):
            if i in taken:
                continue
            found = matchers[rule](g, i)
            if found is None or any(m in taken for m in found[0]):
                continue
            members, replacement, anchor, op_type = found
            taken.update(members)
            groups.append((members, replacement, anchor, op_type, rule))
            if replacement is not None:
                new_inits.extend(replacement[1])
    units: List[Unit] = []
    for members, replacement, anchor, op_type, rule in groups:
        first = g.nodes[members[0]]
        nodes = replacement[0] if replacement is not None else [g.nodes[m] for m in members]
        units.append(_unit(g, members, nodes, first.name, anchor, op_type, (rule,)))
    for i, n in enumerate(g.nodes):
        if i not in taken:
            units.append(_unit(g, [i], [n], n.name, n.op_type, node_ascend_type(n), ()))
    units.sort(key=lambda u: u.position)
    units = Units(_ub_fusion(units, g, enabled, keeps))
    units.refused = g.refused
    return units, new_inits


class Units(list):
    """``build_units``' units, with ``refused``: a pattern the documented graph conditions left
    unfused (numerics 13: ``numerics.PARTIAL``)."""

    refused = False


def _unit(g: _Graph, members, nodes, name, anchor, op_type, rules) -> Unit:
    last = g.nodes[members[-1]]
    # output indices count present outputs only, as the golden dump numbers them
    # (the slot's index, omitted "" outputs counted, as ATC numbers a node's outputs)
    origins = {o: (last.name, k) for k, o in enumerate(last.output) if o}
    return Unit(nodes=list(nodes), members=tuple(g.nodes[m].name for m in members),
                member_types=tuple(g.nodes[m].op_type for m in members), name=name,
                anchor_type=anchor, op_type=op_type, rules=tuple(rules), position=members[-1],
                output_origins=origins)


def _kept(unit: Unit, keeps: Optional[Callable[[str, str], bool]]) -> bool:
    """Whether keep_dtype keeps this (single or GraphFusion) unit: any member kept, as a
    GraphFusion op inherits ``_keep_dtype`` from its members
    (``GraphPassUtil::InheritAttrFromOriNodes``)."""
    return keeps is not None and any(keeps(m, t) for m, t in zip(unit.members, unit.member_types))


def _ub_fusion(units: List[Unit], g: _Graph, enabled: Sequence[str],
               keeps: Optional[Callable[[str, str], bool]] = None) -> List[Unit]:
    conv_on = "TbeCommonRules0FusionPass" in enabled
    mm_on = "ATbeMatmulElemwiseFusionPass" in enabled
    if not (conv_on or mm_on):
        return units
    by_output: Dict[str, int] = {}
    for k, u in enumerate(units):
        for n in u.nodes:
            for o in n.output:
                by_output[o] = k
    consumers_of: Dict[str, List[int]] = {}
    for k, u in enumerate(units):
        for t in u.external_inputs():
            consumers_of.setdefault(t, []).append(k)
    merged: Set[int] = set()
    result: Dict[int, Unit] = {}
    for k, u in enumerate(units):
        if k in merged:
            continue
        if conv_on and u.anchor_type == "Conv":
            rule, limit, ok = "TbeCommonRules0FusionPass", MAX_CONV_ELEMWISE, _conv_elemwise
        elif mm_on and u.anchor_type in ("MatMul", "Gemm"):
            rule, limit, ok = "ATbeMatmulElemwiseFusionPass", 1, _mm_elemwise
        else:
            result[k] = u
            continue
        chain = [u]
        cur = u
        kept = _kept(u, keeps)
        while len(chain) - 1 < limit:
            outs = [o for o in cur.output_origins]
            if len(outs) != 1 or outs[0] in g.outputs:
                break
            users = consumers_of.get(outs[0], [])
            if len(users) != 1 or users[0] in merged:
                break
            nxt = units[users[0]]
            single_ref = nxt.fused or sum(1 for i in _all_inputs(nxt) if i == outs[0]) == 1
            if not ok(nxt) or not single_ref or _kept(nxt, keeps) != kept:
                break  # (judged apart, a kept piece has a Cast between it and the other)
            chain.append(nxt)
            merged.add(users[0])
            cur = nxt
        if len(chain) == 1:
            result[k] = u
            continue
        last = chain[-1]
        result[k] = Unit(
            nodes=[n for c in chain for n in c.nodes],
            members=tuple(m for c in chain for m in c.members),
            member_types=tuple(t for c in chain for t in c.member_types),
            name="".join(c.name for c in chain), anchor_type=u.anchor_type, op_type=u.op_type,
            rules=tuple(r for c in chain for r in c.rules) + (rule,), position=last.position,
            output_origins=dict(last.output_origins))
    return sorted(result.values(), key=lambda x: x.position)


def _all_inputs(unit: Unit) -> List[str]:
    return [i for n in unit.nodes for i in n.input]


def _conv_elemwise(unit: Unit) -> bool:
    return not unit.fused and (unit.anchor_type in ELEMWISE_UNARY or unit.anchor_type in ELEMWISE_BINARY)


def _mm_elemwise(unit: Unit) -> bool:
    if unit.anchor_type == "Gelu" and "GeluFusionPass" in unit.rules and len(unit.rules) == 1:
        return True
    return not unit.fused and unit.anchor_type in (ELEMWISE_UNARY | {"Add", "Mul"})

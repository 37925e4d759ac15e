"""ONNX ``Loop`` and ``Scan``: control flow ATC's ONNX parser cannot convert.

GraphEngine's ONNX parser finds the subgraphs of an op through a ``SubgraphAdapter`` registered
for its type (``parser/onnx/onnx_parser.cc``, ``AdaptAndFindAllOnnxGraph``), and only ``If`` has
one (``parser/onnx/subgraph_adapter/if_subgraph_adapter.cc``: ``REGISTER_SUBGRAPH_ADAPTER_CREATOR``
for ``If``, in every version of the parser found); CANN's ONNX op plugins (canndev
``ops/built-in/framework/onnx_plugin``: ``if_plugin.cc``, no loop or scan plugin) register no
parser for ``Loop`` or ``Scan`` either. ATC stops at such a node with ``E19010`` ("No parser is
registered for Op [...]"), which the fake ATC (``testing.fake_atc``) prints for them too.

The emulator ran a ``Loop`` or ``Scan`` as one operator, rounding only its inputs and outputs to
float16, so a trial's float16 overflow inside a ``Loop`` body passed where the same ops written
flat failed: a pass that proved nothing for the body, of a model no NPU would get. Such a model
is refused at conversion (``loop_refusal``), naming the ops, as ATC refuses it.
"""
from __future__ import annotations

from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

#: op types whose bodies ATC's ONNX parser has no subgraph adapter for
UNPARSED_CONTROL_FLOW = frozenset({"Loop", "Scan"})
_GRAPH, _GRAPHS = 5, 10  # onnx.AttributeProto.GRAPH, GRAPHS


def subgraphs(node) -> Iterator[Tuple[str, object]]:
    """``(attribute name, graph)`` of each subgraph of ``node`` (an If's branches, a body)."""
    for attr in node.attribute:
        if attr.type == _GRAPH:
            yield attr.name, attr.g
        elif attr.type == _GRAPHS:
            for g in attr.graphs:
                yield attr.name, g


class ParsedGraph(NamedTuple):
    """One graph as ATC's ONNX parser parses it (``atc_graphs``)."""

    graph: object
    where: str  # "" for the main graph, else "in the then_branch of 'cond'"
    owner: object  # the If whose branch it is (None for the main graph)
    owner_name: str
    attr: str  # then_branch / else_branch ("" for the main graph)
    first_unnamed: int  # the parser's counter of unnamed nodes when it reaches this graph
    names: List[str]  # the names the parser gives its nodes, in order


def atc_graphs(graph) -> List[ParsedGraph]:
    """``graph`` and its If branches in the order ATC's ONNX parser parses them
    (``OnnxModelParser::AdaptAndFindAllOnnxGraph``: the main graph, then the subgraphs an
    adapter finds, only If's, breadth first), each node named by its own name or
    ``{op_type}_{k}`` with one counter of unnamed nodes across them all. (Ops were named by
    their position in their graph here, a review: ``Op [ArgMax_1]`` where ATC says
    ``ArgMax_0``, and each branch counted from 0.)"""
    from collections import deque

    out: List[ParsedGraph] = []
    unnamed = 0
    queue = deque([(graph, "", None, "", "")])
    while queue:
        g, where, owner, owner_name, attr = queue.popleft()
        first, names = unnamed, []
        for node in g.node:
            names.append(node.name or f"{node.op_type}_{unnamed}")
            unnamed += not node.name
            if node.op_type == "If":
                queue.extend((sub, f"in the {a} of {names[-1]!r}", node, names[-1], a)
                             for a, sub in subgraphs(node))
        out.append(ParsedGraph(g, where, owner, owner_name, attr, first, names))
    return out


def atc_named_nodes(graph) -> List[Tuple[object, str, str]]:
    """``(node, name, where)`` of every node of ``graph`` and of its If branches, named and
    ordered as ATC's ONNX parser names them (``atc_graphs``)."""
    return [(node, name, parsed.where) for parsed in atc_graphs(graph)
            for node, name in zip(parsed.graph.node, parsed.names)]


def loop_ops(graph) -> List[Tuple[str, str, str]]:
    """``(node name, op type, where)`` of every ``Loop``/``Scan`` node of ``graph``, the
    branches of its ``If`` nodes included (``atc_named_nodes``)."""
    return typed_ops(graph, UNPARSED_CONTROL_FLOW)


def typed_ops(graph, types) -> List[Tuple[str, str, str]]:
    """``(node name as ATC names it, op type, where)`` of every ONNX-domain node of ``graph``
    of one of ``types``, the branches of its ``If`` nodes included."""
    return [(name, node.op_type, where) for node, name, where in atc_named_nodes(graph)
            if node.op_type in types and node.domain in ("", "ai.onnx")]


def listed_ops(found) -> str:
    """``'a' (Loop); 'b' (Scan in the then_branch of 'c')``, the first 8 of ``found``
    (``typed_ops``' triples), and how many more."""
    shown = "; ".join(f"{name!r} ({op}{' ' + where if where else ''})"
                      for name, op, where in found[:8])
    return shown + (f"; and {len(found) - 8} more" if len(found) > 8 else "")


def onnx_opset(model) -> int:
    """The model's default-domain opset (what ATC's optype names carry: ``ai.onnx::11::Loop``)."""
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def loop_refusal(label: str, model) -> str:
    """Why ``model`` (shown as ``label``) cannot be converted: its ``Loop``/``Scan`` ops; ""
    when it has none."""
    found = loop_ops(model.graph)
    if not found:
        return ""
    return (f"model {label!r} has {len(found)} Loop/Scan operator{'s' if len(found) != 1 else ''}: "
            f"{listed_ops(found)}. ATC's ONNX parser has no parser for them (only If has its subgraphs "
            f"parsed; ATC stops with E19010 \"No parser is registered for Op [{found[0][0]}, "
            f"optype [ai.onnx::{onnx_opset(model)}::{found[0][1]}]]\"), so the model cannot be "
            f"converted, and the emulator does not compute a body's ops as a device would; "
            f"{_unrolled(model)}, or check the parts before and after it as models of their own "
            f"(onnx.utils.extract_model)")


def _unrolled(model) -> str:
    """How the model's exporter writes the loop unrolled: a tf2onnx model's Loop is a Keras
    recurrent layer's while loop (Keras 3's LSTM exports as ``functional_1/lstm_1/while_loop``;
    ``unroll=True`` exported without one and passed: an audit, H340), else torch's."""
    if str(getattr(model, "producer_name", "")).lower() in ("tf2onnx", "keras2onnx"):
        return ("export the loop unrolled (tf2onnx writes a tf.while_loop as a Loop: a Keras "
                "LSTM, GRU or SimpleRNN layer built with unroll=True exports without one)")
    return ("export the loop unrolled (torch.onnx.export traces a Python loop into its "
            "iterations; a scripted one becomes a Loop)")


def inner_nodes(owner, owner_name: str = "") -> Iterator[Tuple[str, object, object, str]]:
    """``(name, node, its graph, where)`` for every node inside ``owner``'s subgraphs (an If's
    branches, a Loop's or Scan's body; nested ones included), named as ``graph.inline`` names
    them when an If is inlined: its own name, or ``{owner}/{then|else|body}/{op_type}_{j}``;
    ``where`` says whose: ``"the then_branch of If 'cond'"``."""
    owner_name = owner_name or owner.name
    for attr_name, sub in subgraphs(owner):
        where = f"the {attr_name} of {owner.op_type} {owner_name!r}"
        side = attr_name.partition("_")[0]
        for j, node in enumerate(sub.node):
            name = node.name or f"{owner_name}/{side}/{node.op_type}_{j}"
            yield name, node, sub, where
            yield from inner_nodes(node, name)


def subgraph_ops(graph, inlined: Optional[Dict[str, str]] = None) -> List[Tuple[str, str, str]]:
    """``(node name, where, compared)`` for every node inside a subgraph of ``graph``'s nodes
    (``inner_nodes``); ``compared``: the op a run executes it in, which a comparison judges --
    the outermost ``If`` (or Loop, Scan) that stays an operator, ``inlined`` (the Ifs a
    conversion inlines, ``op_catalogue.conversion_inlined_ifs``) skipped --, the node itself
    where each owner is inlined taking its branch (an op of the converted main graph), ""
    where one takes the other branch (a conversion drops it). (The immediate owner was named:
    silero_vad's LSTM in If 'If_0_then_branch__Inline_0__/decoder/If_1', pasted, was refused
    naming 'If_0', the op compared, H110.)"""
    return [(name, where, compared) for name, where, compared, _ in
            subgraph_nodes(graph, inlined)]


def subgraph_nodes(graph, inlined: Optional[Dict[str, str]] = None
                   ) -> List[Tuple[str, str, str, object]]:
    """``subgraph_ops`` with each node itself: ``(name, where, compared, node)`` (its type
    for keep_dtype's ``OpType::`` entries, which ATC matches on every node of the parsed
    graph, an If's subgraphs included)."""
    inlined = inlined or {}
    out: List[Tuple[str, str, str, object]] = []

    def walk(owner, owner_name: str, compared: Optional[str]) -> None:
        for attr_name, sub in subgraphs(owner):
            where = f"the {attr_name} of {owner.op_type} {owner_name!r}"
            side = attr_name.partition("_")[0]
            taken = inlined.get(owner_name) if owner.op_type == "If" else None
            here = (compared if compared is not None else owner_name if taken is None
                    else None if taken == side else "")
            for j, node in enumerate(sub.node):
                name = node.name or f"{owner_name}/{side}/{node.op_type}_{j}"
                out.append((name, where, name if here is None else here, node))
                walk(node, name, here)

    for node in graph.node:
        walk(node, node.name, None)
    return out


def operator_members(graph) -> Dict[str, str]:
    """``{node inside a subgraph: the operator running it}`` for the nodes of ``graph``'s If
    (Loop, Scan) nodes that a conversion runs as one operator, nested ones under the outermost:
    a golden that inlines a branch its inputs decide has their tensors, which the device never
    dumps, as it dumps no fused op's members (a detector's batched-NMS If: 31 golden ops read
    "unmatched" where the If's output was compared; trial T3)."""
    return {name: compared for name, _, compared in subgraph_ops(graph)
            if compared and compared != name}

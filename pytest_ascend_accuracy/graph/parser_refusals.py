"""What ATC's ONNX parser refuses to convert, in one place: ``Loop``/``Scan`` (no parser is
registered for them: ``graph.control_flow``) and attribute values CANN's ONNX op plugins refuse.

``ArgMax``/``ArgMin`` with ``select_last_index=1``: the plugins' ``ParseParams`` return FAILED
("Only support select_last_index=0, but 1 is obtained now", canndev
``ops/built-in/framework/onnx_plugin/argmax_plugin.cc`` as the mirror
``dengguojie/vue-element-admin`` @031e9875 holds it, and the 2025 ops-math ArgMax plugin;
"select_last_index should be 0, but now it's 1", ``argmin_plugin.cc`` @031e9875 and
``hicann/ops-math`` ``math/arg_min/framework/argmin_onnx_plugin.cpp`` @514e2e82; an older
canndev, @fc04ed3d, only warned and converted the op taking the first index). GraphEngine's
parser then reports ``E11010`` with the op's name and its ``ai.onnx::<opset>::<type>``
(``Ascend/parser`` ``parser/onnx/onnx_parser.cc`` @069eb8b2, ``ParseOpParam``:
``ATCReportErrMessage("E11010", {"opname", "optype"}, ...)``) and the conversion stops. The
error registry text of E11010 was not found (the 2025 registry found lists E11009 and E11012,
not E11010): the fake ATC (``testing.fake_atc``) prints the code and the two arguments in
words of ours, with the plugin's message.

The emulator computed such an op (onnxruntime takes the last index) and passed a model no NPU
would get; ``parser_refusal`` refuses it at conversion, naming the op and what to export instead.

Ops that share a name (two nodes named ``dup``, as real exporters write them; a node named as a
graph input): the parser's pre-check refuses the model with ``E19009`` (``names``: where its
sources say so). The registry text is "Op [%s] has a name conflict in the graph." (Huawei's
CANN 5.0.4 troubleshooting page "E19009 Operator Name Conflict", hiascend.com
``troubleshooting_01_0112``). Preparation renamed the second ``dup`` to ``dup_1`` and both
runs went on, so a failure named ``dup_1``, a name in no file the user has (an odd-graphs
trial); ``name_refusal`` refuses the model in ``prepare.prepare_model``, before the golden run
too (onnxruntime refuses two nodes of one name: "two nodes with same node name").
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from .control_flow import (atc_graphs, atc_named_nodes, loop_ops, loop_refusal, onnx_opset,
                           subgraphs)
from .names import atc_op_names, repeated_names, unique_name

#: ONNX type -> (attribute, the value the plugin refuses, the plugin's message)
REFUSED_ATTRIBUTES = {
    "ArgMax": ("select_last_index", 1, "Only support select_last_index=0, but 1 is obtained now"),
    "ArgMin": ("select_last_index", 1, "select_last_index should be 0, but now it's 1"),
}
ATC_CODE = "E11010"
#: ONNX quantisation ops no CANN ONNX parser plugin was found for (backends/emulator/atc_quant.py,
#: which warns of them on the emulator, cites the sources)
QUANT_OP_TYPES = frozenset({"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
                            "QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger",
                            "MatMulNBits"})  # (com.microsoft's 4-bit weight-only MatMul)
#: the domains those ops come in: ONNX's, and onnxruntime's quantiser's contrib ops
QUANT_DOMAINS = frozenset({"", "ai.onnx", "com.microsoft"})
NAME_CODE = "E19009"  # the parser's pre-check: an op name repeated


def quant_nodes(graph) -> List[Tuple[str, str, str]]:
    """``(name, op type, domain)`` of the quantisation ops (``QUANT_OP_TYPES``) of ``graph``, If
    branches included (a review: ops inside a branch, and com.microsoft's QDQ contrib ops,
    raised no warning), named as ATC's parser names them (``control_flow.atc_named_nodes``)."""
    return [(name, node.op_type, node.domain) for node, name, _ in atc_named_nodes(graph)
            if node.op_type in QUANT_OP_TYPES and node.domain in QUANT_DOMAINS]


def refused_attributes(graph) -> List[Tuple[str, str, str, int, str]]:
    """``(node name, op type, attribute, value, where)`` of every node of ``graph`` (the
    branches of its ``If`` nodes included, which ATC parses too) whose attribute value a CANN
    ONNX plugin refuses (``REFUSED_ATTRIBUTES``), named as ATC names them
    (``control_flow.atc_named_nodes``)."""
    found = []
    for node, name, where in atc_named_nodes(graph):
        spec = REFUSED_ATTRIBUTES.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if spec is not None:
            attr, refused, _ = spec
            value = next((a.i for a in node.attribute if a.name == attr), 0)
            if value == refused:
                found.append((name, node.op_type, attr, value, where))
    return found


def attribute_refusal(label: str, model) -> str:
    """Why ``model`` (shown as ``label``) cannot be converted: its ops with an attribute value
    ATC's ONNX parser refuses; "" when it has none."""
    found = refused_attributes(model.graph)
    if not found:
        return ""
    name, op_type, attr, value, _ = found[0]
    shown = "; ".join(f"{n!r} ({t}{' ' + w if w else ''})" for n, t, _a, _v, w in found[:8])
    more = f"; and {len(found) - 8} more" if len(found) > 8 else ""
    many = len(found) != 1
    return (f"model {label!r} has {len(found)} operator{'s' if many else ''} with {attr}="
            f"{value}: {shown}{more}. CANN's ONNX parser refuses {'them' if many else 'it'} "
            f"(\"{REFUSED_ATTRIBUTES[op_type][2]}\"; ATC stops with {ATC_CODE} for Op [{name}], "
            f"optype [ai.onnx::{onnx_opset(model)}::{op_type}]), so the model cannot be "
            f"converted; export it with {attr}=0 (the first of equal values is taken), or, "
            f"where the last one matters, reverse the axis before it (Slice with starts=[-1], "
            f"ends=[-2**62], axes=[axis], steps=[-1]: ends=[0] would drop element 0) and take "
            f"the axis length minus 1 minus the index")


def _renames(graph, repeated) -> List[Tuple[int, str]]:
    """``(node index, new name)`` that leave no name of ``repeated`` shared: every node of a
    name a graph input or an initializer's Const op also has, all but one node of a name only
    nodes share (an unnamed one kept: naming it would shift the names ATC gives the unnamed
    nodes after it); [] where those names would clash again."""
    from types import SimpleNamespace as Ns

    used = {name for name, _, _ in atc_op_names(graph)}
    out = []
    for name, holders in repeated.items():
        nodes = [j for _, j in holders if j is not None]
        if len(nodes) == len(holders):
            keep = next((j for j in nodes if not graph.node[j].name), nodes[0])
            nodes = [j for j in nodes if j != keep]
        out += [(j, unique_name(name, used)) for j in nodes]
    new = dict(out)
    renamed = Ns(node=[Ns(name=new.get(j, n.name), op_type=n.op_type)
                       for j, n in enumerate(graph.node)],
                 input=graph.input, initializer=graph.initializer)
    return [] if repeated_names(renamed) else out


def _outer_values(if_node) -> List[str]:
    """What either branch of ``if_node`` reads from outside (``IfSubgraphAdapter`` adds them to
    both as inputs)."""
    from .stream import node_reads

    outer: List[str] = []
    for _, sub in subgraphs(if_node):
        local = ({o for n in sub.node for o in n.output} | {t.name for t in sub.initializer}
                 | {i.name for i in sub.input})
        outer += [t for n in sub.node for t in node_reads(n) if t not in local]
    return list(dict.fromkeys(outer))


def branch_repeats(graph) -> List[Tuple[str, dict]]:
    """``(where, repeated names)`` of each If branch of ``graph`` (nested ones included) in
    which ATC's pre-check finds ops sharing a name: the parser parses a branch as a graph of
    its own, with a Data op for each outer value either branch reads, so a branch node named
    like such a value, or two branch nodes of one name, stop it with E19009 (a review: they
    converted here, or failed in onnxruntime's words). Unnamed nodes are named as the parser
    names them (``control_flow.atc_graphs``)."""
    found: List[Tuple[str, dict]] = []
    for parsed in atc_graphs(graph)[1:]:
        sub = parsed.graph
        view = type(sub)()
        view.node.extend(sub.node)
        view.initializer.extend(sub.initializer)
        view.input.extend(sub.input)
        held = {i.name for i in sub.input} | {t.name for t in sub.initializer}
        for name in _outer_values(parsed.owner):
            if name not in held:
                view.input.add().name = name
        repeated = repeated_names(view, parsed.first_unnamed)
        if repeated:
            found.append((f"the {parsed.attr} of If {parsed.owner_name!r}", repeated))
    return found


def name_refusal(label: str, graph) -> str:
    """Why ATC's ONNX parser refuses ``graph`` (the main graph of model ``label``, as in the
    file) for ops that share a name (``names.repeated_names``), with the renames that make
    it convertible; "" when every name is unique."""
    repeated = repeated_names(graph)
    if not repeated:
        inner = branch_repeats(graph)
        if not inner:
            return ""
        where, names = inner[0]
        first = next(iter(names))
        shown = "; ".join(f"{name!r} names {' and '.join(w for w, _ in holders)}"
                          for name, holders in list(names.items())[:5])
        return (f"model {label!r} has ops that share a name in {where} (a branch is parsed as "
                f"a graph of its own, with a Data op for each outer value the If's branches "
                f"read): {shown}. "
                f"ATC's ONNX parser refuses it (its pre-check stops with {NAME_CODE} \"Op "
                f"[{first}] has a name conflict in the graph.\"), so it is neither converted "
                f"nor run here; give each op of the branch its own name (export the model so)")
    shown = "; ".join(f"{name!r} names {' and '.join(w for w, _ in holders)}"
                      for name, holders in list(repeated.items())[:5])
    more = f"; and {len(repeated) - 5} more names" if len(repeated) > 5 else ""
    first = next(iter(repeated))
    named = [n.name for n in graph.node if n.name]
    ort = (", and onnxruntime refuses to load it too (\"two nodes with same node name\")"
           if len(set(named)) < len(named) else "")
    renames = _renames(graph, repeated)
    how = ("; ".join(f"m.graph.node[{j}].name = {new!r}" for j, new in renames)
           if renames else "")
    fix = (f"give each op its own name: export the model so, or rename on the loaded model m "
           f"and save it ({how})" if how else "give each op its own name (export the model so)")
    return (f"model {label!r} has ops that share a name: {shown}{more}. ATC's ONNX parser "
            f"refuses it (its pre-check stops with {NAME_CODE} \"Op [{first}] has a name "
            f"conflict in the graph.\"){ort}, so it is neither converted nor run here; {fix}")


def parser_refusal(label: str, model) -> str:
    """Why ATC's ONNX parser cannot convert ``model``: its ``Loop``/``Scan`` ops
    (``loop_refusal``) or its refused attribute values (``attribute_refusal``); "" if neither."""
    return loop_refusal(label, model) or attribute_refusal(label, model)


def atc_parse_error(model) -> Optional[Tuple[str, str]]:
    """``(code, message)`` ATC's ONNX parser stops ``model`` with, as the fake ATC prints it:
    ``E19009`` for ops that share a name, ``E19010`` for a ``Loop``/``Scan`` or a quantisation
    op, ``E11010`` for a refused attribute; None if none."""
    repeated = repeated_names(model.graph) or next(
        (names for _, names in branch_repeats(model.graph)), None)
    if repeated:  # the pre-check's, before any op is parsed
        return NAME_CODE, f"Op [{next(iter(repeated))}] has a name conflict in the graph."
    unparsed = [(name, op_type, "") for name, op_type, _ in loop_ops(model.graph)[:1]] or (
        quant_nodes(model.graph)[:1])  # no parser for them either (atc_quant.py)
    if unparsed:
        name, op_type, domain = unparsed[0]
        domain = domain if domain not in ("", "ai.onnx") else ""
        version = (next((o.version for o in model.opset_import if o.domain == domain), 0)
                   if domain else onnx_opset(model))  # ATC: domain::version::type
        return "E19010", (f"No parser is registered for Op [{name}, optype "
                          f"[{domain or 'ai.onnx'}::{version}::{op_type}]].")
    found = refused_attributes(model.graph)
    if found:
        name, op_type, _, _, _ = found[0]
        return ATC_CODE, (f"Failed to parse the parameters of Op [{name}], optype "
                          f"[ai.onnx::{onnx_opset(model)}::{op_type}]. "
                          f"{REFUSED_ATTRIBUTES[op_type][2]}.")
    return None

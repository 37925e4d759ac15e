"""What ATC's ONNX parser refuses to convert, in one place (``parser_refusal``,
``atc_parse_error``): ops that share a name, ``Loop``/``Scan`` (no parser is registered for
them: ``graph.control_flow``), ``STFT``/``DFT`` (no plugin found: ``graph.signal_ops``), ops of
other domains (``graph.op_domains``) and attribute values CANN's ONNX op plugins refuse.

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
too (onnxruntime refuses two nodes of one name, "two nodes with same node name", unless they
are ``Constant`` nodes, which it makes initializers first: the refusal says so only then).

Ops ATC's parser has no parser for by their domain (``ai.onnx.ml``, onnxruntime's
``com.microsoft`` contrib ops, calls of model-local functions: ``op_domains``, which cites the
sources) are refused with ``E19010`` by ``domain_refusal``, which offers the
``onnx.utils.extract_model`` call that cuts out the part before them where that part is one
ATC parses: no op with a subgraph (whose outer reads extract_model does not follow), no
quantisation op, no refused attribute value (a review: the cut held a QLinearConv the fake ATC
stopped at, or an ArgMax with select_last_index=1, E11010).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from .control_flow import (atc_graphs, atc_named_nodes, loop_ops, loop_refusal, onnx_opset,
                           subgraphs)
from .names import atc_op_names, repeated_names, unique_name
from .op_domains import (ONNX_DOMAINS, UNPARSED_CODE, atc_optype, foreign_nodes, foreign_refusal,
                         found_list, is_foreign, is_quant)

#: ONNX type -> (attribute, the value the plugin refuses, the plugin's message)
REFUSED_ATTRIBUTES = {
    "ArgMax": ("select_last_index", 1, "Only support select_last_index=0, but 1 is obtained now"),
    "ArgMin": ("select_last_index", 1, "select_last_index should be 0, but now it's 1"),
}
ATC_CODE = "E11010"
NAME_CODE = "E19009"  # the parser's pre-check: an op name repeated


def _refused_value(node) -> Optional[int]:
    """The value of ``node``'s attribute that a CANN ONNX plugin refuses
    (``REFUSED_ATTRIBUTES``), or None."""
    spec = REFUSED_ATTRIBUTES.get(node.op_type) if node.domain in ONNX_DOMAINS else None
    if spec is None:
        return None
    attr, refused, _ = spec
    value = next((a.i for a in node.attribute if a.name == attr), 0)
    return value if value == refused else None


def _npu_part(model, found) -> Optional[Tuple[List[str], List[str]]]:
    """``(input names, output names)`` of the part of ``model``'s graph before its ``found``
    ops (``foreign_nodes``), which ``onnx.utils.extract_model`` cuts out as a model ATC parses:
    None where one is inside a branch, where none is fed by an op, or where that part would
    hold one, an op with a subgraph (whose outer reads extract_model does not follow), a
    quantisation op or a refused attribute value (ATC stops at them too)."""
    graph = model.graph
    chosen = {j for j, n in enumerate(graph.node) if is_foreign(model, n)}
    if len(chosen) != len(found):
        return None
    producer = {out: j for j, n in enumerate(graph.node) for out in n.output if out}
    outputs = list(dict.fromkeys(t for j in sorted(chosen) for t in graph.node[j].input
                                 if t in producer and producer[t] not in chosen))
    held = {t.name for t in graph.initializer}
    inputs, seen, todo = [], set(), list(outputs)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        j = producer.get(name)
        if j is None:
            if name not in held:
                inputs.append(name)
            continue
        node = graph.node[j]
        if (j in chosen or next(subgraphs(node), None) is not None or is_quant(node)
                or _refused_value(node) is not None):
            return None
        todo.extend(t for t in node.input if t)
    order = [i.name for i in graph.input]
    inputs.sort(key=lambda n: order.index(n) if n in order else len(order))
    return (inputs, outputs) if outputs else None


def domain_refusal(label: str, model) -> str:
    """Why ``model`` (shown as ``label``) cannot be converted: its ops that ATC's ONNX parser
    has no parser for by their domain (``op_domains.foreign_nodes``), with the cut of the part
    before them where ATC parses that part (``_npu_part``); "" when it has none."""
    found = foreign_nodes(model)
    if not found:
        return ""
    part = _npu_part(model, found)
    return foreign_refusal(label, model, found) + (
        f"; the part before them converts as a model of its own: onnx.utils.extract_model("
        f"input_path, output_path, {part[0]!r}, {part[1]!r})" if part is not None else "")


def refused_attributes(graph) -> List[Tuple[str, str, str, int, str]]:
    """``(node name, op type, attribute, value, where)`` of every node of ``graph`` (the
    branches of its ``If`` nodes included, which ATC parses too) whose attribute value a CANN
    ONNX plugin refuses (``REFUSED_ATTRIBUTES``), named as ATC names them
    (``control_flow.atc_named_nodes``)."""
    found = []
    for node, name, where in atc_named_nodes(graph):
        value = _refused_value(node)
        if value is not None:
            found.append((name, node.op_type, REFUSED_ATTRIBUTES[node.op_type][0], value, where))
    return found


def attribute_refusal(label: str, model) -> str:
    """Why ``model`` (shown as ``label``) cannot be converted: its ops with an attribute value
    ATC's ONNX parser refuses; "" when it has none."""
    found = refused_attributes(model.graph)
    if not found:
        return ""
    name, op_type, attr, value, _ = found[0]
    shown = found_list([f"{n!r} ({t}{' ' + w if w else ''})" for n, t, _a, _v, w in found], 8)
    many = len(found) != 1
    return (f"model {label!r} has {len(found)} operator{'s' if many else ''} with {attr}="
            f"{value}: {shown}. CANN's ONNX parser refuses {'them' if many else 'it'} "
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
        shown = found_list([f"{name!r} names {' and '.join(w for w, _ in holders)}"
                            for name, holders in names.items()], 5)
        return (f"model {label!r} has ops that share a name in {where} (a branch is parsed as "
                f"a graph of its own, with a Data op for each outer value the If's branches "
                f"read): {shown}. "
                f"ATC's ONNX parser refuses it (its pre-check stops with {NAME_CODE} \"Op "
                f"[{first}] has a name conflict in the graph.\"), so it is neither converted "
                f"nor run here; give each op of the branch its own name (export the model so)")
    shown = found_list([f"{name!r} names {' and '.join(w for w, _ in holders)}"
                        for name, holders in repeated.items()], 5, "names")
    first = next(iter(repeated))
    ort = (", and onnxruntime refuses to load it too (\"two nodes with same node name\")"
           if _ort_repeats(graph) else "")
    renames = _renames(graph, repeated)
    how = ("; ".join(f"m.graph.node[{j}].name = {new!r}" for j, new in renames)
           if renames else "")
    fix = (f"give each op its own name: export the model so, or rename on the loaded model m "
           f"and save it ({how})" if how else "give each op its own name (export the model so)")
    return (f"model {label!r} has ops that share a name: {shown}. ATC's ONNX parser "
            f"refuses it (its pre-check stops with {NAME_CODE} \"Op [{first}] has a name "
            f"conflict in the graph.\"){ort}, so it is neither converted nor run here; {fix}")


def _ort_repeats(graph) -> bool:
    """Whether onnxruntime refuses ``graph`` for a repeated node name: it turns ``Constant``
    nodes into initializers before it checks names (``Graph``'s constructor), so only names
    repeated among the other nodes count (onnxruntime 1.32: two Relus named ``dup`` are
    refused, two Constants, or a Constant and a Relu, load; silero_vad_openvino_16k's 15
    Constants of one name load)."""
    named = [n.name for n in graph.node
             if n.name and not (n.op_type == "Constant" and n.domain in ONNX_DOMAINS)]
    return len(set(named)) < len(named)


def parser_refusal(label: str, model) -> str:
    """Why ATC's ONNX parser cannot convert ``model``: its ``Loop``/``Scan`` ops
    (``loop_refusal``), its ``STFT``/``DFT`` ops (``signal_ops``), its ops of other domains
    (``domain_refusal``) or its refused attribute values (``attribute_refusal``); "" if none."""
    from .signal_ops import signal_refusal

    return (loop_refusal(label, model) or signal_refusal(label, model)
            or domain_refusal(label, model) or attribute_refusal(label, model))


def atc_parse_error(model) -> Optional[Tuple[str, str]]:
    """``(code, message)`` ATC's ONNX parser stops ``model`` with, as the fake ATC prints it:
    ``E19009`` for ops that share a name, ``E19010`` for the first op it has no parser for (a
    ``Loop``/``Scan``, a quantisation op, an op of another domain: ``foreign_nodes``; in the
    order its pre-check meets them), ``E11010`` for a refused attribute; None if none."""
    repeated = repeated_names(model.graph) or next(
        (names for _, names in branch_repeats(model.graph)), None)
    if repeated:  # the pre-check's, before any op is parsed
        return NAME_CODE, f"Op [{next(iter(repeated))}] has a name conflict in the graph."
    from .signal_ops import signal_ops

    loops = {(name, where) for name, _, where in loop_ops(model.graph) + signal_ops(model.graph)}
    unparsed = next(((node, name) for node, name, where in atc_named_nodes(model.graph)
                     if (name, where) in loops or is_quant(node) or is_foreign(model, node)),
                    None)  # a quantisation op too: atc_quant.py warns of it on the emulator
    if unparsed:
        node, name = unparsed
        return UNPARSED_CODE, (f"No parser is registered for Op [{name}, optype "
                               f"[{atc_optype(model, node)}]].")
    found = refused_attributes(model.graph)
    if found:
        name, op_type, _, _, _ = found[0]
        return ATC_CODE, (f"Failed to parse the parameters of Op [{name}], optype "
                          f"[ai.onnx::{onnx_opset(model)}::{op_type}]. "
                          f"{REFUSED_ATTRIBUTES[op_type][2]}.")
    return None

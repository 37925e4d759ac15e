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

Ops of a domain other than ONNX's own (``ai.onnx.ml``'s TreeEnsemble, Binarizer, LabelEncoder;
onnxruntime's ``com.microsoft`` contrib ops FusedConv, Gelu, Attention, which its graph
optimisations write): the parser names an op ``<domain>::<opset>::<type>`` (``ConstructOriType``:
the node's domain, ``ai.onnx`` for none, and that domain's ``opset_import`` version;
``Ascend/parser`` ``parser/onnx/onnx_parser.cc`` @069eb8b2, ``hicann/ge``
``parser/parser/onnx/onnx_parser.cc`` @0273d4ef) and its pre-check looks a parser up by that
type (``PreChecker::CheckTypeSupported``: ``GetOmTypeByOriOpType``, else ``E19010`` with the
op's name and type; ``Ascend/parser`` ``parser/common/pre_checker.cc`` @22f329ae). CANN's ONNX
plugins register ``ai.onnx::<opset>::<type>`` types (canndev
``ops/built-in/framework/onnx_plugin``, as ``dengguojie/vue-element-admin`` mirrors it; the 2025
hicann ops repositories) and, of other domains, only (``REGISTERED_TYPES``,
``REGISTERED_DOMAINS``): ``com.microsoft::11``..``18``::MultiHeadAttention (ops-transformer
``attention/flash_attention_score/framework/multi_head_attention_onnx_plugin.cpp``, as the fork
``yuanfang-chen/ops-transformer`` @5f193aad holds it; onnxruntime's optimiser imports
com.microsoft at opset 1, which it does not cover), and torch_npu's exports ``npu::1::NPU<Name>``
(``NPURmsNorm``: ops-nn ``norm/rms_norm/framework/npu_rms_norm_onnx_plugin.cpp``, as the fork
``jbgztxdy/ops-nn`` @732de1d5 holds it; ``NPUIou``, ``NPUFlashAttention``, ... many, differing
by release: taken by domain, and onnxruntime has no kernel for them, so no emulator run can pass
one). A node calling a model-local function (``model.functions``, which onnxruntime expands) is
looked up so too: no sign of the parser reading a FunctionProto was found. The emulator computed
the others as onnxruntime does and passed models no NPU would get (the ONNX node test
``ai_onnx_ml_tree_ensemble_set_membership``: float16 moved 1.2 out of its set, sample 0 scored
100 in class 3 instead of 1 in class 0, and the whole-tensor cosine, 0.9975, passed);
``domain_refusal`` refuses them at conversion, but the quantisation ops
``backends/emulator/atc_quant.py`` warns of (``QUANT_OP_TYPES``). (An older parser,
``Ascend/parser`` @069eb8b2, stops a model that imports two opsets sooner still: its first
``ai.onnx`` op fails ``ConstructOriType`` with ``E16005``, a node of no domain needing exactly one
opset; the 2025 parser maps no domain to ``ai.onnx``.)
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from .control_flow import (UNPARSED_CONTROL_FLOW, atc_graphs, atc_named_nodes, loop_refusal,
                           onnx_opset, subgraphs)
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
UNPARSED_CODE = "E19010"  # the parser's pre-check: no parser registered for an op's type
ONNX_DOMAINS = frozenset({"", "ai.onnx"})  # ONNX's own ops (ATC: no domain is ai.onnx)
#: (domain, type) -> the domain versions a CANN ONNX plugin registers that type of another
#: domain than ONNX's for (module docstring)
REGISTERED_TYPES = {("com.microsoft", "MultiHeadAttention"): frozenset(range(11, 19))}
#: domain -> versions whose every type is taken: torch_npu's exports (module docstring)
REGISTERED_DOMAINS = {"npu": frozenset({1})}


def quant_nodes(graph) -> List[Tuple[str, str, str]]:
    """``(name, op type, domain)`` of the quantisation ops (``QUANT_OP_TYPES``) of ``graph``, If
    branches included (a review: ops inside a branch, and com.microsoft's QDQ contrib ops,
    raised no warning), named as ATC's parser names them (``control_flow.atc_named_nodes``)."""
    return [(name, node.op_type, node.domain) for node, name, _ in atc_named_nodes(graph)
            if node.op_type in QUANT_OP_TYPES and node.domain in QUANT_DOMAINS]


def atc_optype(model, node) -> str:
    """``node``'s type as ATC's parser names it: ``<domain>::<opset>::<type>``, the domain
    ``ai.onnx`` for none and its version the model's ``opset_import`` of it."""
    domain = node.domain if node.domain not in ONNX_DOMAINS else ""
    version = (next((o.version for o in model.opset_import if o.domain == domain), 0)
               if domain else onnx_opset(model))
    return f"{domain or 'ai.onnx'}::{version}::{node.op_type}"


def _is_quant(node) -> bool:
    return node.op_type in QUANT_OP_TYPES and node.domain in QUANT_DOMAINS


def _registered(model, node) -> bool:
    """Whether a CANN ONNX plugin registers ``node``'s type (a node of ONNX's own domain: not
    asked here)."""
    version = next((o.version for o in model.opset_import if o.domain == node.domain), None)
    return (version in REGISTERED_TYPES.get((node.domain, node.op_type), ())
            or version in REGISTERED_DOMAINS.get(node.domain, ()))


def _is_foreign(model, node) -> bool:
    """Whether ``node`` is of a domain other than ONNX's that no CANN ONNX plugin registers,
    and no quantisation op (``quant_nodes``: ``atc_quant.py`` warns of them)."""
    return (node.domain not in ONNX_DOMAINS and not _is_quant(node)
            and not _registered(model, node))


def foreign_nodes(model) -> List[Tuple[object, str, str]]:
    """``(node, name, where)`` of the ops of ``model`` (its If branches included, named and
    ordered as ATC's parser names them: ``control_flow.atc_named_nodes``) of a domain other
    than ONNX's that ATC's parser has no parser for (``_is_foreign``)."""
    return [(node, name, where) for node, name, where in atc_named_nodes(model.graph)
            if _is_foreign(model, node)]


def _npu_part(model, found) -> Optional[Tuple[List[str], List[str]]]:
    """``(input names, output names)`` of the part of ``model``'s graph before its ``found``
    ops (``foreign_nodes``), which ``onnx.utils.extract_model`` cuts out as a model ATC parses:
    None where one is inside a branch, where none is fed by an op, or where that part would
    hold one (or an op with a subgraph, whose outer reads extract_model does not follow)."""
    graph = model.graph
    chosen = {j for j, n in enumerate(graph.node) if _is_foreign(model, n)}
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
        elif j in chosen or any(a.type in (5, 10) for a in graph.node[j].attribute):
            return None  # (5, 10: onnx.AttributeProto.GRAPH, GRAPHS)
        else:
            todo.extend(t for t in graph.node[j].input if t)
    order = [i.name for i in graph.input]
    inputs.sort(key=lambda n: order.index(n) if n in order else len(order))
    return (inputs, outputs) if outputs else None


def _domain_advice(model, found) -> str:
    """What to do about ``found`` (``foreign_nodes``), by their domains."""
    local = {(f.domain, f.name) for f in model.functions}
    mine = [n for n, _, _ in found if (n.domain, n.op_type) not in local]
    domains = list(dict.fromkeys(node.domain for node in mine))
    said = []
    if len(mine) < len(found):
        said.append("the model's own functions (model.functions) are not expanded by ATC's "
                    "parser: inline them and convert the result, onnx.save(onnx.inliner."
                    "inline_local_functions(onnx.load(input_path)), output_path)")
    if "ai.onnx.ml" in domains:
        said.append("ai.onnx.ml ops (classical machine learning: trees, encoders, scalers) "
                    "have no CANN parser: run that stage on the host (onnxruntime on the CPU) "
                    "and convert the rest, or export the model with standard ONNX ops only")
    if any(d == "com.microsoft" or d.startswith(("com.microsoft.", "com.ms.")) for d in domains):
        said.append("com.microsoft ops are onnxruntime's contrib ops, which its optimisations "
                    "write: convert the model as exported, not a file onnxruntime saved after "
                    "optimising it (SessionOptions.optimized_model_filepath at a "
                    "graph_optimization_level above onnxruntime.GraphOptimizationLevel."
                    "ORT_DISABLE_ALL, or onnxruntime.transformers.optimizer's output)")
    other = next((n for n in mine if n.domain != "ai.onnx.ml" and n.domain != "com.microsoft"
                  and not n.domain.startswith(("com.microsoft.", "com.ms."))), None)
    if other is not None:
        said.append(f"export the model with standard ONNX (ai.onnx) ops only, or give ATC a "
                    f"parser for the op: a custom operator's ONNX plugin registering "
                    f"OriginOpType(\"{atc_optype(model, other)}\")")
    part = _npu_part(model, found)
    if part is not None:
        said.append(f"the part before them converts as a model of its own: "
                    f"onnx.utils.extract_model(input_path, output_path, {part[0]!r}, "
                    f"{part[1]!r})")
    return "; ".join(said)


def domain_refusal(label: str, model) -> str:
    """Why ``model`` (shown as ``label``) cannot be converted: its ops of another domain than
    ONNX's that ATC's ONNX parser has no parser for (``foreign_nodes``); "" when it has
    none."""
    found = foreign_nodes(model)
    if not found:
        return ""
    shown = "; ".join(f"{name!r} ({atc_optype(model, node)}{' ' + where if where else ''})"
                      for node, name, where in found[:8])
    more = f"; and {len(found) - 8} more" if len(found) > 8 else ""
    domains = list(dict.fromkeys(node.domain for node, _, _ in found))
    many = len(found) != 1
    node, name, _ = found[0]
    return (f"model {label!r} has {len(found)} operator{'s' if many else ''} of "
            f"{'domains' if len(domains) > 1 else 'domain'} {', '.join(domains)}, not ONNX's "
            f"own (ai.onnx): {shown}{more}. CANN's ONNX parser has no parser for "
            f"{'them' if many else 'it'} (its plugins register ai.onnx types and, of other "
            f"domains, only torch_npu's npu ops and com.microsoft MultiHeadAttention at opsets "
            f"11 to 18; ATC stops with "
            f"{UNPARSED_CODE} \"No parser is registered for Op [{name}, optype "
            f"[{atc_optype(model, node)}]].\"), so the model cannot be converted, and the "
            f"emulator does not compute {'them' if many else 'it'} as a device would; "
            f"{_domain_advice(model, found)}")


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
    (``loop_refusal``), its ops of other domains (``domain_refusal``) or its refused attribute
    values (``attribute_refusal``); "" if none."""
    return (loop_refusal(label, model) or domain_refusal(label, model)
            or attribute_refusal(label, model))


def atc_parse_error(model) -> Optional[Tuple[str, str]]:
    """``(code, message)`` ATC's ONNX parser stops ``model`` with, as the fake ATC prints it:
    ``E19009`` for ops that share a name, ``E19010`` for the first op it has no parser for (a
    ``Loop``/``Scan``, a quantisation op, an op of another domain: ``foreign_nodes``; in the
    order its pre-check meets them), ``E11010`` for a refused attribute; None if none."""
    repeated = repeated_names(model.graph) or next(
        (names for _, names in branch_repeats(model.graph)), None)
    if repeated:  # the pre-check's, before any op is parsed
        return NAME_CODE, f"Op [{next(iter(repeated))}] has a name conflict in the graph."
    unparsed = next(((node, name) for node, name, _ in atc_named_nodes(model.graph)
                     if (node.op_type in UNPARSED_CONTROL_FLOW and node.domain in ONNX_DOMAINS)
                     or _is_quant(node) or _is_foreign(model, node)), None)  # atc_quant.py too
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

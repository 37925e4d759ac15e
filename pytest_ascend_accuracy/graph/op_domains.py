"""Ops of a domain other than ONNX's own, which ATC's ONNX parser has no parser for.

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
looked up so too, whatever its domain (one declared in ONNX's, which ``onnx.checker`` refuses
and the emulator converted, is ``ai.onnx::<opset>::<name>`` to the parser, a type no plugin
registers): no sign of the parser reading a FunctionProto was found. The emulator computed the
others as onnxruntime does and passed models no NPU would get (the ONNX node test
``ai_onnx_ml_tree_ensemble_set_membership``: float16 moved 1.2 out of its set, sample 0 scored
100 in class 3 instead of 1 in class 0, and the whole-tensor cosine, 0.9975, passed);
``parser_refusals.domain_refusal`` refuses them at conversion. (An older parser,
``Ascend/parser`` @069eb8b2, stops a model that imports two opsets sooner still: its first
``ai.onnx`` op fails ``ConstructOriType`` with ``E16005``, a node of no domain needing exactly one
opset; the 2025 parser maps no domain to ``ai.onnx``.)

Quantisation ops (``QUANT_OP_TYPES``) are not refused but warned of
(``backends/emulator/atc_quant.py``, which cites why ATC does not convert them), in ONNX's
domain and in onnxruntime's ``com.microsoft``, where its quantisers write them: the QDQ
format's QuantizeLinear/DequantizeLinear (``UseQDQContribOps``), the QOperator format's
QLinearConv, QLinearAdd, QLinearSigmoid, QGemm, QAttention, ... (a review: a
``quantize_static(..., quant_format=QuantFormat.QOperator)`` model was refused as an optimised
one), the dynamic and weight-only ones. The list is onnxruntime 1.32.0's: the op types its
``onnxruntime/quantization`` writes (``operators/*.py``' ``make_node`` calls for the
``QLinearOpsRegistry``/``IntegerOpsRegistry`` of ``registry.py``; ``matmul_nbits_quantizer.py``,
``matmul_bnb4_quantizer.py``), and the ``com.microsoft`` schemas it registers
(``onnxruntime.capi.onnxruntime_pybind11_state.get_all_operator_schema()``) whose
documentation describes quantised data: quantising, dequantising, or computing on integer or
low-bit codes with their scales. That takes in the fusions its optimiser writes of quantised
ops (DynamicQuantizeMatMul, MatMulIntegerToFloat: ``microsoft/onnxruntime``
``onnxruntime/core/optimizer/dynamic_quantize_matmul_fusion.h``, ``matmul_integer_to_float.h``;
MatMulNBitsMlp and MatMulNBitsQkv, whose schemas say they fuse MatMulNBits projections), not
GemmFloat8 (a float8 Gemm) nor attention ops with a quantised cache (GroupQueryAttention).
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

from .control_flow import atc_named_nodes, onnx_opset

UNPARSED_CODE = "E19010"  # the parser's pre-check: no parser registered for an op's type
ONNX_DOMAINS = frozenset({"", "ai.onnx"})  # ONNX's own ops (ATC: no domain is ai.onnx)
#: quantisation ops no CANN ONNX parser plugin was found for (backends/emulator/atc_quant.py,
#: which warns of them on the emulator, cites the sources): ONNX's, and onnxruntime's
#: com.microsoft ones (module docstring)
QUANT_OP_TYPES = frozenset({
    "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv",
    "QLinearMatMul", "ConvInteger", "MatMulInteger",
    # onnxruntime's QOperator format
    "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearConcat",
    "QLinearAveragePool", "QLinearGlobalAveragePool", "QLinearSoftmax", "QLinearReduceMean",
    "QLinearWhere", "QGemm", "QAttention", "QEmbedLayerNormalization",
    # dynamic and integer ones
    "DynamicQuantizeLSTM", "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "MatMulInteger16",
    "MulInteger", "ReduceSumInteger",
    # cuBLASLt's ordered int8 layouts, block floating point
    "QuantizeWithOrder", "DequantizeWithOrder", "QOrderedMatMul", "QOrderedAttention",
    "QOrderedGelu", "QOrderedLayerNormalization", "QOrderedLongformerAttention",
    "QuantizeBFP", "DequantizeBFP",
    # weight-only (4-bit MatMulNBits, ...)
    "MatMulNBits", "MatMulNBitsMlp", "MatMulNBitsQkv", "MatMulNBitsQLoRA", "MatMulBnb4",
    "MatMulFpQ4", "MatMulBlockQuantizedFp4Weight", "MatMulBlockQuantizedFp8Weight",
    "GatherBlockQuantized", "GatherPacked", "MatMulPacked", "QMoE"})
#: the domains those ops come in: ONNX's, and onnxruntime's contrib ops
QUANT_DOMAINS = frozenset({"", "ai.onnx", "com.microsoft"})
#: (domain, type) -> the domain versions a CANN ONNX plugin registers that type of another
#: domain than ONNX's for (module docstring)
REGISTERED_TYPES = {("com.microsoft", "MultiHeadAttention"): frozenset(range(11, 19))}
#: domain -> versions whose every type is taken: torch_npu's exports (module docstring)
REGISTERED_DOMAINS = {"npu": frozenset({1})}


def found_list(items: Sequence[str], limit: int, noun: str = "") -> str:
    """The first ``limit`` of ``items`` joined by "; ", then "; and N more" (``noun`` after
    it: "names") for the rest: how a refusal lists what it found."""
    rest = len(items) - limit
    return "; ".join(items[:limit]) + (f"; and {rest} more{' ' + noun if noun else ''}"
                                       if rest > 0 else "")


def is_quant(node) -> bool:
    """Whether ``node`` is a quantisation op (``QUANT_OP_TYPES`` in ``QUANT_DOMAINS``)."""
    return node.op_type in QUANT_OP_TYPES and node.domain in QUANT_DOMAINS


def quant_nodes(graph) -> List[Tuple[str, str, str]]:
    """``(name, op type, domain)`` of the quantisation ops (``is_quant``) of ``graph``, If
    branches included (a review: ops inside a branch, and com.microsoft's QDQ contrib ops,
    raised no warning), named as ATC's parser names them (``control_flow.atc_named_nodes``)."""
    return [(name, node.op_type, node.domain) for node, name, _ in atc_named_nodes(graph)
            if is_quant(node)]


def atc_optype(model, node) -> str:
    """``node``'s type as ATC's parser names it: ``<domain>::<opset>::<type>``, the domain
    ``ai.onnx`` for none and its version the model's ``opset_import`` of it."""
    domain = node.domain if node.domain not in ONNX_DOMAINS else ""
    version = (next((o.version for o in model.opset_import if o.domain == domain), 0)
               if domain else onnx_opset(model))
    return f"{domain or 'ai.onnx'}::{version}::{node.op_type}"


def _registered(model, node) -> bool:
    """Whether a CANN ONNX plugin registers ``node``'s type (a node of ONNX's own domain: not
    asked here)."""
    version = next((o.version for o in model.opset_import if o.domain == node.domain), None)
    return (version in REGISTERED_TYPES.get((node.domain, node.op_type), ())
            or version in REGISTERED_DOMAINS.get(node.domain, ()))


def calls_local_function(model, node) -> bool:
    """Whether ``node`` calls one of ``model.functions`` (its domain and type a function's
    domain and name; ONNX's domain spelled either way)."""
    def key(domain, name):
        return ("" if domain in ONNX_DOMAINS else domain), name

    return key(node.domain, node.op_type) in {key(f.domain, f.name) for f in model.functions}


def is_foreign(model, node) -> bool:
    """Whether ``node`` is an op ATC's parser has no parser for by its domain: of a domain
    other than ONNX's that no CANN ONNX plugin registers, and no quantisation op (``is_quant``:
    ``atc_quant.py`` warns of them), or a call of a model-local function (of any domain)."""
    if calls_local_function(model, node):
        return True
    return node.domain not in ONNX_DOMAINS and not is_quant(node) and not _registered(model, node)


def foreign_nodes(model) -> List[Tuple[object, str, str]]:
    """``(node, name, where)`` of the ops of ``model`` (its If branches included, named and
    ordered as ATC's parser names them: ``control_flow.atc_named_nodes``) that ATC's parser
    has no parser for by their domain (``is_foreign``)."""
    return [(node, name, where) for node, name, where in atc_named_nodes(model.graph)
            if is_foreign(model, node)]


def _microsoft(domain: str) -> bool:
    return domain == "com.microsoft" or domain.startswith(("com.microsoft.", "com.ms."))


def _domain_advice(model, found) -> List[str]:
    """What to do about ``found`` (``foreign_nodes``), by their domains."""
    mine = [n for n, _, _ in found if not calls_local_function(model, n)]
    domains = list(dict.fromkeys(node.domain for node in mine))
    said = []
    if len(mine) < len(found):
        said.append("the model's own functions (model.functions) are not expanded by ATC's "
                    "parser: inline them and convert the result, import onnx.inliner; "
                    "onnx.save(onnx.inliner.inline_local_functions(onnx.load(input_path)), "
                    "output_path)")
    if "ai.onnx.ml" in domains:
        said.append("ai.onnx.ml ops (classical machine learning: trees, encoders, scalers) "
                    "have no CANN parser: run that stage on the host (onnxruntime on the CPU) "
                    "and convert the rest, or export the model with standard ONNX ops only")
    if any(_microsoft(d) for d in domains):
        said.append("com.microsoft ops are onnxruntime's contrib ops, which its optimisations "
                    "write: convert the model as exported, not a file onnxruntime saved after "
                    "optimising it (SessionOptions.optimized_model_filepath at a "
                    "graph_optimization_level above onnxruntime.GraphOptimizationLevel."
                    "ORT_DISABLE_ALL, or onnxruntime.transformers.optimizer's output)")
    other = next((n for n in mine if n.domain != "ai.onnx.ml" and not _microsoft(n.domain)), None)
    if other is not None:
        said.append(f"export the model with standard ONNX (ai.onnx) ops only, or give ATC a "
                    f"parser for the op: a custom operator's ONNX plugin registering "
                    f"OriginOpType(\"{atc_optype(model, other)}\")")
    return said


def foreign_refusal(label: str, model, found) -> str:
    """Why ``model`` (shown as ``label``) cannot be converted: ``found`` (``foreign_nodes``,
    not empty), ATC's words and what to do by their domains."""
    shown = found_list([f"{name!r} ({atc_optype(model, node)}{' ' + where if where else ''})"
                        for node, name, where in found], 8)
    calls = sum(calls_local_function(model, node) for node, _, _ in found)
    domains = list(dict.fromkeys(node.domain for node, _, _ in found
                                 if not calls_local_function(model, node)))
    kinds = ([f"of {'domains' if len(domains) > 1 else 'domain'} {', '.join(domains)}, not "
              f"ONNX's own (ai.onnx)"] if domains else []) + (
        [f"calling the model's own function{'s' if calls > 1 else ''} (model.functions)"]
        if calls else [])
    many = len(found) != 1
    node, name, _ = found[0]
    return (f"model {label!r} has {len(found)} operator{'s' if many else ''} "
            f"{', or '.join(kinds)}: {shown}. CANN's ONNX parser has no parser for "
            f"{'them' if many else 'it'} (its plugins register ai.onnx types and, of other "
            f"domains, only torch_npu's npu ops and com.microsoft MultiHeadAttention at opsets "
            f"11 to 18; ATC stops with "
            f"{UNPARSED_CODE} \"No parser is registered for Op [{name}, optype "
            f"[{atc_optype(model, node)}]].\"), so the model cannot be converted, and the "
            f"emulator does not compute {'them' if many else 'it'} as a device would; "
            + "; ".join(_domain_advice(model, found)))

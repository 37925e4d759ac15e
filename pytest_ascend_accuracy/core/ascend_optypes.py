"""ONNX operator types -> the Ascend IR op types ATC gives them: the one table of this project.

ATC's ``--keep_dtype`` file takes original-model op names or ``OpType::<Ascend IR type>``
entries (docs/formats.md §5, [H: HD atlasatcparam_16_0074]); an ``OpType::`` entry spelled with the
ONNX type matches nothing on a device. The type it matches is the parser's (``PARSER_TYPES``
below: ATC applies keep_dtype to the graph as parsed), so ``keep_dtype(["OpType::
BatchNormalization"])`` is rewritten to ``OpType::BatchNorm`` when the mode is built, the
keep_dtype file holds that, and the emulator keeps an op in float32 by the same rule, so a file
that works here works there. ``ASCEND_TYPES`` (the types of the finished graph, as dump file
names show them) types the emulator's ops and dumps.

Source: the ONNX parser plugins of CANN's built-in operator package
(``ops/built-in/framework/onnx_plugin/*_plugin.cc``: ``REGISTER_CUSTOM_OP("<Ascend type>")
.FrameworkType(ONNX).OriginOpType("ai.onnx::<opset>::<ONNX type>")``, e.g. ``gemm_plugin.cc``
registers ``MatMulV2`` for ``Gemm``; ``similar_opp_plugins.cc`` registers the one-to-one
types of opsets 8-15, e.g. ``Where`` -> ``SelectV2``, ``Not`` -> ``LogicalNot``, ``Div`` ->
``RealDiv``) and CANN's "支持ONNX算子清单" (supported ONNX operator list,
https://www.hiascend.com/document/detail/zh/canncommercial/80RC22/apiref/operatorlist/operatorlist_0004.html).
The types here are those of the graph ATC builds (the names dump file names and om json
``type`` fields show): parser types rewritten by graph passes appear with their final name, as
the real ATC 6.0 om json (../shared/realdata, ``tdnn``) has them: ``BatchNorm`` ->
``BNInferenceD``, ``ReduceMin``/``ReduceMax``/``ReduceMean`` -> ``...D``, ONNX ``Transpose``
stays ``Transpose`` (ATC 5.1 wrote ``TransposeD``), a 3-D ``MatMul`` is ``BatchMatMulV2`` and
a 2-D one ``MatMulV2``. ``FINISHED_ALIASES`` holds the other finished names real files show
for a type. ONNX types not listed keep their name (``Add``, ``Mul``, ``Relu``, ...).

Recurrent ops: the parser registers ONNX ``LSTM`` as ``CommonLSTM`` and ``GRU`` as ``CommonGRU``
(canndev's ``onnx_plugin/lstm_plugin.cc`` and ``gru_plugin.cc``, opsets 8-13, as the mirror
``dengguojie/vue-element-admin`` @fc04ed3d / @f9f56511 holds them; the 2025 ``hicann/ops-nn``
``common/src/framework/lstm_onnx_plugin.cpp`` / ``gru_onnx_plugin.cpp``, opsets 8-18, as its
fork ``jbgztxdy/ops-nn`` @732de1d5 holds them), so ``keep_dtype(["OpType::LSTM"])`` is written
``OpType::CommonLSTM``; the fusion passes then build ``DynamicRNN`` (the mirror's
``fusion_pass/graph_fusion/ai_core/common_lstm_fusion_pass.cc`` @5536fcf7: one, or a forward
and a reverse one for a bidirectional LSTM) and ``DynamicGRUV2`` (``gru_fusion_pass.cc``
@10f1aa8f: "CommonGRU --> DynamicGRUV2"), the finished types. No ONNX plugin for the plain
``RNN`` was found in either: it keeps its name here.

Detector tails: ONNX ``NonMaxSuppression`` is ``NonMaxSuppressionV6`` as parsed (canndev's
``onnx_plugin/non_max_suppression_plugin.cc``: registered as that type for opsets 10-13 at
mirror @f9f56511, a ``PartitionedCall`` expanded to ``NonMaxSuppressionV6`` + ``Cast`` for
opsets 10-15 at @031e9875; ``hicann/ops-cv`` ``objdetect/non_max_suppression_v6/framework/
non_max_suppression_onnx_plugin.cpp`` @e2eb2135 the same for 10-18; canndev's
``NonMaxSuppressionV6Fusion`` pass then sets ``NonMaxSuppressionV7``, a finished name:
``FINISHED_ALIASES``). ``ArgMax`` is ``ArgMaxV2`` (``argmax_plugin.cc`` @031e9875, opsets 8-15,
and a 2025 CANN ops-math ArgMax plugin, 8-18, whose path the index did not give: a
``PartitionedCall`` expanded to ``ArgMaxV2``, plus ``ExpandDims`` when ``keepdims=1``; the parser
expands it before keep_dtype is applied, see ``PARSER_TYPES``; the older @fc04ed3d expanded it
to ``ArgMaxD``). ``GatherND`` is ``GatherNd`` (``gather_nd_plugin.cc`` @22b3623d, opsets
8-15). ``ArgMin`` (``argmin_plugin.cc`` @031e9875; ``hicann/ops-math``
``math/arg_min/framework/argmin_onnx_plugin.cpp`` @514e2e82; @fc04ed3d: ``ArgMinD``),
``NonZero`` (``nonzero_plugin.cc``) and ``TopK`` (its plugin registers ``TopK`` for opsets
10-18) keep their names. The versions that expanded to ``ArgMaxD``/``ArgMinD`` match neither
spelling: naming the op keeps it in every version.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional

#: ONNX op type -> Ascend IR op type (only the types that change their name)
ASCEND_TYPES: Dict[str, str] = {
    "Conv": "Conv2D",
    "ConvTranspose": "Conv2DTranspose",
    "MatMul": "MatMulV2",
    "Gemm": "MatMulV2",
    "BatchNormalization": "BNInferenceD",
    "Softmax": "SoftmaxV2",
    "LogSoftmax": "LogSoftmaxV2",
    "Div": "RealDiv",
    "ReduceMean": "ReduceMeanD",
    "ReduceSum": "ReduceSumD",
    "ReduceMax": "ReduceMaxD",
    "ReduceMin": "ReduceMinD",
    "Concat": "ConcatD",
    "Split": "SplitD",
    "Slice": "StridedSliceD",
    "Gather": "GatherV2",
    "Clip": "ClipByValue",
    "MaxPool": "MaxPoolV3",
    "AveragePool": "AvgPoolV2",
    "Where": "SelectV2",
    "Not": "LogicalNot",
    "And": "LogicalAnd",
    "Or": "LogicalOr",
    "LessOrEqual": "LessEqual",
    "GreaterOrEqual": "GreaterEqual",
    "IsNaN": "IsNan",
    "ScatterND": "TensorScatterUpdate",
    "Det": "MatrixDeterminant",
    "Pad": "PadV3",
    "Expand": "ExpandD",
    "Tile": "TileD",
    "LSTM": "DynamicRNN",
    "GRU": "DynamicGRUV2",
    "NonMaxSuppression": "NonMaxSuppressionV6",
    "ArgMax": "ArgMaxV2",
    "GatherND": "GatherNd",
}

#: ONNX op type -> other finished-graph names real files or other CANN versions give it
#: (ATC 5.1's ``TransposeD``; ``BNInference``; the 3-D ``MatMul``'s ``BatchMatMulV2``):
#: names a user may copy from a dump or om json into ``OpType::`` entries
FINISHED_ALIASES: Dict[str, tuple] = {
    "BatchNormalization": ("BNInference",), "Transpose": ("TransposeD",),
    "MatMul": ("BatchMatMulV2",),
    # older CANN's passes (const-to-attr; canndev's ResizeFusionPass): MODE_TYPES
    "Resize": ("ResizeNearestNeighborV2D", "ResizeBilinearV2D"),
    # canndev's NonMaxSuppressionV6Fusion pass: fuse_desc->SetType("NonMaxSuppressionV7")
    "NonMaxSuppression": ("NonMaxSuppressionV7",),
}

OPTYPE_PREFIX = "OpType::"

#: ONNX op type -> the type ATC's ONNX parser gives it: what ``--keep_dtype`` ``OpType::``
#: entries match. ATC sets keep_dtype on the graph right after parsing (``main_impl.cc``:
#: ``ParseGraph``, then ``SetAttrOptions`` -> ``KeepDtypeFunc``, which compares each node's
#: type), after the parser has expanded one-to-many plugins (``ExpandOneToManyGraph``:
#: ``PartitionedCall`` -> its inner op) and before any graph pass renames a type; so
#: ``BatchNorm`` (not ``BNInference``, the pass's later name), ``BatchMatMulV2`` (not
#: ``MatMulV2``), ``Transpose`` (not ``TransposeD``). Source: the ONNX plugins of CANN's
#: op packages (``REGISTER_CUSTOM_OP("<type>")...OriginOpType("ai.onnx::<opset>::<ONNX>")``,
#: the newest registrations found, checked 2026-12-05; older CANN used D-ops such as
#: ``TransposeD``, ``ReduceSumD``, ``StridedSliceD`` here). Types not listed keep their name.
PARSER_TYPES: Dict[str, str] = {
    "Conv": "Conv2D", "ConvTranspose": "Conv2DTranspose", "MatMul": "BatchMatMulV2",
    "Gemm": "MatMulV2", "BatchNormalization": "BatchNorm", "Softmax": "SoftmaxV2",
    "LogSoftmax": "LogSoftmaxV2", "Div": "RealDiv", "Concat": "ConcatD",
    "Slice": "StridedSliceV2", "Gather": "GatherV2", "Clip": "ClipByValue",
    "MaxPool": "MaxPoolV3", "AveragePool": "AvgPoolV2", "Where": "SelectV2", "Not": "LogicalNot",
    "And": "LogicalAnd", "Or": "LogicalOr", "LessOrEqual": "LessEqual",
    "GreaterOrEqual": "GreaterEqual", "IsNaN": "IsNan", "ScatterND": "ScatterNdUpdate",
    "Det": "MatrixDeterminant", "Pad": "PadV3", "Flatten": "FlattenV2", "ReduceL2": "LpNormV2",
    "LayerNormalization": "LayerNorm", "LSTM": "CommonLSTM", "GRU": "CommonGRU",
    "NonMaxSuppression": "NonMaxSuppressionV6", "ArgMax": "ArgMaxV2", "GatherND": "GatherNd",
    # audit 36 (openWakeWord's 19 Max ops were written OpType::Max, which no CANN matches) and
    # the sweep it led to, the newest registrations found (``OLDER_PARSER_TYPES``: older ones):
    # 2025 ``hicann/ops-math`` ``math/maximum/framework/max_onnx_plugin.cpp`` @2e864ae5 and
    # ``min_onnx_plugin.cpp``, opsets 8-18: a ``PartitionedCall`` the parser expands to a chain
    # of ``Maximum``/``Minimum`` before keep_dtype applies; ``reduce_*_onnx_plugin.cpp``
    # @6556868d: ReduceL1 ``LpNormV2``, ReduceSumSquare ``SquareSumV1``; ``hicann/ops-cv``
    # ``upsample_onnx_plugin.cpp`` @8bdcc1a5: ``Resize``; ``jbgztxdy/ops-nn`` @732de1d5 (a fork
    # of hicann/ops-nn): InstanceNormalization ``InstanceNorm``, GlobalMaxPool ``ReduceMax``;
    # canndev's ``cumsum_plugin.cc`` and ``constantofshape_plugin.cc`` (mirror
    # ``dengguojie/vue-element-admin`` @031e9875): ``Cumsum``, ``Fill``; ops-math
    # ``similar_opp_onnx_plugin.cpp`` @4d171b27: BitwiseNot ``Invert``; and, by code search
    # (their paths not given): Sum ``AccumulateNV2``, Xor ``BitwiseXor``, RoiAlign
    # ``ROIAlign``, GridSample ``GridSampler2D``, the deprecated Scatter ``ScatterElements``
    "Max": "Maximum", "Min": "Minimum", "Sum": "AccumulateNV2", "CumSum": "Cumsum",
    "Upsample": "Resize", "InstanceNormalization": "InstanceNorm", "GlobalMaxPool": "ReduceMax",
    "ReduceL1": "LpNormV2", "ReduceSumSquare": "SquareSumV1", "ConstantOfShape": "Fill",
    "BitwiseNot": "Invert", "Xor": "BitwiseXor", "RoiAlign": "ROIAlign",
    "GridSample": "GridSampler2D", "Scatter": "ScatterElements",
}

#: ONNX type -> parser types older CANN versions gave it (canndev's ``max_plugin.cc``, mirror
#: ``dengguojie/vue-element-admin`` @09535940: ``REGISTER_CUSTOM_OP("MaxN")`` for
#: ai.onnx::9..13::Max): an ``OpType::`` entry of one is refused with the name this table
#: writes, and naming the op keeps it in every version
OLDER_PARSER_TYPES: Dict[str, tuple] = {
    "Max": ("MaxN",), "Clip": ("ClipByValue",),
    # every canndev version and the 2025 ops-math ``similar_opp_onnx_plugin.cpp`` @4d171b27
    # (ai.onnx::8/10/11::ScatterND); ``ScatterNdUpdate`` above is a 2026 plugin's (review RM)
    "ScatterND": ("TensorScatterUpdate",)}

#: ONNX types the parser expands into ops of several types before keep_dtype applies, so no
#: ``OpType::`` entry keeps the whole op (2025 ``hicann/ops-math`` ``mean_onnx_plugin.cpp``
#: @0804b652: a ``PartitionedCall`` of ``AccumulateNV2`` and ``Muls``); naming the op keeps
#: every node it expands into (GE's ``KeepDtypeFunc`` matches the origin op names
#: ``ExpandOneToManyGraph`` sets on them)
EXPANDED_TYPES: Dict[str, tuple] = {"Mean": ("AccumulateNV2", "Muls")}

#: ONNX types whose Ascend type depends on an attribute: ONNX type -> (attribute, its ONNX
#: default, {value: (parser type, finished type)}). ``Resize``: the newest CANN ONNX plugin
#: found (``hicann/ops-cv`` ``common/src/framework/resize_onnx_plugin.cpp`` @2275f5b6, 2025,
#: opsets 11-18; opset 10 alike) builds a ``mode="nearest"`` Resize as
#: ``ResizeNearestNeighborV2`` and a ``linear``/``cubic`` one as ``Resize``; older plugins differ
#: (canndev's ``ops/built-in/framework/onnx_plugin/resize_plugin.cc``, opsets 10-13, as the
#: mirror ``dengguojie/vue-element-admin`` @f9f56511 holds it:
#: ``ResizeNearestNeighborV2`` and ``ResizeBilinearV2``; another canndev version: ``Resize``
#: for both, which its ``ResizeFusionPass`` turns into ``ResizeNearestNeighborV2D`` /
#: ``ResizeBilinearV2D``: ``FINISHED_ALIASES``). The ``mode`` attribute's ONNX default is nearest
MODE_TYPES: Dict[str, tuple] = {
    "Resize": ("mode", "nearest", {
        "nearest": ("ResizeNearestNeighborV2", "ResizeNearestNeighborV2"),
        "linear": ("Resize", "Resize"), "cubic": ("Resize", "Resize")}),
}

#: the types of an ``If`` the device runs as one operator (GraphEngine's): it dumps its
#: outputs only, its branch's ops run inside it
IF_TYPES = frozenset({"If", "StatelessIf"})

#: Ascend types of the ops the Cube unit runs (and of operators fused onto them): under
#: ``allow_fp32_to_fp16`` (high precision) they still take float16 inputs, so high precision
#: does not keep their values within the float16 range; keep_dtype does
CUBE_TYPES = frozenset({"Conv2D", "Conv2DTranspose", "Conv3D", "DepthwiseConv2D",
                        "Conv2DBackpropInput", "MatMul", "MatMulV2", "BatchMatMul",
                        "BatchMatMulV2", "FullyConnection"})


def ascend_type(onnx_type: str) -> str:
    """The Ascend IR type ATC gives an ONNX op of this type."""
    return ASCEND_TYPES.get(onnx_type, onnx_type)


def is_cube(op_type: str) -> bool:
    """Whether an op of this type (ONNX, as a golden or an emulator names it, or Ascend, as a
    device dump does) runs on the Cube unit (``CUBE_TYPES``)."""
    return ascend_type(op_type or "") in CUBE_TYPES


def parser_type(onnx_type: str) -> str:
    """The type ATC's ONNX parser gives an op of this ONNX type (``PARSER_TYPES``)."""
    return PARSER_TYPES.get(onnx_type, onnx_type)


def to_ascend_entry(entry: str) -> str:
    """A keep_dtype entry as ATC reads it: ``OpType::<ONNX type>`` becomes ``OpType::<parser
    type>`` (``OpType::BatchNormalization`` -> ``OpType::BatchNorm``); op names and entries
    already in ATC's spelling are unchanged."""
    if not entry.startswith(OPTYPE_PREFIX):
        return entry
    return OPTYPE_PREFIX + parser_type(entry[len(OPTYPE_PREFIX):])


def finished_types(onnx_type: str) -> tuple:
    """Every finished-graph name of this ONNX type: ``ascend_type`` first, then the aliases."""
    return tuple(dict.fromkeys((ascend_type(onnx_type),)
                               + FINISHED_ALIASES.get(onnx_type, ())))


def ascend_types_of(onnx_types: Iterable[str]) -> List[str]:
    """The Ascend types of these ONNX types, in first-seen order, without repeats."""
    return list(dict.fromkeys(ascend_type(t) for t in onnx_types))


def parser_types_of(onnx_types: Iterable[str]) -> List[str]:
    """The parser types of these ONNX types (what ``OpType::`` entries name), in first-seen
    order, without repeats."""
    return list(dict.fromkeys(parser_type(t) for t in onnx_types))


def _mode_types(node) -> Optional[tuple]:
    """``(parser type, finished type)`` of an ONNX node (``op_type`` and ``attribute`` read
    as ``onnx.NodeProto`` has them) whose type depends on an attribute (``MODE_TYPES``)."""
    spec = MODE_TYPES.get(node.op_type)
    if spec is None:
        return None
    attr, default, types = spec
    value = next((a.s.decode("utf-8", "replace") if isinstance(a.s, bytes) else str(a.s)
                  for a in node.attribute if a.name == attr), default)
    return types.get(value)


def _input_type(node) -> Optional[str]:
    """The parser type of a node whose type depends on which inputs it has: the 2025
    ``hicann/ops-math`` ``common/src/framework/clip_onnx_plugin.cpp`` @6556868d (opsets 11-18)
    builds a ``Clip`` with min and max as ``ClipByValue``, with max only as ``Minimum``, with
    min only as ``Maximum`` (a ``torch.clamp(min=...)`` export); opsets 8-10 (attributes)
    ``ClipByValue``. ``split_onnx_plugin.cpp`` @2fba6e60: a ``Split`` given sizes (input or
    attribute) or ``num_outputs`` is ``SplitV``; given neither it keeps its name, so
    ``OpType::Split`` is written as it is and keeps those (review RM: written ``SplitV``, no
    entry kept an equal Split). None for other nodes."""
    inputs = list(node.input)
    if node.op_type == "Clip" and not any(a.name in ("min", "max") for a in node.attribute):
        low, high = len(inputs) > 1 and bool(inputs[1]), len(inputs) > 2 and bool(inputs[2])
        return "Minimum" if high and not low else "Maximum" if low and not high else None
    if node.op_type == "Split":
        sized = (len(inputs) > 1 and bool(inputs[1])) or any(
            a.name in ("split", "num_outputs") for a in node.attribute)
        return "SplitV" if sized else None
    return None


def node_parser_type(node) -> str:
    """The type ATC's ONNX parser gives this ONNX node: ``parser_type`` of its type, or, for a
    type that depends on an attribute (``MODE_TYPES``: a nearest ``Resize`` is
    ``ResizeNearestNeighborV2``) or on its inputs (``_input_type``: a ``Clip`` with min only
    is ``Maximum``), the type for them."""
    found = _mode_types(node)
    return found[0] if found else _input_type(node) or parser_type(node.op_type)


def node_ascend_type(node) -> str:
    """The finished-graph type of this ONNX node: ``ascend_type`` of its type, or the one for
    its attribute's value (``MODE_TYPES``)."""
    found = _mode_types(node)
    return found[1] if found else ascend_type(node.op_type)


def mode_parser_names(parser: str) -> List[str]:
    """``ONNX Resize (mode nearest)``-style descriptions of the nodes ``MODE_TYPES`` gives the
    parser type ``parser``."""
    return [f"{onnx_type} ({attr} {value})" for onnx_type, (attr, _, types) in MODE_TYPES.items()
            for value, (p, _f) in types.items() if p == parser]

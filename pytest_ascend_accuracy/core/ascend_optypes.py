"""ONNX operator types -> the Ascend IR op types ATC gives them: the one table of this project.

ATC's ``--keep_dtype`` file takes original-model op names or ``OpType::<Ascend IR type>``
entries (docs/formats.md §5, [H: HD atlasatcparam_16_0074]); an ``OpType::`` entry spelled with the
ONNX type matches nothing on a device. ``keep_dtype(["OpType::BatchNormalization"])`` is
therefore rewritten to ``OpType::BNInference`` when the mode is built, the keep_dtype file holds
the Ascend type, and the emulator reads the same file (it types its ops with this table), so a
file that works here works there.

Source: the ONNX parser plugins of CANN's built-in operator package
(``ops/built-in/framework/onnx_plugin/*_plugin.cc``: ``REGISTER_CUSTOM_OP("<Ascend type>")
.FrameworkType(ONNX).OriginOpType("ai.onnx::<opset>::<ONNX type>")``, e.g. ``gemm_plugin.cc``
registers ``MatMulV2`` for ``Gemm``; ``similar_opp_plugins.cc`` registers the one-to-one
types of opsets 8-15, e.g. ``Where`` -> ``SelectV2``, ``Not`` -> ``LogicalNot``, ``Div`` ->
``RealDiv``) and CANN's "支持ONNX算子清单" (supported ONNX operator list,
https://www.hiascend.com/document/detail/zh/canncommercial/80RC22/apiref/operatorlist/operatorlist_0004.html).
The types here are those of the graph ATC builds (the names ``OpType::`` entries and dump file
names show): parser types rewritten by graph passes appear with their final name
(``BatchNorm`` -> ``BNInference`` for inference, ``BatchMatMul`` -> ``MatMulV2`` for 2-D
operands). ONNX types not listed keep their name (``Add``, ``Mul``, ``Relu``, ``Sigmoid``, ...).
"""
from __future__ import annotations

from typing import Dict, Iterable, List

#: ONNX op type -> Ascend IR op type (only the types that change their name)
ASCEND_TYPES: Dict[str, str] = {
    "Conv": "Conv2D",
    "ConvTranspose": "Conv2DTranspose",
    "MatMul": "MatMulV2",
    "Gemm": "MatMulV2",
    "BatchNormalization": "BNInference",
    "Softmax": "SoftmaxV2",
    "LogSoftmax": "LogSoftmaxV2",
    "Div": "RealDiv",
    "ReduceMean": "ReduceMeanD",
    "ReduceSum": "ReduceSumD",
    "ReduceMax": "ReduceMaxD",
    "Transpose": "TransposeD",
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
}

OPTYPE_PREFIX = "OpType::"

#: Ascend types of the ops the Cube unit runs (and of operators fused onto them): under
#: ``allow_fp32_to_fp16`` (high precision) they still take float16 inputs, so high precision
#: does not keep their values within the float16 range; keep_dtype does
CUBE_TYPES = frozenset({"Conv2D", "Conv2DTranspose", "Conv3D", "DepthwiseConv2D",
                        "Conv2DBackpropInput", "MatMul", "MatMulV2", "BatchMatMul",
                        "BatchMatMulV2", "FullyConnection"})


def ascend_type(onnx_type: str) -> str:
    """The Ascend IR type ATC gives an ONNX op of this type."""
    return ASCEND_TYPES.get(onnx_type, onnx_type)


def to_ascend_entry(entry: str) -> str:
    """A keep_dtype entry as ATC reads it: ``OpType::<ONNX type>`` becomes ``OpType::<Ascend
    type>``; op names and entries already in Ascend spelling are unchanged."""
    if not entry.startswith(OPTYPE_PREFIX):
        return entry
    return OPTYPE_PREFIX + ascend_type(entry[len(OPTYPE_PREFIX):])


def ascend_types_of(onnx_types: Iterable[str]) -> List[str]:
    """The Ascend types of these ONNX types, in first-seen order, without repeats."""
    return list(dict.fromkeys(ascend_type(t) for t in onnx_types))

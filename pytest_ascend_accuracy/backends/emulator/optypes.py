"""ONNX operator types -> the Ascend IR types ATC gives them (dump file names, om json).

An approximation for readable dumps: the common ONNX ops map to the AscendIR types the ONNX
parser produces (``Conv`` -> ``Conv2D``, ``MatMul`` -> ``MatMulV2``, ...); anything else keeps
its ONNX type. ``keep_dtype`` entries ``OpType::X`` match either name.
"""
from __future__ import annotations

ASCEND_TYPES = {
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
    "GlobalAveragePool": "GlobalAveragePool",
    "Where": "Select",
    "Pad": "PadV3",
    "Resize": "Resize",
    "Expand": "ExpandD",
    "Tile": "TileD",
}


def ascend_type(onnx_type: str) -> str:
    return ASCEND_TYPES.get(onnx_type, onnx_type)

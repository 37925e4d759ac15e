"""Which dumped tensors the emulator stores in an NPU device layout, as a real device dumps them.

ATC gives every AI Core operator the formats its kernel takes, and the dump holds each tensor
in that format (``shape`` = device shape, ``original_shape`` = the framework's). With
``EmulatorBackend(device_formats=True)`` (the default) the emulator does the same, so that
the read path converts device layouts back on every run, exactly as it must for real dumps:

* **conv-like operators** (ONNX Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool,
  GlobalMaxPool, BatchNormalization; fused groups anchored on them, e.g. Conv+BN+Relu):
  4-D activations in and out are ``NC1HWC0`` (5HD, C0 = 16, 32 for int8); the convolution
  filter is ``FRACTAL_Z``; bias, scale and statistics (1-D) stay ``ND``.
* **matrix multiplies** (ONNX MatMul, Gemm and their fused groups, Ascend MatMulV2 /
  BatchMatMulV2): float16/bfloat16 operands and outputs of rank >= 2 are ``FRACTAL_NZ``
  (16 x 16 fractals); a 1-D bias stays ``ND``.
* everything else, and any tensor whose rank does not fit (3-D conv1d activations, fp32
  matmul operands) is dumped ``ND`` with its framework shape, as before.

Sources: CANN ``aclFormat`` (hiascend.com, canncommercial 8.0.0, appdevgapi
aclpythondevg_01_0924): NC1HWC0 is the 5-D activation format with C0 = the cube unit size (16)
and C padded to C1*C0, FRACTAL_Z "the format of the convolution weight", FRACTAL_NZ a format
"for internal use". Ascend C ``LoadData`` (CANN 8.0 ascendcopapi atlasascendc_api_07_0238)
gives the cube fractals: 16 x 16 for half/bfloat16, 16 x 32 for int8 and 16 x 8 for float32 --
so float32 matmul operands are not written in our C0 = 16 NZ layout.
The real ``atc --mode=1`` JSON in msit's test resources (ATC 6.0.RC1, tdnn on Ascend310)
shows the same per-op choice: Conv2D input and output ``NC1HWC0`` (e.g. ``[1, 2, 1, 1804, 16]``
for origin ``[1, 23, 1, 1804]``), its filter ``FRACTAL_Z``, its bias ``ND``; BatchMatMulV2
(fused with LeakyRelu) both operands and its output ``FRACTAL_NZ``, bias ``ND``; element-wise,
reduce and concat ops ``ND``/``NCHW``.

The emulator does not insert the TransData operators a device runs between layouts: the
consumer of a 5HD output reads it in its own format, which is what its dump shows either way.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

CONV_LIKE = frozenset({"Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool",
                       "GlobalMaxPool", "BatchNormalization"})
MATMUL_LIKE = frozenset({"MatMul", "Gemm"})
FILTER_OF = frozenset({"Conv", "ConvTranspose"})  # ONNX ops whose input 1 is a 4-D filter
_FLOATS = ("float16", "bfloat16", "float32")
_NZ_DTYPES = ("float16", "bfloat16")


def tensor_format(anchor_type: str, *, shape: Optional[Sequence[int]], dtype: str,
                  is_filter: bool = False) -> str:
    """The device format a tensor of an operator anchored on ONNX ``anchor_type`` is dumped in
    (see module doc); ``"ND"`` when its shape or dtype is unknown or does not fit."""
    if shape is None or dtype not in _FLOATS:
        return "ND"
    rank = len(shape)
    if anchor_type in CONV_LIKE and rank == 4:
        return "FRACTAL_Z" if is_filter else "NC1HWC0"
    if anchor_type in MATMUL_LIKE and rank >= 2 and dtype in _NZ_DTYPES:
        return "FRACTAL_NZ"
    return "ND"


def om_desc(slot, onnx_types: Sequence[str] = ()):
    """The om json output desc ATC writes for a dumped tensor (``OmTensorDesc``): device
    ``dtype``/``layout``/``shape`` and the framework's ``origin_shape``/``origin_format``;
    ``onnx_types`` are the ONNX types of the op's members (conv-like 4-D tensors are NCHW)."""
    from ...dump import device_formats as df
    from ...dump import dtypes as dt
    from ...dump.om_json import OmTensorDesc

    dtype = slot.dtype or slot.type
    shape = slot.shape
    conv = any(t in CONV_LIKE for t in onnx_types) and shape is not None and len(shape) == 4
    origin = "NCHW" if conv or slot.format in ("NC1HWC0", "FRACTAL_Z") else "ND"
    layout = slot.format or origin
    try:
        name = dt.dtype_name(dt.enum_for(dtype)) if dtype else ""
    except (TypeError, ValueError, KeyError):
        name = ""
    device = None
    if shape is not None:
        layout_dtype = "float16" if dtype in ("", "bfloat16") else dtype
        device = df.device_shape(slot.format or "ND", shape, layout_dtype)
    return OmTensorDesc(dtype=name, layout=layout, shape=device, origin_shape=shape,
                        origin_format=origin)


def fits(fmt: str, array: np.ndarray) -> bool:
    """Whether ``array`` can be stored in ``fmt`` (a run-time shape that differs from the one
    planned at conversion falls back to ND rather than failing the dump)."""
    if fmt == "NC1HWC0" or fmt == "FRACTAL_Z":
        return array.ndim == 4
    if fmt == "FRACTAL_NZ":
        return array.ndim >= 2
    return True


__all__ = ["tensor_format", "om_desc", "fits", "CONV_LIKE", "MATMUL_LIKE"]

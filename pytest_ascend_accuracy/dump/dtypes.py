"""Dump dtype and format enums (reference §2.2, §2.3) <-> numpy.

The numbering is the dump protobuf's ``OutputDataType`` (FLOAT=1, FLOAT16=2, ...), **not**
``ge::DataType``. The numpy map follows msaccucmp: bf16 is stored as 2-byte values and decoded
to float32 by a 16-bit shift; UNDEFINED(0) reads as int8 and RESOURCE(23) as int64, as
msaccucmp does, so real dumps load unchanged. Types without a numpy equivalent (strings, int4,
fp8, ...) raise :class:`UnsupportedDtype` naming the enum.
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np

#: OutputDataType enum value -> name (dump proto numbering).
DTYPE_NAMES: Dict[int, str] = dict(enumerate((
    "DT_UNDEFINED", "DT_FLOAT", "DT_FLOAT16", "DT_INT8", "DT_UINT8", "DT_INT16", "DT_UINT16",
    "DT_INT32", "DT_INT64", "DT_UINT32", "DT_UINT64", "DT_BOOL", "DT_DOUBLE", "DT_STRING",
    "DT_DUAL_SUB_INT8", "DT_DUAL_SUB_UINT8", "DT_COMPLEX64", "DT_COMPLEX128", "DT_QINT8",
    "DT_QINT16", "DT_QINT32", "DT_QUINT8", "DT_QUINT16", "DT_RESOURCE", "DT_STRING_REF",
    "DT_DUAL", "DT_VARIANT", "DT_BF16", "DT_INT4", "DT_UINT1", "DT_INT2", "DT_UINT2",
    "DT_COMPLEX32", "DT_HIFLOAT8", "DT_FLOAT8_E5M2", "DT_FLOAT8_E4M3FN", "DT_FLOAT8_E8M0",
    "DT_FLOAT6_E3M2", "DT_FLOAT6_E2M3", "DT_FLOAT4_E2M1", "DT_FLOAT4_E1M2")))

BF16 = 27

#: enum -> numpy dtype of the stored bytes (bf16: stored as uint16).
_STORAGE: Dict[int, np.dtype] = {
    0: np.dtype("int8"), 1: np.dtype("<f4"), 2: np.dtype("<f2"), 3: np.dtype("int8"),
    4: np.dtype("uint8"), 5: np.dtype("<i2"), 6: np.dtype("<u2"), 7: np.dtype("<i4"),
    8: np.dtype("<i8"), 9: np.dtype("<u4"), 10: np.dtype("<u8"), 11: np.dtype("bool"),
    12: np.dtype("<f8"), 16: np.dtype("<c8"), 17: np.dtype("<c16"), 23: np.dtype("<i8"),
    BF16: np.dtype("<u2"),
}

#: numpy dtype name -> enum, for the writer.
_FROM_NUMPY: Dict[str, int] = {
    "float32": 1, "float16": 2, "int8": 3, "uint8": 4, "int16": 5, "uint16": 6, "int32": 7,
    "int64": 8, "uint32": 9, "uint64": 10, "bool": 11, "float64": 12, "complex64": 16,
    "complex128": 17, "bfloat16": BF16,
}

#: OutputFormat enum value -> name (reference §2.3).
FORMAT_NAMES: Dict[int, str] = dict(enumerate((
    "NCHW", "NHWC", "ND", "NC1HWC0", "FRACTAL_Z", "NC1C0HWPAD", "NHWC1C0", "FSR_NCHW",
    "FRACTAL_DECONV", "C1HWNC0", "FRACTAL_DECONV_TRANSPOSE", "FRACTAL_DECONV_SP_STRIDE_TRANS",
    "NC1HWC0_C04", "FRACTAL_Z_C04", "CHWN", "FRACTAL_DECONV_SP_STRIDE8_TRANS", "HWCN",
    "NC1KHKWHWC0", "BN_WEIGHT", "FILTER_HWCK", "HASHTABLE_LOOKUP_LOOKUPS",
    "HASHTABLE_LOOKUP_KEYS", "HASHTABLE_LOOKUP_VALUE", "HASHTABLE_LOOKUP_OUTPUT",
    "HASHTABLE_LOOKUP_HITS", "C1HWNCoC0", "MD", "NDHWC", "FRACTAL_ZZ", "FRACTAL_NZ", "NCDHW",
    "DHWCN", "NDC1HWC0", "FRACTAL_Z_3D", "CN", "NC", "DHWNC", "FRACTAL_Z_3D_TRANSPOSE",
    "FRACTAL_ZN_LSTM", "FRACTAL_Z_G", "RESERVED", "ALL", "NULL", "ND_RNN_BIAS", "FRACTAL_ZN_RNN",
    "YUV", "YUV_A", "NCL", "FRACTAL_Z_WINO", "C1HWC0")))
FORMAT_NAMES[255] = "MAX"
_FORMAT_IDS: Dict[str, int] = {name: num for num, name in FORMAT_NAMES.items()}


class UnsupportedDtype(ValueError):
    """A dtype enum (or numpy dtype) this package cannot turn into numpy values."""


def dtype_name(enum: int) -> str:
    """``DT_FLOAT16`` for 2; ``unknown(99)`` for numbers outside the enum."""
    return DTYPE_NAMES.get(enum, f"unknown({enum})")


def storage_dtype(enum: int) -> np.dtype:
    """The numpy dtype of the bytes stored for ``enum`` (bf16 -> uint16)."""
    try:
        return _STORAGE[enum]
    except KeyError:
        if enum in DTYPE_NAMES:
            raise UnsupportedDtype(
                f"dtype enum {enum} ({DTYPE_NAMES[enum]}) has no numpy equivalent") from None
        raise UnsupportedDtype(f"unknown dtype enum {enum} (not in the dump OutputDataType "
                               f"enum 0..{max(DTYPE_NAMES)})") from None


def logical_dtype_name(enum: int) -> str:
    """The numpy dtype name a reader reports for ``enum`` (``bfloat16`` for BF16)."""
    return "bfloat16" if enum == BF16 else storage_dtype(enum).name


def loaded_dtype(enum: int) -> np.dtype:
    """The numpy dtype ``TensorRef.load()`` returns (bf16 -> float32)."""
    return np.dtype("float32") if enum == BF16 else storage_dtype(enum).newbyteorder("=")


def decode_values(raw: np.ndarray, enum: int) -> np.ndarray:
    """Storage values -> loaded values: bf16 bit patterns become float32, others unchanged."""
    if enum == BF16:
        return (raw.astype(np.uint32) << 16).view(np.float32)
    return raw


def enum_for(dtype) -> int:
    """The dump enum for a numpy dtype (or a dtype name such as ``"bfloat16"``)."""
    name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    try:
        return _FROM_NUMPY[name]
    except KeyError:
        raise UnsupportedDtype(f"numpy dtype {name!r} cannot be stored in an Ascend dump") from None


def float32_to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bit patterns (uint16), round to nearest even, NaN kept as quiet NaN."""
    f = np.asarray(values, dtype=np.float32, order="C")
    u = f.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    if nan.any():
        rounded = np.where(nan, (u >> 16).astype(np.uint16) | np.uint16(0x0040), rounded)
    return rounded


def to_storage(array: np.ndarray, enum: int) -> np.ndarray:
    """Values of ``array`` in the byte form stored for ``enum`` (little-endian, contiguous)."""
    if enum == BF16:
        arr = np.asarray(array)
        if arr.dtype.name == "bfloat16":  # ml_dtypes array: already bf16 bits
            return np.asarray(arr, order="C").view(np.uint16)
        return float32_to_bf16_bits(arr)
    return np.asarray(array, dtype=storage_dtype(enum), order="C")


def format_name(enum: int) -> str:
    """``NC1HWC0`` for 3; unknown numbers give ``FORMAT_<n>`` (formats never block loading)."""
    return FORMAT_NAMES.get(enum, f"FORMAT_{enum}")


def format_id(name: str) -> int:
    """The OutputFormat number for a name such as ``"FRACTAL_NZ"``."""
    try:
        return _FORMAT_IDS[name.upper()]
    except KeyError:
        raise ValueError(f"unknown Ascend format name {name!r}") from None


def supported_dtypes() -> Tuple[str, ...]:
    """numpy dtype names the writer accepts."""
    return tuple(_FROM_NUMPY)

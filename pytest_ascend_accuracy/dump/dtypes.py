"""Dump dtype and format enums (docs/formats.md §2.2, §2.3) <-> numpy.

The numbering is the dump protobuf's ``OutputDataType`` (FLOAT=1, FLOAT16=2, ...), **not**
``ge::DataType`` (nano dumps, see ``nano.py``, map theirs onto it). The numpy map follows
msaccucmp: bf16 is stored as 2-byte values and decoded to float32 by a 16-bit shift;
UNDEFINED(0) reads as int8 and RESOURCE(23) as int64, as msaccucmp does, so real dumps load
unchanged. The 8-bit floats msaccucmp decodes -- HIFLOAT8(33), FLOAT8_E5M2(34),
FLOAT8_E4M3FN(35) -- are stored as bytes and decoded to float32 through a 256-entry table
(OCP FP8 and the Ascend HiFloat8 spec; tested against ml_dtypes/en_dtypes. msaccucmp's own
decoders differ on a few codes: E4M3FN 0x7F/0xFF are NaN, not +-480; E5M2 0xFC is -inf; HiF8
codes with 0 or 1 exponent bits carry 3 mantissa bits, and 0xEF is -inf). Types msaccucmp
does not decode either (strings, int4, float4/6, E8M0, ...) raise :class:`UnsupportedDtype`
from ``storage_dtype``; readers report them per tensor (``is_decodable``), not per file.
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

_BY_DT_NAME: Dict[str, int] = {name: num for num, name in DTYPE_NAMES.items()}
BF16 = 27
#: ``DT_UINT1``: bit-packed; the one type msaccucmp decodes that this reader does not
UINT1 = 29
HIFLOAT8, FLOAT8_E5M2, FLOAT8_E4M3FN = 33, 34, 35
#: byte-coded float types decoded to float32 through a table, with the names ml_dtypes uses
BYTE_FLOATS: Dict[int, str] = {HIFLOAT8: "hifloat8", FLOAT8_E5M2: "float8_e5m2",
                               FLOAT8_E4M3FN: "float8_e4m3fn"}
#: logical dtype names whose values load as float32
LOADED_AS_FLOAT32 = frozenset(("bfloat16",) + tuple(BYTE_FLOATS.values()))
#: ml_dtypes' sub-byte integers (ONNX INT4/UINT4 weights, opset 21; INT2/UINT2) -> the 8-bit
#: type that holds their values: numpy saves them as raw bytes (``<V1``), which no reader takes
NARROW_INTS = {"int4": np.dtype("int8"), "uint4": np.dtype("uint8"),
               "int2": np.dtype("int8"), "uint2": np.dtype("uint8")}

#: enum -> numpy dtype of the stored bytes (bf16: stored as uint16).
_STORAGE: Dict[int, np.dtype] = {
    0: np.dtype("int8"), 1: np.dtype("<f4"), 2: np.dtype("<f2"), 3: np.dtype("int8"),
    4: np.dtype("uint8"), 5: np.dtype("<i2"), 6: np.dtype("<u2"), 7: np.dtype("<i4"),
    8: np.dtype("<i8"), 9: np.dtype("<u4"), 10: np.dtype("<u8"), 11: np.dtype("bool"),
    12: np.dtype("<f8"), 16: np.dtype("<c8"), 17: np.dtype("<c16"), 23: np.dtype("<i8"),
    BF16: np.dtype("<u2"), HIFLOAT8: np.dtype("uint8"), FLOAT8_E5M2: np.dtype("uint8"),
    FLOAT8_E4M3FN: np.dtype("uint8"),
}

#: numpy dtype name -> enum, for the writer.
_FROM_NUMPY: Dict[str, int] = {
    "float32": 1, "float16": 2, "int8": 3, "uint8": 4, "int16": 5, "uint16": 6, "int32": 7,
    "int64": 8, "uint32": 9, "uint64": 10, "bool": 11, "float64": 12, "complex64": 16,
    "complex128": 17, "bfloat16": BF16, "hifloat8": HIFLOAT8, "float8_e5m2": FLOAT8_E5M2,
    "float8_e4m3fn": FLOAT8_E4M3FN,
}

#: OutputFormat enum value -> name (docs/formats.md §2.3).
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


#: enums from here on stand for ge::DataType numbers a nano dump used that have no name here
GE_UNKNOWN_BASE = 1 << 20


def dtype_name(enum: int) -> str:
    """``DT_FLOAT16`` for 2; ``unknown(99)`` for numbers outside the enum."""
    if enum >= GE_UNKNOWN_BASE:
        return f"unknown(ge::DataType {enum - GE_UNKNOWN_BASE})"
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


def is_decodable(enum: int) -> bool:
    """Whether ``enum``'s values can be read (``storage_dtype`` would not raise)."""
    return enum in _STORAGE


def logical_dtype_name(enum: int) -> str:
    """The dtype name a reader reports for ``enum``: the numpy name of the stored values, or
    ``bfloat16``/``float8_e5m2``/``float8_e4m3fn``/``hifloat8`` (loaded as float32), or for a
    type that cannot be decoded its lower-case enum name (``float4_e2m1``, ``unknown(99)``)."""
    if enum == BF16:
        return "bfloat16"
    if enum in BYTE_FLOATS:
        return BYTE_FLOATS[enum]
    if enum in _STORAGE:
        return _STORAGE[enum].name
    return dtype_name(enum).replace("DT_", "", 1).lower()


def value_dtype(name: str) -> np.dtype:
    """The numpy dtype of the values a tensor whose logical dtype is ``name`` loads as (float32
    for bf16 and the 8-bit floats; uint8 for a name numpy does not know, so that byte counts of
    undecodable tensors stay defined)."""
    if name in LOADED_AS_FLOAT32:
        return np.dtype("float32")
    try:
        found = np.dtype(name)
    except TypeError:
        return np.dtype("uint8")
    # names such as "int4" resolve only once ml_dtypes is imported: not numpy's own
    return found if found.type.__module__ == "numpy" else np.dtype("uint8")


def npy_values(array: np.ndarray) -> np.ndarray:
    """``array`` as a ``.npy`` file can hold it: an ml_dtypes array of a float type numpy has
    no dtype for (bfloat16, float8_e5m2, ...: its ``.npy`` header says ``<V2``, ``<V1`` or
    ``<f1``, which no reader takes for those numbers) as its float32 values, exactly as a dump
    of that type loads (``loaded_dtype``); a sub-byte integer (int4, uint4, ...) as int8 or
    uint8, its values; any other array unchanged."""
    if array.dtype.name in LOADED_AS_FLOAT32:  # (no numpy dtype has these names)
        return array.astype(np.float32)
    if array.dtype.kind == "V" and array.dtype.name in NARROW_INTS:
        return array.astype(NARROW_INTS[array.dtype.name])
    if array.dtype.kind == "V" and array.dtype.type.__module__.startswith("ml_dtypes"):
        # its other floats (float8_e4m3fnuz, float4_e2m1fn, float8_e8m0fnu, ...): float32
        # holds each of their values exactly
        return array.astype(np.float32)
    return array


def loaded_dtype(enum: int) -> np.dtype:
    """The numpy dtype ``TensorRef.load()`` returns (bf16, 8-bit floats -> float32)."""
    if enum == BF16 or enum in BYTE_FLOATS:
        return np.dtype("float32")
    return storage_dtype(enum).newbyteorder("=")


def decode_values(raw: np.ndarray, enum: int) -> np.ndarray:
    """Storage values -> loaded values: bf16 bit patterns and 8-bit float codes become float32,
    others unchanged."""
    if enum == BF16:
        return (raw.astype(np.uint32) << 16).view(np.float32)
    if enum in BYTE_FLOATS:
        return _BYTE_FLOAT_TABLES[enum][raw]
    return raw


# --------------------------------------------------------------------------- 8-bit floats
def _ocp_fp8_table(exp_bits: int, man_bits: int, ieee_specials: bool) -> np.ndarray:
    """float32 value of every byte of an OCP FP8 type: E5M2 has IEEE inf/NaN (exponent all
    ones); E4M3FN has no inf and one NaN per sign (S.1111.111)."""
    codes = np.arange(256, dtype=np.int64)
    sign = np.where(codes >> 7, -1.0, 1.0)
    e = (codes >> man_bits) & ((1 << exp_bits) - 1)
    m = codes & ((1 << man_bits) - 1)
    bias = (1 << (exp_bits - 1)) - 1
    frac = m / float(1 << man_bits)
    values = sign * np.where(e == 0, frac * 2.0 ** (1 - bias), (1 + frac) * 2.0 ** (e - bias))
    top = e == (1 << exp_bits) - 1
    if ieee_specials:
        values = np.where(top & (m == 0), sign * np.inf, values)
        values = np.where(top & (m != 0), np.nan, values)
    else:
        values = np.where(top & (m == (1 << man_bits) - 1), np.nan, values)
    return values.astype(np.float32)


def _hifloat8_value(code: int) -> float:
    """One HiFloat8 code (Ascend HiF8: sign, a 2-4 bit dot field giving D exponent bits,
    a sign-magnitude exponent with an implicit leading 1, 1-3 mantissa bits; D = 0 with dot
    0000 is the denormal range 2^(m-23)). 0x00 is zero, 0x80 NaN, S.11.0111.1 +-inf."""
    sign = -1.0 if code >> 7 else 1.0
    f = code & 0x7F
    if code == 0x80:
        return float("nan")
    if f == 0x6F:
        return sign * float("inf")
    if f & 0x60:                         # dot 11 / 10 / 01: D = 4 / 3 / 2
        d = {0x60: 4, 0x40: 3, 0x20: 2}[f & 0x60]
        man_bits = 5 - d
    elif f & 0x10:                       # dot 001: D = 1
        d, man_bits = 1, 3
    elif f & 0x08:                       # dot 0001: D = 0
        d, man_bits = 0, 3
    else:                                # dot 0000: denormal
        return sign * 2.0 ** ((f & 0x7) - 23) if f & 0x7 else 0.0
    exp = 0
    if d:
        raw = (f >> man_bits) & ((1 << d) - 1)
        mag = (1 << (d - 1)) + (raw & ((1 << (d - 1)) - 1))
        exp = -mag if raw >> (d - 1) else mag
    man = f & ((1 << man_bits) - 1)
    return sign * 2.0 ** exp * (1 + man / float(1 << man_bits))


_BYTE_FLOAT_TABLES: Dict[int, np.ndarray] = {
    FLOAT8_E5M2: _ocp_fp8_table(5, 2, True),
    FLOAT8_E4M3FN: _ocp_fp8_table(4, 3, False),
    HIFLOAT8: np.array([_hifloat8_value(c) for c in range(256)], dtype=np.float32),
}


def byte_float_table(enum: int) -> np.ndarray:
    """The 256-entry float32 table of an 8-bit float type (a copy)."""
    return _BYTE_FLOAT_TABLES[enum].copy()


def enum_for(dtype) -> int:
    """The dump enum for a numpy dtype (or a dtype name such as ``"bfloat16"``)."""
    name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    try:
        return _FROM_NUMPY[name]
    except KeyError:
        pass
    if isinstance(dtype, str) and _BY_DT_NAME.get(f"DT_{name.upper()}") is not None:
        return _BY_DT_NAME[f"DT_{name.upper()}"]  # a type stored as raw bytes (see to_storage)
    raise UnsupportedDtype(f"numpy dtype {name!r} cannot be stored in an Ascend dump")


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
    """Values of ``array`` in the byte form stored for ``enum`` (little-endian, contiguous).
    For the 8-bit floats the array holds the codes: an ml_dtypes array of that type or uint8."""
    if enum in BYTE_FLOATS:
        arr = np.asarray(array)
        if arr.dtype.name == BYTE_FLOATS[enum] or arr.dtype == np.uint8:
            return np.asarray(arr, order="C").view(np.uint8)
        raise UnsupportedDtype(f"{BYTE_FLOATS[enum]} values must be given as codes (uint8 or "
                               f"an ml_dtypes {BYTE_FLOATS[enum]} array), got {arr.dtype}")
    if enum not in _STORAGE:  # no numpy form: the caller gives the stored bytes (tests)
        arr = np.asarray(array)
        if arr.dtype != np.uint8:
            raise UnsupportedDtype(f"{dtype_name(enum)} values must be given as raw bytes "
                                   f"(uint8), got {arr.dtype}")
        return np.asarray(arr, order="C")
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


# --------------------------------------------------------------------------- numpy's limits
#: numpy's NPY_MAXDIMS (numpy 2); a shape read from a file with more dims is refused
MAX_DIMS = 64
_MAX_BYTES = (1 << 63) - 1  # numpy sizes are signed 64-bit (intp)


def element_count(shape) -> int:
    """How many values an array of ``shape`` holds (Python ints: no overflow, 1 for a scalar)."""
    n = 1
    for d in shape:
        n *= int(d)
    return n


def shape_problem(shape, itemsize: int = 1) -> str:
    """Why numpy could not hold an array of ``shape`` (values read from a file, checked before
    numpy sees them), or "" when it can: more than 64 dims, a negative or non-integer dim, a
    dim or a byte count past 2**63 (zeros do not hide a huge dim: numpy refuses those too)."""
    if len(shape) > MAX_DIMS:
        return f"{len(shape)} dims (numpy allows at most {MAX_DIMS})"
    nbytes = max(int(itemsize), 1)
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
            return f"dim {d!r} is not a non-negative integer"
        if d > _MAX_BYTES:
            return f"dim {d} is past numpy's limit of 2**63 - 1"
        if d:
            nbytes *= int(d)
            if nbytes > _MAX_BYTES:
                return f"shape {list(shape)} needs more than 2**63 bytes"
    return ""

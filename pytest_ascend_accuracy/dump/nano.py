"""Nano dump files: the TLV dump format of Ascend Nano devices (docs/formats.md §2; msaccucmp
``dump_parse/nano_dump_data.py`` and ``cmp_utils/tlv_parse.py``).

Layout (all integers little-endian)::

    u64 header_len | TLV header (header_len bytes) | input bytes... | output bytes...
    file_size == 8 + header_len + sum(sizes)

    TLV header: u32 magic 0x5A5A5A5A | u32 version
                | u32 tag=4 | u32 len | u32 n | n x input     (the input section may be absent)
                | u32 tag=5 | u32 len | u32 n | n x output
    input:  i32 data_type, i32 format, i32 address_type, u64 address, u64 offset, u64 size,
            u32 list_len, then list_len bytes of (u32 tag, u32 len, value) entries:
            tag 0 = shape dims (u64 each), 1 = original shape dims
    output: i32 data_type, i32 format, i32 address_type, i32 original_index,
            i32 original_data_type, i32 original_format, u64 address, u64 offset, u64 size,
            u32 list_len, entries as for inputs plus tag 2 = origin op name (UTF-8)

``data_type`` is **ge::DataType** numbering (FLOAT=0, FLOAT16=1, INT8=2, INT32=3, ...), mapped here
onto the dump proto numbering the rest of the package uses, by name, as msaccucmp does; a number
outside ge::DataType is reported per tensor like any type that cannot be decoded. ``format`` is
ge::Format, whose low byte numbers formats as the proto does. Tensor bytes follow the header in
order (msaccucmp reads them in sequence too; ``offset`` and ``address`` are device addresses).
The op name is not in the file: readers take it from the file name.

Every count, length and dim is checked against what the header and the file can hold before
anything is built; any problem is ``DumpFormatError(path, ...)`` naming the file.
"""
from __future__ import annotations

import struct
from typing import List, NamedTuple, Optional, Tuple

from ..errors import DumpFormatError
from . import dtypes as dt
from .proto import MAX_TENSORS

MAGIC = 0x5A5A5A5A
INPUT_TAG, OUTPUT_TAG = 4, 5
SHAPE_TAG, ORIGINAL_SHAPE_TAG, ORIGIN_NAME_TAG = 0, 1, 2

#: ge::DataType number -> dump proto enum (by name; msaccucmp ``NanoDataType``)
GE_DTYPE_NAMES = {
    0: "DT_FLOAT", 1: "DT_FLOAT16", 2: "DT_INT8", 3: "DT_INT32", 4: "DT_UINT8", 6: "DT_INT16",
    7: "DT_UINT16", 8: "DT_UINT32", 9: "DT_INT64", 10: "DT_UINT64", 11: "DT_DOUBLE",
    12: "DT_BOOL", 13: "DT_STRING", 14: "DT_DUAL_SUB_INT8", 15: "DT_DUAL_SUB_UINT8",
    16: "DT_COMPLEX64", 17: "DT_COMPLEX128", 18: "DT_QINT8", 19: "DT_QINT16", 20: "DT_QINT32",
    21: "DT_QUINT8", 22: "DT_QUINT16", 23: "DT_RESOURCE", 24: "DT_STRING_REF", 25: "DT_DUAL",
    26: "DT_VARIANT", 27: "DT_BF16", 28: "DT_UNDEFINED", 29: "DT_INT4", 30: "DT_UINT1",
    31: "DT_INT2", 32: "DT_UINT2",
}
_PROTO_BY_NAME = {name: num for num, name in dt.DTYPE_NAMES.items()}
#: proto enums for ge numbers outside the table start here (``dtypes.dtype_name`` names them)
GE_UNKNOWN_BASE = dt.GE_UNKNOWN_BASE

_INPUT_FIXED = struct.Struct("<iiiQQQI")        # 40 bytes
_OUTPUT_FIXED = struct.Struct("<iiiiiiQQQI")    # 52 bytes
_U32 = struct.Struct("<I")
_TL = struct.Struct("<II")


def proto_dtype(ge_number: int) -> int:
    """The dump proto enum for a ge::DataType number (an out-of-range one maps past
    ``GE_UNKNOWN_BASE`` and is reported as undecodable)."""
    name = GE_DTYPE_NAMES.get(ge_number)
    if name is None or name not in _PROTO_BY_NAME:
        return GE_UNKNOWN_BASE + ge_number
    return _PROTO_BY_NAME[name]


def is_nano_head(head: bytes) -> bool:
    """Whether the first 12 bytes of a file are a nano dump's (header length, then the magic)."""
    return len(head) >= 12 and _U32.unpack_from(head, 8)[0] == MAGIC


class _Reader:
    """Bounded reads from the header bytes; every overrun is a DumpFormatError."""

    def __init__(self, path: str, buf: bytes):
        self.path, self.buf, self.pos = path, buf, 0

    def fail(self, problem: str) -> DumpFormatError:
        return DumpFormatError(self.path, f"nano dump header: {problem} (at header byte "
                                          f"{self.pos})")

    def take(self, st: struct.Struct, end: int, what: str) -> tuple:
        if self.pos + st.size > end:
            raise self.fail(f"{what} runs past its section")
        out = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return out


def _tlv_list(r: _Reader, end: int, where: str) -> dict:
    """The (tag -> bytes) entries of one tensor's TLV list ending at ``end``."""
    found = {}
    while r.pos < end:
        tag, length = r.take(_TL, end, f"{where}: TLV entry")
        if length > end - r.pos:
            raise r.fail(f"{where}: TLV entry {tag} of {length} bytes runs past its list")
        found[tag] = r.buf[r.pos:r.pos + length]
        r.pos += length
    return found


def _dims(r: _Reader, raw: Optional[bytes], where: str) -> Optional[Tuple[int, ...]]:
    if raw is None:
        return None
    if len(raw) % 8:
        raise r.fail(f"{where}: {len(raw)} bytes of dims is not a whole number of u64 values")
    if len(raw) // 8 > dt.MAX_DIMS:
        raise r.fail(f"{where}: {len(raw) // 8} dims (numpy allows at most {dt.MAX_DIMS})")
    return struct.unpack(f"<{len(raw) // 8}Q", raw)


def _section(r: _Reader, tag: int, fixed: struct.Struct, kind: str) -> List[tuple]:
    """One input/output section: a list of (fixed fields, TLV entries); [] when absent."""
    if r.pos + 8 > len(r.buf) or _TL.unpack_from(r.buf, r.pos)[0] != tag:
        return []
    _, length = r.take(_TL, len(r.buf), f"{kind} section header")
    end = r.pos + length
    if end > len(r.buf):
        raise r.fail(f"{kind} section of {length} bytes runs past the header")
    (count,) = r.take(_U32, end, f"{kind} count")
    room = (end - r.pos) // fixed.size
    if count > min(room, MAX_TENSORS):
        raise r.fail(f"{count:,} {kind}s declared, the section holds at most "
                     f"{min(room, MAX_TENSORS):,}")
    items = []
    for i in range(count):
        fields = r.take(fixed, end, f"{kind} {i}")
        list_len = fields[-1]
        if list_len > end - r.pos:
            raise r.fail(f"{kind} {i}: TLV list of {list_len} bytes runs past its section")
        items.append((fields, _tlv_list(r, r.pos + list_len, f"{kind} {i}")))
    if r.pos != end:
        raise r.fail(f"{kind} section has {end - r.pos} bytes after its last {kind}")
    return items


class NanoTensor(NamedTuple):
    """One tensor of a nano file, in the terms ``ascend_bin.make_slice`` checks and slices."""

    kind: str
    index: int
    dtype_enum: int  # dump proto numbering
    format_enum: int
    shape: Tuple[int, ...]
    original_shape: Optional[Tuple[int, ...]]
    offset: int
    size: int
    origin: Optional[Tuple[str, int]]
    declared_scalar: bool
    original_format: int = -1  # an output's ge::Format before ATC's layout change; -1: inputs


def parse_nano(path: str, raw: bytes, file_size: int) -> Tuple[int, List[NanoTensor]]:
    """(version, tensors) from a nano file's TLV header ``raw`` (the bytes after the u64
    length); ``ascend_bin`` turns them into a ``ParsedDump``."""
    r = _Reader(path, raw)
    magic, version = r.take(struct.Struct("<II"), len(raw), "magic and version")
    if magic != MAGIC:
        raise r.fail(f"magic {magic:#x}, expected {MAGIC:#x}")
    inputs = _section(r, INPUT_TAG, _INPUT_FIXED, "input")
    outputs = _section(r, OUTPUT_TAG, _OUTPUT_FIXED, "output")
    if r.pos != len(raw):
        raise r.fail(f"{len(raw) - r.pos} bytes after the output section")
    expected = 8 + len(raw) + sum(f[-2] for f, _ in inputs) + sum(f[-2] for f, _ in outputs)
    if expected != file_size:
        what = "truncated file" if expected > file_size else "size mismatch"
        raise DumpFormatError(path, f"{what}: nano header and tensor sizes need {expected} "
                                    f"bytes, file has {file_size}")
    offset = 8 + len(raw)
    tensors: List[NanoTensor] = []
    for kind, items in (("input", inputs), ("output", outputs)):
        for i, (fields, tlv) in enumerate(items):
            where = f"{kind} {i}"
            ge_type, fmt, size = fields[0], fields[1] & 0xFF, fields[-2]
            shape = _dims(r, tlv.get(SHAPE_TAG), f"{where} shape") or ()
            orig = _dims(r, tlv.get(ORIGINAL_SHAPE_TAG), f"{where} original shape")
            origin = None
            if kind == "output" and tlv.get(ORIGIN_NAME_TAG):
                try:
                    name = tlv[ORIGIN_NAME_TAG].decode("utf-8").rstrip("\0")
                except UnicodeDecodeError:
                    raise r.fail(f"{where}: origin name is not UTF-8") from None
                origin = (name, fields[3]) if name else None
            tensors.append(NanoTensor(kind, i, proto_dtype(ge_type), fmt, shape, orig, offset,
                                      size, origin, SHAPE_TAG in tlv,
                                      fields[5] & 0xFF if kind == "output" else -1))
            offset += size
    return version, tensors


# --------------------------------------------------------------------------- writing (tests)
def encode_nano(inputs, outputs, *, version: int = 0) -> bytes:
    """The bytes of a nano dump file. ``inputs``/``outputs``: dicts with ``ge_dtype``,
    ``format``, ``shape``, ``data`` (bytes), optional ``original_shape``, ``origin`` (name,
    index), ``original_format`` (outputs; default ``format``) and ``address``. Written the way
    the device writes it (see module doc)."""
    def tlv(tag: int, payload: bytes) -> bytes:
        return _TL.pack(tag, len(payload)) + payload

    def dims(tag, values) -> bytes:
        return tlv(tag, struct.pack(f"<{len(values)}Q", *values)) if values is not None else b""

    def section(tag, items, is_output) -> bytes:
        body = _U32.pack(len(items))
        for t in items:
            entries = dims(SHAPE_TAG, t.get("shape")) + dims(
                ORIGINAL_SHAPE_TAG, t.get("original_shape", t.get("shape")))
            origin = t.get("origin")
            if is_output:
                if origin:
                    entries += tlv(ORIGIN_NAME_TAG, origin[0].encode("utf-8"))
                body += _OUTPUT_FIXED.pack(t["ge_dtype"], t.get("format", 2), 3,
                                           origin[1] if origin else 0, t["ge_dtype"],
                                           t.get("original_format", t.get("format", 2)),
                                           t.get("address", 0), 0,
                                           len(t["data"]), len(entries))
            else:
                body += _INPUT_FIXED.pack(t["ge_dtype"], t.get("format", 2), 3,
                                          t.get("address", 0), 0, len(t["data"]), len(entries))
            body += entries
        return tlv(tag, body)

    head = struct.pack("<II", MAGIC, version) + section(INPUT_TAG, inputs, False) + section(
        OUTPUT_TAG, outputs, True)
    data = b"".join(t["data"] for t in list(inputs) + list(outputs))
    return struct.pack("<Q", len(head)) + head + data


__all__ = ["MAGIC", "GE_DTYPE_NAMES", "proto_dtype", "is_nano_head", "parse_nano", "encode_nano"]

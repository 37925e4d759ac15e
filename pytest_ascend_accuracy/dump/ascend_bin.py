"""One Ascend binary dump file: parse (header only, tensors mapped lazily) and write.

Format "2.0" (docs/formats.md §2)::

    u64 LE header_len | DumpData protobuf (data fields empty) | input bytes... | output bytes...
    | buffer bytes... | space bytes...      with file_size == 8 + header_len + sum(all sizes)

The legacy "1.0" format (the whole file is one DumpData with ``data`` filled) is read too: it is
tried when the file does not parse as 2.0, and its tensors are sliced out of a memory map.
A header starting with the magic 0x5A5A5A5A is a nano TLV dump, read by ``nano.py``.

Parsing reads 8 + header_len bytes and nothing else; each ``TensorRef.load()`` memory-maps its
slice (``map_tensor``), converts bf16 and 8-bit floats to float32 and device layouts back to
logical ones. Every value read from the header is range-checked before numpy sees it (shapes
within numpy's 64 dims and 2**63 bytes, tensors within the file, at most ``MAX_TENSORS``
tensors, see ``proto``). Every problem raises ``DumpFormatError(path, problem)``; a tensor of
a dtype that cannot be decoded raises it only when loaded, so the compare reports that tensor.
"""
from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import DumpFormatError
from . import device_formats as df
from . import dtypes as dt
from .file_span import FileSpan, SpanLoader
from .model import OpRecord, TensorRef
from .nano import parse_nano
from .proto import MAX_DIMS, DumpData, OpAttr, OpInput, OpOutput, ProtoDecodeError, Span
from .tensor_header import tensor_message

VERSION = "2.0"


@dataclass(frozen=True)
class TensorSlice:
    """Where one tensor's bytes lie in a dump file and how to read them."""

    kind: str  # "input" / "output"
    index: int
    dtype_enum: int
    format: str
    device_shape: Tuple[int, ...]
    original_shape: Optional[Tuple[int, ...]]
    offset: int
    size: int
    origin: Optional[Tuple[str, int]] = None
    #: the framework's format of the tensor (``NHWC``/``NCHW``; "" when unknown): it decides an
    #: NC1HWC0 shape that fits both (``device_formats.nc1hwc0_ambiguous``)
    original_format: str = ""

    @property
    def count(self) -> int:
        return dt.element_count(self.device_shape)


@dataclass(frozen=True)
class ParsedDump:
    """The header of one dump file and where each tensor lies."""

    path: str
    header: DumpData
    version: int  # 2 (binary), 1 (legacy whole-protobuf) or 0 (nano TLV, see nano.py)
    inputs: Tuple[TensorSlice, ...]
    outputs: Tuple[TensorSlice, ...]
    file_size: int


@dataclass(frozen=True)
class WrittenDump:
    """A dump file's header as its writer encoded it (``parsed``, what ``parse_dump_file``
    gives for it) and the file's (inode, size, mtime_ns) right after it was written: a reader
    believes the header only while the file still has that stamp."""

    parsed: ParsedDump
    stamp: Tuple[int, int, int]

    @staticmethod
    def stamp_of(st) -> Tuple[int, int, int]:
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def describes(self, path) -> bool:
        """Whether ``path`` is the file written, unchanged since."""
        if self.parsed.path != os.fspath(path):
            return False
        try:
            return self.stamp_of(os.stat(path)) == self.stamp
        except OSError:
            return False


@dataclass(frozen=True)
class DumpTensor:
    """A tensor to write: ``array`` in logical layout; ``format`` the device layout to store it in;
    ``dtype`` overrides the stored type (``"bfloat16"`` stores float32 values as bf16);
    ``padding`` extra zero bytes after the values (real dumps pad to alignment)."""

    array: np.ndarray
    format: str = "ND"
    origin: Optional[Tuple[str, int]] = None
    dtype: Optional[str] = None
    padding: int = 0


# --------------------------------------------------------------------------- parsing
def parse_dump_file(path) -> ParsedDump:
    """Read and check the header of one dump file (no tensor bytes are read)."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(8)
            if size < 8 or len(head) < 8:
                raise DumpFormatError(path, f"truncated file: {size} bytes, too short for the "
                                            "8-byte header length")
            (header_len,) = struct.unpack("<Q", head)
            if header_len > size - 8:
                v2_error = (f"header length {header_len} runs past the end of the file "
                            f"({size} bytes)")
                return _legacy_or_raise(path, size, v2_error)
            raw = f.read(header_len)
    except OSError as exc:
        raise DumpFormatError(path, f"cannot read dump file: {exc.strerror or exc}") from exc
    if raw[:4] == b"\x5a\x5a\x5a\x5a":  # the TLV format of Nano devices (nano.py)
        return _parse_nano(path, raw, size)
    try:
        header = DumpData.decode(raw)
    except ProtoDecodeError as exc:
        return _legacy_or_raise(path, size, f"garbage header: not a DumpData protobuf ({exc})")
    sections = [("input", header.input), ("output", header.output),
                ("buffer", header.buffer), ("space", header.space)]
    expected = 8 + header_len + sum(int(t.size) for _, items in sections for t in items)
    if expected != size or header.version not in (VERSION, ""):
        if header.version != VERSION:
            try:
                return _parse_legacy(path, size)
            except DumpFormatError:
                pass
        if expected > size:
            raise DumpFormatError(path, f"truncated file: header and tensor sizes need {expected} "
                                        f"bytes, file has {size}")
        if expected < size:
            raise DumpFormatError(path, f"file has {size - expected} bytes after the last tensor "
                                        f"(header and tensor sizes account for {expected})")
    return _parsed_v2(path, header, header_len, size)


def _parsed_v2(path: str, header: DumpData, header_len: int, size: int) -> ParsedDump:
    """A checked "2.0" header as the ``ParsedDump`` of its file (the tensors follow it)."""
    offset = 8 + header_len
    slices = {}
    for kind, items in (("input", header.input), ("output", header.output)):
        out = []
        for i, t in enumerate(items):
            out.append(_slice(path, kind, i, t, offset, int(t.size)))
            offset += int(t.size)
        slices[kind] = tuple(out)
    return ParsedDump(path, header, 2, slices["input"], slices["output"], size)


def _parse_nano(path: str, raw: bytes, size: int) -> ParsedDump:
    version, tensors = parse_nano(path, raw, size)
    slices = {"input": [], "output": []}
    for t in tensors:
        slices[t.kind].append(make_slice(path, t.kind, t.index, t.dtype_enum, t.format_enum,
                                         t.shape, t.original_shape, t.offset, t.size, t.origin,
                                         declared_scalar=t.declared_scalar,
                                         # an output's header format before the layout change
                                         # decides an ambiguous NC1HWC0 shape (formats.md §2.4)
                                         original_format=(dt.format_name(t.original_format)
                                                          if t.original_format >= 0 else "")))
    return ParsedDump(path, DumpData(version=f"nano {version}"), 0, tuple(slices["input"]),
                      tuple(slices["output"]), size)


def _legacy_or_raise(path: str, size: int, v2_error: str) -> ParsedDump:
    try:
        return _parse_legacy(path, size)
    except DumpFormatError:
        raise DumpFormatError(path, v2_error) from None


def _parse_legacy(path: str, size: int) -> ParsedDump:
    """The whole file as one DumpData with ``data`` filled (msaccucmp ``-v 1``)."""
    if size == 0:
        raise DumpFormatError(path, "empty file")
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        try:
            header = DumpData.decode(mm)
        except ProtoDecodeError as exc:
            raise DumpFormatError(path, f"not a legacy DumpData protobuf ({exc})") from None
    if header.version == VERSION or not (header.output or header.input
                                         or header.version.startswith("1")):
        raise DumpFormatError(path, "not a legacy (version 1) dump")
    slices = {}
    for kind, items in (("input", header.input), ("output", header.output)):
        out = []
        for i, t in enumerate(items):
            span = t.data if isinstance(t.data, Span) else Span(0, 0)
            out.append(_slice(path, kind, i, t, span.offset, span.length))
        slices[kind] = tuple(out)
    return ParsedDump(path, header, 1, slices["input"], slices["output"], size)


def _slice(path: str, kind: str, index: int, t, offset: int, size: int) -> TensorSlice:
    shape = tuple(int(d) for d in t.shape.dim) if t.shape is not None else ()
    orig = tuple(int(d) for d in t.original_shape.dim) if t.original_shape is not None else None
    origin = None
    original_format = ""
    op = getattr(t, "original_op", None)
    if op is not None and op.name:
        origin = (op.name, int(op.output_index))
        original_format = dt.format_name(int(op.format or 0))
    return make_slice(path, kind, index, t.data_type, t.format, shape, orig, offset, size,
                      origin, declared_scalar=t.shape is not None and orig == (),
                      original_format=original_format)


def make_slice(path: str, kind: str, index: int, dtype_enum: int, format_enum: int,
               shape: Tuple[int, ...], orig: Optional[Tuple[int, ...]], offset: int, size: int,
               origin: Optional[Tuple[str, int]] = None, *, declared_scalar: bool = False,
               original_format: str = "") -> TensorSlice:
    """Check one tensor's header values before numpy sees them (shape within numpy's limits,
    values within the tensor's bytes, a device layout that converts back) and say where it
    lies. A dtype that cannot be decoded is not an error here: its tensor fails on ``load()``
    with the reason, so the rest of the file still compares (also used by ``nano``)."""
    where = f"{kind} {index}"
    decodable = dt.is_decodable(dtype_enum)
    itemsize = dt.storage_dtype(dtype_enum).itemsize if decodable else 1
    if not shape and not declared_scalar:
        # msaccucmp: no shape but data -> 1-D view of all the bytes
        shape = (size // itemsize,)
    for label, dims in (("shape", shape), ("original shape", orig)):
        problem = dt.shape_problem(dims, itemsize) if dims is not None else ""
        if problem:
            raise DumpFormatError(path, f"{where}: {label}: {problem}")
    count = 1
    for d in shape:
        count *= d
    need = count * itemsize
    if decodable and need > size:
        raise DumpFormatError(
            path, f"{where}: buffer size {size} bytes does not match shape {list(shape)} x "
                  f"{dt.dtype_name(dtype_enum)} ({need} bytes needed)")
    fmt = dt.format_name(format_enum)
    try:
        logical = df.logical_shape(fmt, shape, orig, original_format)
    except df.DeviceFormatError as exc:
        raise DumpFormatError(path, f"{where}: {exc}") from None
    problem = dt.shape_problem(logical, itemsize)
    if problem:
        raise DumpFormatError(path, f"{where}: logical shape: {problem}")
    return TensorSlice(kind, index, dtype_enum, fmt, shape, orig, offset, size, origin,
                       original_format)


def map_tensor(path: str, offset: int, dtype: np.dtype, count: int) -> np.ndarray:
    """Memory-map ``count`` values at ``offset`` read-only (the only place tensor bytes are read)."""
    if count == 0:
        return np.empty((0,), dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=(count,))


def _make_loader(path: str, s: TensorSlice):
    def load() -> np.ndarray:
        if not dt.is_decodable(s.dtype_enum):
            why = ("msaccucmp does not decode it either" if s.dtype_enum != dt.UINT1 else
                   "bit-packed, 8 values a byte; msaccucmp unpacks every bit of the bytes, "
                   "whatever the shape")
            raise DumpFormatError(path, f"{s.kind} {s.index}: dtype "
                                        f"{dt.dtype_name(s.dtype_enum)} cannot be decoded "
                                        f"({why})")
        try:
            raw = map_tensor(path, s.offset, dt.storage_dtype(s.dtype_enum), s.count)
        except (OSError, ValueError) as exc:
            raise DumpFormatError(path, f"cannot read {s.kind} {s.index}: {exc}") from exc
        values = dt.decode_values(raw, s.dtype_enum).reshape(s.device_shape)
        return df.to_logical(values, s.format, s.original_shape, s.original_format)
    return load


def _span(path: str, s: TensorSlice) -> Optional[FileSpan]:
    """Where the slice's values lie when the stored bytes are the logical tensor (no device
    layout to convert back, not bf16), so the compare engine may read them straight into its
    own buffer (see ``file_span``); None otherwise."""
    if (s.format in df.CONVERTIBLE or s.dtype_enum == dt.BF16 or s.dtype_enum in dt.BYTE_FLOATS
            or not dt.is_decodable(s.dtype_enum)):
        return None
    return FileSpan(path, s.offset, dt.storage_dtype(s.dtype_enum), s.count)


_DTYPE_NAMES: dict = {}  # dtype enum -> logical dtype name (numpy's dtype.name is slow)


def tensor_ref(path: str, s: TensorSlice) -> TensorRef:
    """A lazily loaded ``TensorRef`` for one slice."""
    shape = df.logical_shape(s.format, s.device_shape, s.original_shape, s.original_format)
    name = _DTYPE_NAMES.get(s.dtype_enum)
    if name is None:
        name = _DTYPE_NAMES[s.dtype_enum] = dt.logical_dtype_name(s.dtype_enum)
    return TensorRef(kind=s.kind, index=s.index, dtype=name,
                     shape=shape, loader=SpanLoader(_make_loader(path, s), _span(path, s)),
                     format=s.format,
                     device_shape=s.device_shape, origin=s.origin, source=path)


def read_dump_file(path, *, name: Optional[str] = None, op_type: str = "", timestamp: int = 0,
                   order: int = 0) -> OpRecord:
    """One dump file as an ``OpRecord``. The name is the header's ``op_name`` when present,
    else ``name`` (taken from the file name by the caller)."""
    return op_record(parse_dump_file(path), name=name, op_type=op_type, timestamp=timestamp,
                     order=order)


def op_record(parsed: ParsedDump, *, name: Optional[str] = None, op_type: str = "",
              timestamp: int = 0, order: int = 0) -> OpRecord:
    """``read_dump_file`` of the file whose header ``parsed`` holds."""
    p = parsed.path
    op_name = parsed.header.op_name or name or Path(p).name
    outputs = tuple(tensor_ref(p, s) for s in parsed.outputs)
    origins: List[str] = []
    for t in outputs:
        if t.origin and t.origin[0] and t.origin[0] not in origins:
            origins.append(t.origin[0])
    return OpRecord(name=op_name, op_type=op_type,
                    inputs=tuple(tensor_ref(p, s) for s in parsed.inputs), outputs=outputs,
                    original_names=tuple(origins), order=order,
                    timestamp=timestamp or int(parsed.header.dump_time), source=p)


# --------------------------------------------------------------------------- writing
def _encode(t: DumpTensor, cls, index: int):
    """The header message of ``t`` and its stored values: an array, or for an NC1HWC0 tensor
    the compiled loops take, a ``channel_blocks.DeviceBlocks`` written in chunks."""
    from .channel_blocks import DeviceBlocks

    arr = np.asarray(t.array)
    enum = dt.enum_for(t.dtype or arr.dtype)
    storage = dt.to_storage(arr, enum)
    c0 = df.default_c0(arr.dtype)
    device = DeviceBlocks.of(storage, c0) if t.format == "NC1HWC0" else None
    if device is None:
        device = df.to_device(storage, t.format, c0=c0)
    size = device.nbytes + int(t.padding)
    return tensor_message(cls, enum, t.format, device.shape, size, arr.shape, t.origin), device


def _raw_bytes(arr: np.ndarray):
    """The bytes of ``arr`` in C order, without a copy when it is C-contiguous already (the
    device layouts of ``to_device`` are)."""
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    return memoryview(arr.reshape(-1).view(np.uint8))


def write_dump_file(path, op_name: str, inputs: Sequence[DumpTensor] = (),
                    outputs: Sequence[DumpTensor] = (), *, dump_time: int = 0,
                    version: int = 2, atomic: bool = True, attrs=()) -> Path:
    """Write one dump file: atomically (a hidden temp file renamed into place), or with
    ``atomic=False`` straight under its name, created exclusively (for a directory no one else
    reads or writes while it is filled: a run's own fresh step directory). Either way a write
    that fails removes what it wrote. ``attrs``: (name, value) strings of ``DumpData.attr``."""
    return _write(path, op_name, inputs, outputs, dump_time, version, atomic, False,
                  attrs=attrs)[0]


def write_parsed_dump_file(path, op_name: str, inputs: Sequence[DumpTensor] = (),
                           outputs: Sequence[DumpTensor] = (), *, dump_time: int = 0,
                           atomic: bool = True, fd: Optional[int] = None
                           ) -> Optional["WrittenDump"]:
    """``write_dump_file`` in format "2.0", returning the ``WrittenDump`` of the file written:
    what ``parse_dump_file`` gives for it (the header it encoded decodes to itself) and the
    file's stamp, so a writer's reader needs not read the headers back
    (``loader.load_dump(..., written=...)``). None for a file whose header the parser would
    refuse: reading it back reports why. ``fd`` (with ``atomic=False``): the file ``path``,
    already created exclusively for this write and opened for writing (``created_ahead``);
    it is closed here, and the file removed if the write fails."""
    return _write(path, op_name, inputs, outputs, dump_time, 2, atomic, True, fd)[1]


#: most tensors a written file's header is handed back for (``write_parsed_dump_file``)
_KNOWN_TENSORS = 1000


#: the integers a varint field of each kind gives back unchanged (``proto._int_value``): a
#: uint is read as 64 bits (a negative one comes back as 2**64 minus it), an int32 or enum as
#: its low 32 bits sign-extended
_VARINT_RANGES = {"uint": (0, 1 << 64), "int32": (-(1 << 31), 1 << 31), "enum": (-(1 << 31), 1 << 31)}
_VARINT_FIELDS: Dict[type, tuple] = {}  # message class -> ((attr, range, repeated)...,), messages


def _varints_hold(message) -> bool:
    """Whether every integer field of a header message (nested messages and shapes included)
    is one its varint gives back unchanged (``_VARINT_RANGES``), walking the encoded fields of
    each message class (``FIELDS``) only."""
    spec = _VARINT_FIELDS.get(type(message))
    if spec is None:
        ints, messages = [], []
        for attr, kind, repeated in type(message).FIELDS.values():
            if isinstance(kind, type):
                messages.append((attr, repeated))
            elif kind in _VARINT_RANGES:
                ints.append((attr, _VARINT_RANGES[kind], repeated))
        spec = _VARINT_FIELDS[type(message)] = (tuple(ints), tuple(messages))
    ints, messages = spec
    for attr, (low, high), repeated in ints:
        value = getattr(message, attr)
        if repeated:
            if value and not (low <= min(value) and max(value) < high):
                return False
        elif value is not None and not low <= value < high:
            return False
    for attr, repeated in messages:
        value = getattr(message, attr)
        for item in (value if repeated else (value,)):
            if item is not None and not _varints_hold(item):
                return False
    return True


def _write(path, op_name: str, inputs: Sequence[DumpTensor], outputs: Sequence[DumpTensor],
           dump_time: int, version: int, atomic: bool, want_parsed: bool, fd: Optional[int] = None,
           attrs=()) -> Tuple[Path, Optional[WrittenDump]]:
    path = Path(path)
    header, raw, st = None, b"", None  # (header and raw: format 2.0's)
    tmp = path.with_name(f".{path.name[:200]}.{os.getpid()}.tmp") if atomic else path
    try:
        if fd is not None and atomic:
            raise ValueError("a file created ahead (fd=...) is written in place: atomic=False")
        ins = [_encode(t, OpInput, i) for i, t in enumerate(inputs)]
        outs = [_encode(t, OpOutput, i) for i, t in enumerate(outputs)]
        pads = [int(t.padding) for t in inputs] + [int(t.padding) for t in outputs]
        arrays = [d for _, d in ins] + [d for _, d in outs]
    except BaseException:
        if fd is not None:  # the file created for this write stays empty: it goes
            os.close(fd)
            path.unlink(missing_ok=True)
        raise
    try:
        with open(tmp, "wb" if atomic else "xb") if fd is None else open(fd, "wb") as f:
            if version == 1:
                def filled(msg, arr, pad):
                    return type(msg)(**{**msg.__dict__, "data": arr.tobytes() + b"\0" * pad})
                n = len(ins)
                header = DumpData(
                    version="1.0", dump_time=dump_time, op_name=op_name,
                    input=tuple(filled(m, a, pads[i]) for i, (m, a) in enumerate(ins)),
                    output=tuple(filled(m, a, pads[n + i]) for i, (m, a) in enumerate(outs)))
                f.write(header.encode())
            else:
                header = DumpData(version=VERSION, dump_time=dump_time, op_name=op_name,
                                  input=tuple(m for m, _ in ins), output=tuple(m for m, _ in outs),
                                  attr=tuple(OpAttr(str(k), str(v)) for k, v in attrs))
                raw = header.encode()
                f.write(struct.pack("<Q", len(raw)) + raw)  # one write for length and header
                for arr, pad in zip(arrays, pads):
                    if arr.size and isinstance(arr, np.ndarray):
                        f.write(_raw_bytes(arr))
                    elif arr.size:
                        arr.write_to(f)  # (``DeviceBlocks``)
                    if pad:
                        f.write(b"\0" * pad)
        if atomic:
            os.replace(tmp, path)
    except BaseException as exc:
        if not (isinstance(exc, FileExistsError) and not atomic and fd is None):
            tmp.unlink(missing_ok=True)  # (never a file that was there before an exclusive create)
        raise
    if want_parsed and version == 2:
        st = os.stat(path)  # (closed: its last write is in the stamp)
    parsed = None
    # within the decoder's limits by far (``proto``: tensors, dims, fields) and every integer a
    # varint holds as it is, so the header read back would be this one; the rest is left to
    # the parser
    if (st is not None and len(ins) + len(outs) <= _KNOWN_TENSORS
            and all(len(m.shape.dim) <= MAX_DIMS and len(m.original_shape.dim) <= MAX_DIMS
                    for m, _ in ins + outs) and _varints_hold(header)):
        size = 8 + len(raw) + sum(int(m.size) for m, _ in ins + outs)
        try:
            parsed = WrittenDump(_parsed_v2(os.fspath(path), header, len(raw), size),
                                 WrittenDump.stamp_of(st))
        except DumpFormatError:
            parsed = None
    return path, parsed

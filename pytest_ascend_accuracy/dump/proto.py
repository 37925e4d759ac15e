"""A small proto3 wire-format codec for the Ascend ``DumpData`` header (docs/formats.md §2.1).

No dependency on the ``protobuf`` package: the schema is eight messages of scalars, strings,
bytes and nested messages, so a table-driven codec of ~250 lines covers it. Decoding skips
unknown fields of every wire type (newer CANN releases add fields such as ``address``), accepts
packed and unpacked repeated scalars, and never copies a ``bytes`` field: it becomes a
:class:`Span` (offset, length) into the decoded buffer, so a legacy whole-protobuf dump can be
memory-mapped and its tensors sliced lazily. Malformed input raises :class:`ProtoDecodeError`;
callers turn it into ``DumpFormatError(path, ...)``.

Repeated fields are bounded while decoding (``Message.LIMITS``): a header is attacker-sized, and
a 2 MB header of empty ``input`` entries used to decode into a million tensors (48 s, 1.2 GB)
before any check ran. A shape holds at most 64 dims (numpy's limit), a dump at most
``MAX_TENSORS`` inputs, outputs, buffers and workspaces together, a message or skipped group
at most ``MAX_UNKNOWN_FIELDS`` unknown fields, and a whole header at most ``MAX_FIELDS`` field
values of any kind at any depth (a singular field repeated, proto3's "last one wins", or an
unpacked repeated scalar costs a decode step too: a 2 MB header of a million repeated
``data_type`` fields, or of a million unpacked dims, took a second); past that, decoding stops.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, Dict, NamedTuple, Optional, Tuple, Union

_VARINT, _FIXED64, _LEN, _SGROUP, _EGROUP, _FIXED32 = 0, 1, 2, 3, 4, 5
#: nesting limit of skipped groups (protobuf's own parsers stop at 100 levels too)
MAX_GROUP_DEPTH = 100
#: most tensors (inputs + outputs + buffers + workspaces) one dump file may declare; real
#: operators have a few, a ConcatD at most a few thousand
MAX_TENSORS = 10_000
#: most dims one Shape may hold (numpy's NPY_MAXDIMS)
MAX_DIMS = 64
#: most unknown fields one message (or one skipped group) may hold; newer CANN releases add a
#: few per message, a hostile header millions (each one costs a decode step)
MAX_UNKNOWN_FIELDS = 10_000
#: most field values (packed values counted one by one) one decoded header may hold at any depth;
#: a real tensor entry holds about ten, so MAX_TENSORS of them stay far below it
MAX_FIELDS = 400_000


class ProtoDecodeError(ValueError):
    """The bytes are not a valid encoding of the expected message. ``offset`` is where it broke."""

    def __init__(self, problem: str, offset: int):
        self.problem = problem
        self.offset = offset
        super().__init__(f"{problem} at byte {offset}")


class Span(NamedTuple):
    """Where a decoded ``bytes`` field lies in the decoded buffer (no copy made)."""

    offset: int
    length: int


Bytes = Union[bytes, Span]


# --------------------------------------------------------------------------- wire primitives
def read_varint(buf, pos: int, end: int) -> Tuple[int, int]:
    """Decode one base-128 varint at ``pos``; returns (value, new position)."""
    result = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise ProtoDecodeError("truncated varint", start)
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ProtoDecodeError("varint longer than 10 bytes", start)


#: the one-byte varints (0..127), encoded once: most header values (tags, dtypes, formats,
#: small dims) are one of them
_SMALL = tuple(bytes((v,)) for v in range(128))


def encode_varint(value: int) -> bytes:
    """Encode a non-negative integer (negative int32/64 use their 64-bit two's complement).
    ``ValueError`` outside [-2**63, 2**64): no 10-byte varint holds it (a value below -2**64
    used to loop forever, one of 2**64 or more made a varint every reader refuses)."""
    if 0 <= value < 128:
        return _SMALL[value]
    if not -(1 << 63) <= value < 1 << 64:
        raise ValueError(f"{value} does not fit a protobuf varint (64 bits)")
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return encode_varint((number << 3) | wire)


def _skip(buf, pos: int, end: int, wire: int, number: int) -> int:
    """Skip one unknown field value; returns the position after it."""
    if wire == _VARINT:
        return read_varint(buf, pos, end)[1]
    if wire == _FIXED64:
        new = pos + 8
    elif wire == _FIXED32:
        new = pos + 4
    elif wire == _LEN:
        length, pos = read_varint(buf, pos, end)
        new = pos + length
    elif wire == _SGROUP:
        return _skip_group(buf, pos, end, number)
    else:
        raise ProtoDecodeError(f"invalid wire type {wire} (field {number})", pos)
    if new > end:
        raise ProtoDecodeError(f"field {number} runs past the end of its message", pos)
    return new


def _skip_group(buf, pos: int, end: int, number: int) -> int:
    """Skip a (deprecated) group up to its matching end-group tag. Iterative with an explicit
    stack: nested start-group tags in a corrupt header must not exhaust Python's recursion
    limit (a 1 kB header of them used to raise RecursionError instead of a decode error)."""
    open_groups = [number]
    skipped = 0
    while open_groups:
        skipped += 1
        if skipped > MAX_UNKNOWN_FIELDS:
            raise ProtoDecodeError(f"group {number} holds more than {MAX_UNKNOWN_FIELDS:,} "
                                   "fields", pos)
        if pos >= end:
            raise ProtoDecodeError(f"unterminated group (field {open_groups[-1]})", pos)
        tag, pos = read_varint(buf, pos, end)
        wire, field = tag & 7, tag >> 3
        if wire == _EGROUP:
            if field != open_groups[-1]:
                raise ProtoDecodeError(f"mismatched end of group {field} for {open_groups[-1]}", pos)
            open_groups.pop()
        elif wire == _SGROUP:
            if len(open_groups) >= MAX_GROUP_DEPTH:
                raise ProtoDecodeError(f"groups nested deeper than {MAX_GROUP_DEPTH}", pos)
            open_groups.append(field)
        else:
            pos = _skip(buf, pos, end, wire, field)
    return pos


# --------------------------------------------------------------------------- schema machinery
# A field spec: (attribute name, kind, repeated). kind is a scalar kind name or a Message class.
_SCALARS = ("uint", "int32", "enum", "string", "bytes")


class Message:
    """Base of the schema dataclasses: ``FIELDS`` maps field number -> (attr, kind, repeated)."""

    FIELDS: ClassVar[Dict[int, Tuple[str, Any, bool]]] = {}
    #: repeated scalar attr -> most values accepted (decoding stops with an error past it)
    LIMITS: ClassVar[Dict[str, int]] = {}
    #: most entries of all repeated message fields together (None: unbounded)
    MAX_ENTRIES: ClassVar[Optional[int]] = None

    @classmethod
    def decode(cls, buf, start: int = 0, end: Optional[int] = None, budget=None):
        """Decode ``buf[start:end]`` (bytes, bytearray, memoryview or mmap). ``budget``: a
        one-item list of the field values left to the whole decode (nested messages share it)."""
        if end is None:
            end = len(buf)
        if budget is None:
            budget = [MAX_FIELDS]
        table = _TABLES.get(cls)
        if table is None:
            table = _TABLES[cls] = _table(cls)
        values: Dict[str, Any] = {}
        pos = start
        entries = unknown = 0
        while pos < end:
            tag_pos = pos
            budget[0] -= 1
            if budget[0] < 0:
                raise _too_many_fields(tag_pos)
            tag = buf[pos]
            if tag < 0x80:  # one-byte tag (field numbers up to 15): the common case
                pos += 1
            else:
                tag, pos = read_varint(buf, pos, end)
            number, wire = tag >> 3, tag & 7
            spec = table.get(number)
            if spec is None:
                if number == 0:
                    raise ProtoDecodeError("field number 0 is invalid", tag_pos)
                unknown += 1
                if unknown > MAX_UNKNOWN_FIELDS:
                    raise ProtoDecodeError(f"{cls.__name__} has more than "
                                           f"{MAX_UNKNOWN_FIELDS:,} unknown fields", tag_pos)
                pos = _skip(buf, pos, end, wire, number)
                continue
            attr, code, repeated, sub, limit = spec
            if code <= _C_BYTES:  # message, string or bytes: length-delimited
                if wire != _LEN:
                    expected = "a message" if code == _C_MESSAGE else "length-delimited"
                    raise ProtoDecodeError(
                        f"{cls.__name__}.{attr}: wire type {wire}, expected {expected}", tag_pos)
                if pos < end and buf[pos] < 0x80:
                    length = buf[pos]
                    pos += 1
                else:
                    length, pos = read_varint(buf, pos, end)
                if pos + length > end:
                    raise ProtoDecodeError(f"{cls.__name__}.{attr} runs past the end", pos)
                if code == _C_MESSAGE:
                    if repeated and cls.MAX_ENTRIES is not None:
                        entries += 1
                        if entries > cls.MAX_ENTRIES:
                            raise ProtoDecodeError(
                                f"{cls.__name__} has more than {cls.MAX_ENTRIES:,} tensor entries "
                                "(inputs, outputs, buffers, workspaces and attributes "
                                "together)", tag_pos)
                    value = sub.decode(buf, pos, pos + length, budget)
                elif code == _C_BYTES:
                    value = Span(pos, length)
                else:
                    try:
                        value = bytes(buf[pos:pos + length]).decode("utf-8")
                    except UnicodeDecodeError:
                        raise ProtoDecodeError(f"{cls.__name__}.{attr} is not UTF-8", pos) from None
                pos += length
            elif wire == _VARINT:  # integer kinds
                if pos < end and buf[pos] < 0x80:
                    value = buf[pos]
                    pos += 1
                else:
                    raw, pos = read_varint(buf, pos, end)
                    value = _int_value(sub, raw)
            elif wire == _LEN and repeated:  # packed repeated scalars
                length, pos = read_varint(buf, pos, end)
                stop = pos + length
                if stop > end:
                    raise ProtoDecodeError(f"{cls.__name__}.{attr} runs past the end", pos)
                lst = values.setdefault(attr, [])
                while pos < stop:
                    raw, pos = read_varint(buf, pos, stop)
                    lst.append(_int_value(sub, raw))
                    if limit is not None and len(lst) > limit:
                        raise _too_many(cls, attr, limit, pos)
                    budget[0] -= 1
                    if budget[0] < 0:
                        raise _too_many_fields(pos)
                continue
            else:
                raise ProtoDecodeError(
                    f"{cls.__name__}.{attr}: wire type {wire}, expected a varint", tag_pos)
            if repeated:
                lst = values.setdefault(attr, [])
                lst.append(value)
                if limit is not None and len(lst) > limit:  # unpacked: one tag per value
                    raise _too_many(cls, attr, limit, pos)
            else:
                values[attr] = value  # proto3: last one wins
        for attr, val in values.items():
            if type(val) is list:
                values[attr] = tuple(val)
        return cls(**values)

    def encode(self) -> bytes:
        """Serialise to proto3 wire format (defaults omitted, repeated scalars packed)."""
        out = bytearray()
        order = _ORDER.get(type(self))
        if order is None:
            order = _ORDER[type(self)] = tuple(sorted(self.FIELDS.items()))
        for number, (attr, kind, repeated) in order:
            value = getattr(self, attr)
            items = value if repeated else (value,)
            if repeated and not isinstance(kind, type) and kind not in ("string", "bytes"):
                if items:
                    packed = b"".join(encode_varint(int(v)) for v in items)
                    out += _key(number, _LEN) + encode_varint(len(packed)) + packed
                continue
            for item in items:
                if item is None:
                    continue
                if isinstance(kind, type):
                    body = item.encode()
                    out += _key(number, _LEN) + encode_varint(len(body)) + body
                elif kind in ("string", "bytes"):
                    if isinstance(item, Span):
                        raise TypeError(f"{type(self).__name__}.{attr}: cannot encode a Span")
                    data = item.encode("utf-8") if kind == "string" else bytes(item)
                    if data or repeated:
                        out += _key(number, _LEN) + encode_varint(len(data)) + data
                elif item:
                    out += _key(number, _VARINT) + encode_varint(int(item))
        return bytes(out)


_ORDER: Dict[type, tuple] = {}  # message class -> its FIELDS sorted by number (encode order)
#: decode dispatch: message class -> {field number: (attr, code, repeated, message class or
#: integer kind, limit)}, built from FIELDS/LIMITS on first use
_TABLES: Dict[type, Dict[int, tuple]] = {}
_C_MESSAGE, _C_STRING, _C_BYTES, _C_INT = 0, 1, 2, 3


def _table(cls) -> Dict[int, tuple]:
    table = {}
    for number, (attr, kind, repeated) in cls.FIELDS.items():
        if isinstance(kind, type):
            code, sub = _C_MESSAGE, kind
        else:
            code = {"string": _C_STRING, "bytes": _C_BYTES}.get(kind, _C_INT)
            sub = kind
        table[number] = (attr, code, repeated, sub, cls.LIMITS.get(attr))
    return table


def _too_many(cls, attr: str, limit: int, pos: int) -> ProtoDecodeError:
    return ProtoDecodeError(f"{cls.__name__}.{attr} has more than {limit:,} entries", pos)


def _too_many_fields(pos: int) -> ProtoDecodeError:
    return ProtoDecodeError(f"header holds more than {MAX_FIELDS:,} fields", pos)


def _int_value(kind: str, raw: int) -> int:
    if kind == "int32" or kind == "enum":
        raw &= 0xFFFFFFFF
        return raw - (1 << 32) if raw >= 1 << 31 else raw
    return raw & 0xFFFFFFFFFFFFFFFF


# --------------------------------------------------------------------------- the DumpData schema
@dataclass(frozen=True)
class Shape(Message):
    dim: Tuple[int, ...] = ()
    FIELDS: ClassVar = {1: ("dim", "uint", True)}
    LIMITS: ClassVar = {"dim": MAX_DIMS}


@dataclass(frozen=True)
class OriginalOp(Message):
    name: str = ""
    output_index: int = 0
    data_type: int = 0
    format: int = 0
    FIELDS: ClassVar = {1: ("name", "string", False), 2: ("output_index", "uint", False),
                        3: ("data_type", "enum", False), 4: ("format", "enum", False)}


@dataclass(frozen=True)
class OpOutput(Message):
    data_type: int = 0
    format: int = 0
    shape: Optional[Shape] = None
    original_op: Optional[OriginalOp] = None
    data: Bytes = b""
    size: int = 0
    original_shape: Optional[Shape] = None
    sub_format: int = 0
    FIELDS: ClassVar = {1: ("data_type", "enum", False), 2: ("format", "enum", False),
                        3: ("shape", Shape, False), 4: ("original_op", OriginalOp, False),
                        5: ("data", "bytes", False), 6: ("size", "uint", False),
                        7: ("original_shape", Shape, False), 8: ("sub_format", "int32", False)}


@dataclass(frozen=True)
class OpInput(Message):
    data_type: int = 0
    format: int = 0
    shape: Optional[Shape] = None
    data: Bytes = b""
    size: int = 0
    original_shape: Optional[Shape] = None
    sub_format: int = 0
    FIELDS: ClassVar = {1: ("data_type", "enum", False), 2: ("format", "enum", False),
                        3: ("shape", Shape, False), 4: ("data", "bytes", False),
                        5: ("size", "uint", False), 6: ("original_shape", Shape, False),
                        7: ("sub_format", "int32", False)}


@dataclass(frozen=True)
class OpBuffer(Message):
    buffer_type: int = 0
    data: Bytes = b""
    size: int = 0
    FIELDS: ClassVar = {1: ("buffer_type", "enum", False), 2: ("data", "bytes", False),
                        3: ("size", "uint", False)}


@dataclass(frozen=True)
class Workspace(Message):
    type: int = 0
    data: Bytes = b""
    size: int = 0
    FIELDS: ClassVar = {1: ("type", "enum", False), 2: ("data", "bytes", False),
                        3: ("size", "uint", False)}


@dataclass(frozen=True)
class OpAttr(Message):
    """An op attribute the dump carries; FFTS+ slices carry ``_sgt_json_info`` (ffts_slices)."""

    name: str = ""
    value: str = ""
    FIELDS: ClassVar = {1: ("name", "string", False), 2: ("value", "string", False)}


class _AttrOrWorkspace:
    """``DumpData`` field 7: an ``OpAttr`` in the current CANN schema (attr = 7, space = 8), a
    ``Workspace`` in the older one (space = 7), told apart by their fields: an attribute holds
    strings 1 and 2 only, and always its name (1); a workspace a varint ``type`` (1) or
    ``size`` (3), or only its ``data`` bytes (2) where proto3 leaves type LOG (0) and size 0
    out, or nothing at all. An entry that reads as neither (a name that is not UTF-8) is the
    older schema's workspace too: its bytes are kept, not the whole dump refused."""

    @classmethod
    def decode(cls, buf, start: int = 0, end: Optional[int] = None, budget=None):
        end = len(buf) if end is None else end
        pos, named = start, False
        while pos < end:
            tag, pos = read_varint(buf, pos, end)
            number, wire = tag >> 3, tag & 7
            if number not in (1, 2) or wire != _LEN:
                return Workspace.decode(buf, start, end, budget)
            named |= number == 1
            pos = _skip(buf, pos, end, wire, number)
        if named:
            try:
                return OpAttr.decode(buf, start, end, budget)
            except ProtoDecodeError:
                pass
        return Workspace.decode(buf, start, end, budget)


@dataclass(frozen=True)
class DumpData(Message):
    version: str = ""
    dump_time: int = 0
    output: Tuple[OpOutput, ...] = ()
    input: Tuple[OpInput, ...] = ()
    buffer: Tuple[OpBuffer, ...] = ()
    op_name: str = ""
    space: Tuple[Workspace, ...] = ()
    attr: Tuple[OpAttr, ...] = ()
    FIELDS: ClassVar = {1: ("version", "string", False), 2: ("dump_time", "uint", False),
                        3: ("output", OpOutput, True), 4: ("input", OpInput, True),
                        5: ("buffer", OpBuffer, True), 6: ("op_name", "string", False),
                        7: ("attr", _AttrOrWorkspace, True), 8: ("space", Workspace, True)}
    MAX_ENTRIES: ClassVar = MAX_TENSORS

    @classmethod
    def decode(cls, buf, start: int = 0, end: Optional[int] = None, budget=None):
        """``Message.decode``; workspaces of the older schema's field 7 join ``space``."""
        msg = super().decode(buf, start, end, budget)
        older = tuple(a for a in msg.attr if isinstance(a, Workspace))
        if not older:
            return msg
        return replace(msg, attr=tuple(a for a in msg.attr if isinstance(a, OpAttr)),
                       space=older + msg.space)


def _check_schema() -> None:
    for cls in (Shape, OriginalOp, OpOutput, OpInput, OpBuffer, Workspace, OpAttr, DumpData):
        names = {f.name for f in fields(cls)}
        for attr, kind, _ in cls.FIELDS.values():
            assert attr in names, (cls, attr)
            assert isinstance(kind, type) or kind in _SCALARS, (cls, kind)


_check_schema()

__all__ = ["ProtoDecodeError", "Span", "Message", "Shape", "OriginalOp", "OpOutput", "OpInput",
           "OpBuffer", "Workspace", "OpAttr", "DumpData", "read_varint", "encode_varint"]

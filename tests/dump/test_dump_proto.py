"""The proto3 wire codec for the DumpData header: encoding, decoding, unknown fields, errors."""
import pytest
from hypothesis import given, settings, strategies as st

from pytest_ascend_accuracy.dump.proto import (
    DumpData, OpBuffer, OpInput, OpOutput, OriginalOp, ProtoDecodeError, Shape, Span, Workspace,
    encode_varint, read_varint)


@pytest.mark.parametrize("value,encoded", [
    (0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02"),
    (2**64 - 1, b"\xff" * 9 + b"\x01"),
])
def test_varint_known_encodings(value, encoded):
    assert encode_varint(value) == encoded
    assert read_varint(encoded, 0, len(encoded)) == (value, len(encoded))


def test_negative_int32_uses_ten_byte_twos_complement():
    raw = OpOutput(sub_format=-1).encode()
    assert raw == b"\x40" + b"\xff" * 9 + b"\x01"
    assert OpOutput.decode(raw).sub_format == -1


def test_known_header_bytes():
    # field 1 "2.0", field 2 varint 123, field 6 "a/b": what protoc emits for the same message
    msg = DumpData(version="2.0", dump_time=123, op_name="a/b")
    assert msg.encode() == b"\x0a\x032.0\x10\x7b\x32\x03a/b"


def test_dims_decode_packed_and_unpacked():
    packed = b"\x0a\x03\x01\x02\x03"
    unpacked = b"\x08\x01\x08\x02\x08\x03"
    assert Shape.decode(packed).dim == (1, 2, 3)
    assert Shape.decode(unpacked).dim == (1, 2, 3)
    assert Shape((1, 2, 3)).encode() == packed


def test_unknown_fields_of_every_wire_type_are_skipped():
    known = DumpData(version="2.0", op_name="x").encode()
    unknown = (b"\x48\x05"                      # field 9 varint
               + b"\x51" + b"\x00" * 8          # field 10 fixed64
               + b"\x5a\x02hi"                  # field 11 length-delimited
               + b"\x65" + b"\x00" * 4          # field 12 fixed32
               + b"\x6b\x08\x01\x6c")           # field 13 group holding a varint, end group
    assert DumpData.decode(unknown + known + unknown) == DumpData(version="2.0", op_name="x")


def test_bytes_fields_decode_to_spans_without_copying():
    raw = OpInput(data=b"abcdef", size=6).encode()
    msg = OpInput.decode(raw)
    assert isinstance(msg.data, Span)
    assert raw[msg.data.offset:msg.data.offset + msg.data.length] == b"abcdef"
    with pytest.raises(TypeError, match="Span"):
        msg.encode()


@pytest.mark.parametrize("raw,problem", [
    (b"\x0a\x05ab", "runs past the end"),          # string longer than the buffer
    (b"\xff\xff", "truncated varint"),
    (b"\xff" * 11, "varint longer than 10 bytes"),
    (b"\x4f", "invalid wire type 7"),          # unknown field 9, wire type 7
    (b"\x0f", "DumpData.version: wire type 7"),
    (b"\x00\x00", "field number 0"),
    (b"\x1a\x02\x08", "runs past the end"),         # nested message cut short
    (b"\x08\x01\x0a", "expected length-delimited"),  # version (string) sent as varint
    (b"\x0a\x02\xff\xfe", "not UTF-8"),
])
def test_malformed_bytes_raise_decode_error(raw, problem):
    with pytest.raises(ProtoDecodeError, match=problem):
        DumpData.decode(raw)


shapes = st.builds(Shape, st.lists(st.integers(0, 2**40), max_size=5).map(tuple))
origins = st.builds(OriginalOp, st.text(max_size=8), st.integers(0, 2**32 - 1),
                    st.integers(0, 40), st.integers(0, 50))
outputs = st.builds(OpOutput, st.integers(0, 40), st.integers(0, 50), st.none() | shapes,
                    st.none() | origins, st.just(b""), st.integers(0, 2**63),
                    st.none() | shapes, st.integers(-2**31, 2**31 - 1))
inputs = st.builds(OpInput, st.integers(0, 40), st.integers(0, 50), st.none() | shapes,
                   st.just(b""), st.integers(0, 2**63), st.none() | shapes,
                   st.integers(-2**31, 2**31 - 1))
headers = st.builds(
    DumpData, st.text(max_size=5), st.integers(0, 2**64 - 1),
    st.lists(outputs, max_size=3).map(tuple), st.lists(inputs, max_size=3).map(tuple),
    st.lists(st.builds(OpBuffer, st.integers(0, 3), st.just(b""), st.integers(0, 99)),
             max_size=2).map(tuple),
    st.text(max_size=20),
    st.lists(st.builds(Workspace, st.integers(0, 3), st.just(b""), st.integers(0, 99)),
             max_size=2).map(tuple))


@settings(max_examples=60, deadline=None)
@given(headers)
def test_header_round_trip(header):
    assert DumpData.decode(header.encode()) == header


@pytest.mark.parametrize("value", [1 << 64, -(1 << 63) - 1, -(1 << 64) - 1])
def test_an_integer_no_varint_holds_is_refused_not_encoded(value):
    """Beyond 64 bits: refused (before, below -2**64 the encoder never returned, and 2**64
    made an 11-byte varint that the reader refuses)."""
    with pytest.raises(ValueError, match="does not fit"):
        encode_varint(value)
    assert read_varint(encode_varint((1 << 64) - 1), 0, 10) == ((1 << 64) - 1, 10)
    assert encode_varint(-(1 << 63)) == bytes([0x80] * 9 + [0x01])

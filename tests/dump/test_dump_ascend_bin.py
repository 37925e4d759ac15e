"""One Ascend binary dump file: write -> read round trips, laziness, and every bad input."""
import os
import struct
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from pytest_ascend_accuracy.dump import ascend_bin
from pytest_ascend_accuracy.dump.ascend_bin import (
    DumpTensor, parse_dump_file, read_dump_file, write_dump_file)
from pytest_ascend_accuracy.dump.proto import DumpData, OpInput, OpOutput, Shape
from pytest_ascend_accuracy.errors import DumpFormatError

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "bool", "complex64", "complex128"]


def _values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return rng.standard_normal(shape).astype(dtype)


def _write_raw(path, header: DumpData, payload: bytes = b"", header_len=None):
    raw = header.encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw) if header_len is None else header_len))
        f.write(raw)
        f.write(payload)
    return path


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(tmp_path, dtype):
    x = _values(dtype, (2, 3), 1)
    y = _values(dtype, (4,), 2)
    p = write_dump_file(tmp_path / "Op.op.1.0.1", "op", [DumpTensor(x)], [DumpTensor(y)])
    op = read_dump_file(p)
    assert op.name == "op"
    (inp,), (out,) = op.inputs, op.outputs
    assert (inp.dtype, inp.shape, out.dtype, out.shape) == (dtype, (2, 3), dtype, (4,))
    assert inp.load().tobytes() == x.tobytes()
    assert out.load().tobytes() == y.tobytes()
    assert out.source == str(p)


def test_bf16_output_loads_as_float32(tmp_path):
    x = np.array([1.0, -2.5, 3.140625, np.inf], dtype=np.float32)
    p = write_dump_file(tmp_path / "f", "cast", outputs=[DumpTensor(x, dtype="bfloat16")])
    t = read_dump_file(p).outputs[0]
    assert t.dtype == "bfloat16"
    got = t.load()
    assert got.dtype == np.float32
    assert got.tolist() == [1.0, -2.5, 3.140625, np.inf]
    assert os.path.getsize(p) == 8 + len(parse_dump_file(p).header.encode()) + 4 * 2


def test_file_layout_is_header_length_header_then_inputs_outputs(tmp_path):
    a = np.arange(3, dtype=np.int32)
    b = np.arange(2, dtype=np.float16)
    p = write_dump_file(tmp_path / "f", "op", [DumpTensor(a)], [DumpTensor(b)], dump_time=7)
    raw = p.read_bytes()
    (hl,) = struct.unpack("<Q", raw[:8])
    header = DumpData.decode(raw[8:8 + hl])
    assert header.version == "2.0" and header.dump_time == 7 and header.op_name == "op"
    assert header.input[0].data_type == 7 and header.input[0].size == 12
    assert header.output[0].data_type == 2 and header.output[0].shape.dim == (2,)
    assert raw[8 + hl:] == a.tobytes() + b.tobytes()


@pytest.mark.parametrize("fmt,shape", [("NC1HWC0", (1, 19, 3, 3)), ("FRACTAL_NZ", (2, 17, 20)),
                                       ("FRACTAL_Z", (18, 3, 2, 2))])
def test_device_formats_are_stored_in_device_layout_and_read_back(tmp_path, fmt, shape):
    x = _values("float16", shape)
    p = write_dump_file(tmp_path / "f", "op", outputs=[DumpTensor(x, format=fmt)])
    t = read_dump_file(p).outputs[0]
    assert t.format == fmt
    assert t.device_shape != shape and t.shape == shape
    assert np.array_equal(t.load(), x)


def test_padding_after_values_is_ignored(tmp_path):
    x = np.arange(5, dtype=np.float16)
    p = write_dump_file(tmp_path / "f", "op", outputs=[DumpTensor(x, padding=22)],
                        inputs=[DumpTensor(np.ones(3, np.int8), padding=5)])
    op = read_dump_file(p)
    assert np.array_equal(op.outputs[0].load(), x)
    assert parse_dump_file(p).outputs[0].size == 10 + 22


def test_scalar_and_zero_size_tensors(tmp_path):
    scalar = np.float32(2.5)
    empty = np.zeros((3, 0, 2), np.float16)
    p = write_dump_file(tmp_path / "f", "op", outputs=[DumpTensor(np.asarray(scalar)),
                                                      DumpTensor(empty)])
    s, e = read_dump_file(p).outputs
    assert s.shape == () and s.load() == 2.5 and s.load().shape == ()
    assert e.shape == (3, 0, 2) and e.load().shape == (3, 0, 2) and e.size == 0


def test_empty_shape_with_more_bytes_is_read_as_1d_like_msaccucmp(tmp_path):
    header = DumpData(version="2.0", output=(OpOutput(data_type=1, size=12),))
    p = _write_raw(tmp_path / "f", header, np.arange(3, dtype=np.float32).tobytes())
    t = read_dump_file(p).outputs[0]
    assert t.shape == (3,) and t.load().tolist() == [0.0, 1.0, 2.0]


def test_nan_and_inf_round_trip_bit_exactly(tmp_path):
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 65504, 6e-8], dtype=np.float16)
    y = np.array([np.nan, np.inf, -np.inf, 1e-45], dtype=np.float32)
    p = write_dump_file(tmp_path / "f", "op", [DumpTensor(y)], [DumpTensor(x)])
    op = read_dump_file(p)
    assert op.outputs[0].load().tobytes() == x.tobytes()
    assert op.inputs[0].load().tobytes() == y.tobytes()


def test_output_origin_is_kept(tmp_path):
    p = write_dump_file(tmp_path / "f", "fused", outputs=[
        DumpTensor(np.ones(2), origin=("relu1", 0)), DumpTensor(np.ones(2), origin=("bn1", 2))])
    op = read_dump_file(p)
    assert [t.origin for t in op.outputs] == [("relu1", 0), ("bn1", 2)]
    assert op.original_names == ("relu1", "bn1")


def test_header_name_wins_over_file_name_and_is_never_a_path(tmp_path):
    p = write_dump_file(tmp_path / "Add.safe.1.0.5", "../../etc/passwd", outputs=[
        DumpTensor(np.ones(1))])
    op = read_dump_file(p, name="safe", op_type="Add")
    assert op.name == "../../etc/passwd" and op.op_type == "Add"
    assert sorted(os.listdir(tmp_path)) == ["Add.safe.1.0.5"]


def test_legacy_whole_protobuf_format(tmp_path):
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    y = np.arange(4, dtype=np.int64)
    p = write_dump_file(tmp_path / "f", "old", [DumpTensor(y)], [DumpTensor(x, padding=2)],
                        version=1)
    parsed = parse_dump_file(p)
    assert parsed.version == 1 and parsed.header.version == "1.0"
    op = read_dump_file(p)
    assert op.name == "old"
    assert np.array_equal(op.outputs[0].load(), x)
    assert np.array_equal(op.inputs[0].load(), y)


# ----------------------------------------------------------------------------- bad input
def _good_file(tmp_path):
    return write_dump_file(tmp_path / "Op.op.1.0.1", "op", [DumpTensor(np.ones(4, np.float32))],
                           [DumpTensor(np.ones((2, 2), np.float16))])


def test_truncated_file(tmp_path):
    p = _good_file(tmp_path)
    data = p.read_bytes()
    p.write_bytes(data[:-3])
    with pytest.raises(DumpFormatError) as info:
        parse_dump_file(p)
    assert info.value.path == str(p)
    assert str(info.value) == (f"{p}: truncated file: header and tensor sizes need {len(data)} "
                               f"bytes, file has {len(data) - 3}")


def test_file_shorter_than_header_length_field(tmp_path):
    p = tmp_path / "short"
    p.write_bytes(b"\x01\x02\x03")
    with pytest.raises(DumpFormatError, match="truncated file: 3 bytes, too short for the "
                                              "8-byte header length") as info:
        parse_dump_file(p)
    assert str(p) in str(info.value)


def test_header_length_past_end(tmp_path):
    p = _write_raw(tmp_path / "f", DumpData(version="2.0"), header_len=10_000)
    with pytest.raises(DumpFormatError) as info:
        parse_dump_file(p)
    assert str(info.value) == (f"{p}: header length 10000 runs past the end of the file "
                               f"({os.path.getsize(p)} bytes)")


def test_garbage_protobuf(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(struct.pack("<Q", 6) + b"\xff\xff\xff\xff\xff\xff")
    with pytest.raises(DumpFormatError) as info:
        parse_dump_file(p)
    assert str(info.value).startswith(f"{p}: garbage header: not a DumpData protobuf (")
    assert "truncated varint" in str(info.value)


def test_unknown_dtype_enum_fails_that_tensor_only(tmp_path):
    header = DumpData(version="2.0", output=(OpOutput(data_type=99, shape=Shape((2,)), size=4),
                                             OpOutput(data_type=2, shape=Shape((2,)), size=4)))
    p = _write_raw(tmp_path / "f", header, b"\0" * 8)
    op = read_dump_file(p)
    assert op.outputs[0].dtype == "unknown(99)" and op.outputs[0].shape == (2,)
    with pytest.raises(DumpFormatError) as info:
        op.outputs[0].load()
    assert str(info.value) == f"{p}: output 0: dtype unknown(99) cannot be decoded " \
                              "(msaccucmp does not decode it either)"
    assert op.outputs[1].load().tolist() == [0.0, 0.0]


def test_buffer_size_does_not_match_shape_times_dtype(tmp_path):
    header = DumpData(version="2.0", input=(OpInput(data_type=1, shape=Shape((2, 3)), size=20),))
    p = _write_raw(tmp_path / "f", header, b"\0" * 20)
    with pytest.raises(DumpFormatError) as info:
        read_dump_file(p)
    assert str(info.value) == (f"{p}: input 0: buffer size 20 bytes does not match shape [2, 3] "
                               f"x DT_FLOAT (24 bytes needed)")


def test_trailing_bytes_are_reported(tmp_path):
    p = _good_file(tmp_path)
    with open(p, "ab") as f:
        f.write(b"xyz")
    with pytest.raises(DumpFormatError, match="file has 3 bytes after the last tensor"):
        parse_dump_file(p)


def test_device_shape_inconsistent_with_original_shape(tmp_path):
    header = DumpData(version="2.0", output=(OpOutput(
        data_type=2, format=3, shape=Shape((1, 1, 2, 2, 16)), original_shape=Shape((1, 40, 2, 2)),
        size=128),))
    p = _write_raw(tmp_path / "f", header, b"\0" * 128)
    with pytest.raises(DumpFormatError) as info:
        read_dump_file(p)
    assert str(info.value) == (f"{p}: output 0: NC1HWC0 shape [1, 1, 2, 2, 16] does not fit "
                               f"original shape [1, 40, 2, 2]")


def test_file_changed_after_parsing_fails_on_load_naming_the_file(tmp_path):
    p = _good_file(tmp_path)
    op = read_dump_file(p)
    p.write_bytes(p.read_bytes()[:20])
    with pytest.raises(DumpFormatError, match=f"{p}: cannot read output 0"):
        op.outputs[0].load()


# ----------------------------------------------------------------------------- laziness
def test_parsing_reads_no_tensor_bytes(tmp_path, monkeypatch):
    calls = []
    real = ascend_bin.map_tensor
    monkeypatch.setattr(ascend_bin, "map_tensor", lambda *a: calls.append(a) or real(*a))
    p = _good_file(tmp_path)
    op = read_dump_file(p)
    assert calls == [] and op.outputs[0].shape == (2, 2)
    op.outputs[0].load()
    assert len(calls) == 1


def test_large_declared_tensor_costs_no_memory_until_loaded(tmp_path):
    n = 16 * 1024 * 1024  # 64 MB of float32, written as a sparse file
    header = DumpData(version="2.0", op_name="big",
                      output=(OpOutput(data_type=1, shape=Shape((16, 1024, 1024)), size=4 * n),))
    raw = header.encode()
    p = tmp_path / "Big.big.1.0.1"
    with open(p, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + 4 * n)
    tracemalloc.start()
    try:
        op = read_dump_file(p)
        arr = op.outputs[0].load()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000  # headers and a memory map, not 64 MB of values
    assert isinstance(arr, np.memmap) and arr.shape == (16, 1024, 1024)
    assert float(arr[3, 5, :8].sum()) == 0.0


# ----------------------------------------------------------------------------- property test
_DT = st.sampled_from(["float16", "float32", "int8", "int32", "int64", "uint8", "bool",
                       "float64", "uint16"])


@st.composite
def _tensors(draw):
    dtype = draw(_DT)
    fmt = draw(st.sampled_from(["ND", "NC1HWC0", "FRACTAL_NZ", "FRACTAL_Z"]))
    ndim = {"ND": draw(st.integers(0, 3)), "NC1HWC0": 4, "FRACTAL_Z": 4,
            "FRACTAL_NZ": draw(st.integers(1, 3))}[fmt]
    shape = tuple(draw(st.lists(st.integers(0 if fmt == "ND" else 1, 5), min_size=ndim,
                                max_size=ndim)))
    arr = draw(hnp.arrays(dtype, shape))
    return DumpTensor(arr, format=fmt, padding=draw(st.integers(0, 9)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_tensors(), max_size=3), st.lists(_tensors(), max_size=3),
       st.text(min_size=1, max_size=12), st.sampled_from([1, 2]))
def test_binary_round_trip_property(inputs, outputs, name, version):
    with tempfile.TemporaryDirectory() as d:
        p = write_dump_file(Path(d) / "f", name, inputs, outputs, version=version)
        op = read_dump_file(p)
        assert op.name == name
        for written, refs in ((inputs, op.inputs), (outputs, op.outputs)):
            assert len(refs) == len(written)
            for t, ref in zip(written, refs):
                got = ref.load()
                assert ref.shape == t.array.shape == got.shape
                assert ref.format == t.format
                assert got.dtype == t.array.dtype
                assert got.tobytes() == t.array.tobytes()


# -- the bytes the writer produces are pinned (issue 17 made it faster, not different) --------
def _pinned_case():
    from pytest_ascend_accuracy.dump.ascend_bin import DumpTensor

    r = np.arange(2 * 20 * 3 * 5, dtype=np.float32).reshape(2, 20, 3, 5) / 7 - 30
    w = (np.arange(17 * 20 * 3 * 3) % 97 - 48).astype(np.float16).reshape(17, 20, 3, 3)
    m = (np.arange(3 * 17 * 33) % 13).astype(np.float16).reshape(3, 17, 33)
    ins = [DumpTensor(r.astype(np.float16), "NC1HWC0"), DumpTensor(w, "FRACTAL_Z"),
           DumpTensor(np.arange(20, dtype=np.float32), "ND", padding=24),
           DumpTensor(r[:, :3].astype(np.float32), "ND", dtype="bfloat16"),
           DumpTensor(np.arange(70, dtype=np.int8).reshape(1, 70, 1, 1), "NC1HWC0"),
           DumpTensor(np.float32(2.5)), DumpTensor(np.zeros((0, 4), np.float32))]
    outs = [DumpTensor(m, "FRACTAL_NZ", origin=("matmul_1", 0)),
            DumpTensor(np.arange(300, dtype=np.int64) * 1000003, origin=("big_op" * 30, 2)),
            DumpTensor(r.transpose(0, 2, 3, 1), "ND", origin=("t", 1))]  # not C-contiguous
    return ins, outs


#: sha256 and size of the files the writer produced before issue 17 (commit d901603) for
#: ``_pinned_case``: padded NC1HWC0 (fp16, int8 with C0 = 32), FRACTAL_Z with padded filters,
#: FRACTAL_NZ, bf16, padding bytes, a scalar, an empty tensor, a non-contiguous array
PINNED = {2: ("8479f4c2235caf3f26a51b928ba33dce6263240cf2be0a702e0894981e791325", 35231),
          1: ("f4c52a9178922bb1b889b13b180066033e08e3f90b5134b9e509e0ef8942af3a", 35254)}


@pytest.mark.parametrize("atomic", [True, False])
@pytest.mark.parametrize("version", [2, 1])
def test_written_bytes_are_those_of_the_writer_before_issue_17(tmp_path, version, atomic):
    import hashlib

    from pytest_ascend_accuracy.dump.ascend_bin import read_dump_file, write_dump_file

    ins, outs = _pinned_case()
    path = write_dump_file(tmp_path / "f", "Conv2D/op.name with spaces", ins, outs,
                           dump_time=1700000000123456, version=version, atomic=atomic)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]
    data = path.read_bytes()
    assert (hashlib.sha256(data).hexdigest(), len(data)) == PINNED[version]
    op = read_dump_file(path)  # and the real reader gives back the logical tensors
    for t, ref in zip(op.inputs + op.outputs, ins + outs):
        want = np.asarray(ref.array)
        if ref.dtype == "bfloat16":
            np.testing.assert_allclose(t.load(), want, rtol=1e-2)
        else:
            np.testing.assert_array_equal(t.load(), want)

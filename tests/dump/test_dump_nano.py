"""Nano TLV dumps (issue 11 item 4): built in code with the structure of the real file
msaccucmp's tests ship (ConcatV2D, two fp16 inputs, output = their concat), read through the
normal loader; the real file is checked too where ../shared/realdata is present."""
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pytest_ascend_accuracy.dump.ascend_bin import parse_dump_file, read_dump_file
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.nano import encode_nano, proto_dtype
from pytest_ascend_accuracy.errors import DumpFormatError

REAL = Path(__file__).resolve().parents[3] / "shared" / "realdata" / "msprobe" / "test" / \
    "msprobe_test" / "msaccucmp_ut" / "resource" / "nano_dump" / "ConcatV2D.concatv2.0.0.550288648"
NAME = "ConcatV2D.concatv2.0.0.550288648"


def _concat_file(directory: Path, a_len=14652, b_len=30, name=NAME) -> Path:
    """A nano dump with the real file's structure: fp16 inputs [1,a], [1,b] in format NHWC (1),
    output [1,a+b] = their concat with origin ('concatv2', 0), device addresses 0, 8, 16."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, a_len)).astype(np.float16)
    b = rng.standard_normal((1, b_len)).astype(np.float16)
    out = np.concatenate([a, b], axis=1)
    data = encode_nano(
        [dict(ge_dtype=1, format=1, shape=a.shape, data=a.tobytes(), address=0),
         dict(ge_dtype=1, format=1, shape=b.shape, data=b.tobytes(), address=8)],
        [dict(ge_dtype=1, format=1, shape=out.shape, data=out.tobytes(),
              origin=("concatv2", 0), address=16)])
    p = directory / name
    p.write_bytes(data)
    return p


def _check_concat(op):
    assert (op.name, op.op_type) == ("concatv2", "ConcatV2D")
    assert [t.shape for t in op.inputs] == [(1, 14652), (1, 30)]
    assert [t.dtype for t in op.inputs + op.outputs] == ["float16"] * 3
    assert op.outputs[0].shape == (1, 14682) and op.outputs[0].origin == ("concatv2", 0)
    a, b = (t.load() for t in op.inputs)
    np.testing.assert_array_equal(op.outputs[0].load(), np.concatenate([a, b], axis=1))


def test_built_nano_file_loads_through_the_normal_loader(tmp_path):
    p = _concat_file(tmp_path)
    assert p.stat().st_size == 8 + 324 + 2 * (14652 + 30 + 14682)  # the real file's sizes
    dump = load_dump(p)
    _check_concat(dump.ops[0])
    assert dump.ops[0].timestamp == 550288648


@pytest.mark.skipif(not REAL.is_file(), reason="../shared/realdata not present")
def test_real_nano_file_output_is_the_concat_of_its_inputs(tmp_path):
    _check_concat(load_dump(REAL).ops[0])
    # our writer reproduces the real header byte for byte
    assert _concat_file(tmp_path).read_bytes()[:332] == REAL.read_bytes()[:332]


@pytest.mark.skipif(not REAL.is_file(), reason="../shared/realdata not present")
def test_real_nano_file_agrees_with_msaccucmps_parser():
    msprobe = pytest.importorskip("msprobe")
    import sys
    root = str(Path(msprobe.__file__).parent / "msaccucmp")
    if root not in sys.path:
        sys.path.insert(0, root)
    from dump_parse.nano_dump_data import NanoDumpDataHandler
    theirs = NanoDumpDataHandler(str(REAL)).parse_dump_data()
    ours = read_dump_file(REAL)
    for mine, t in zip(ours.inputs + ours.outputs, theirs.inputs + theirs.outputs):
        assert mine.shape == tuple(t.shape_dims)
        np.testing.assert_array_equal(mine.load().reshape(-1), np.frombuffer(t.data, np.float16))


def test_ge_numbering_is_mapped_onto_the_dump_proto_numbering():
    # ge::DataType FLOAT=0 FLOAT16=1 INT8=2 INT32=3 UINT8=4 ... BF16=27 -> proto 1, 2, 3, 7, 4, 27
    assert [proto_dtype(g) for g in (0, 1, 2, 3, 4, 9, 11, 12, 27)] == [
        1, 2, 3, 7, 4, 8, 12, 11, 27]


def test_unknown_ge_dtype_fails_that_tensor_only(tmp_path):
    p = tmp_path / NAME
    p.write_bytes(encode_nano(
        [dict(ge_dtype=77, shape=(4,), data=b"\0" * 4)],
        [dict(ge_dtype=0, shape=(2,), data=np.ones(2, np.float32).tobytes())]))
    op = read_dump_file(p)
    assert op.outputs[0].load().tolist() == [1.0, 1.0]
    with pytest.raises(DumpFormatError, match=r"input 0: dtype unknown\(ge::DataType 77\) "
                                              "cannot be decoded"):
        op.inputs[0].load()


def _good(tmp_path) -> bytes:
    return _concat_file(tmp_path, a_len=6, b_len=2).read_bytes()


def _patch(data: bytes, at: int, fmt: str, value) -> bytes:
    return data[:at] + struct.pack(fmt, value) + data[at + struct.calcsize(fmt):]


# offsets in the small file: 8 u64 | 12 magic version | 16 tag 4 | 20 len | 24 n | 28 input 0
@pytest.mark.parametrize("mutate,problem", [
    (lambda d: d[:-1], "truncated file: nano header and tensor sizes need"),
    (lambda d: d + b"\0", "size mismatch: nano header and tensor sizes need"),
    (lambda d: _patch(d, 24, "<I", 1 << 31), "2,147,483,648 inputs declared, the section holds "
                                             "at most 4"),
    (lambda d: _patch(d, 20, "<I", 1 << 20), "input section of 1048576 bytes runs past the header"),
    (lambda d: _patch(d, 28 + 36, "<I", 1 << 30),
     "input 0: TLV list of 1073741824 bytes runs past"),
    (lambda d: _patch(d, 28 + 44, "<I", 65 * 8), "TLV entry 0 of 520 bytes runs past its list"),
    (lambda d: _patch(d, 28 + 44, "<I", 12), "input 0: TLV entry runs past its section"),
    (lambda d: _patch(d, 28 + 48, "<Q", 1 << 63), "input 0: shape: dim 9223372036854775808 is "
                                                  "past numpy's limit"),
])
def test_hostile_nano_headers_fail_naming_the_file(tmp_path, mutate, problem):
    p = tmp_path / NAME
    p.write_bytes(mutate(_good(tmp_path)))
    with pytest.raises(DumpFormatError) as info:
        parse_dump_file(p)
    assert info.value.path == str(p) and problem in info.value.problem, info.value.problem


def test_65_dims_are_refused_before_numpy_sees_them(tmp_path):
    p = tmp_path / NAME
    p.write_bytes(encode_nano([], [dict(ge_dtype=1, shape=(1,) * 65, data=b"\0\0")]))
    with pytest.raises(DumpFormatError, match="output 0 shape: 65 dims"):
        parse_dump_file(p)


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_nano_files_fail_only_with_dump_format_error(tmp_path, data):
    good = _good(tmp_path)
    at = data.draw(st.integers(0, len(good) - 1))
    kind = data.draw(st.sampled_from(["flip", "cut", "insert", "word"]))
    if kind == "flip":
        bad = good[:at] + bytes([good[at] ^ data.draw(st.integers(1, 255))]) + good[at + 1:]
    elif kind == "cut":
        bad = good[:at]
    elif kind == "insert":
        bad = good[:at] + data.draw(st.binary(min_size=1, max_size=16)) + good[at:]
    else:
        bad = good[:at] + struct.pack("<I", data.draw(st.integers(0, 2**32 - 1))) + good[at + 4:]
    p = tmp_path / NAME
    p.write_bytes(bad)
    try:
        op = read_dump_file(p)
        for t in op.inputs + op.outputs:
            assert t.load().size == t.size
    except DumpFormatError as exc:
        assert exc.path == str(p)


def test_nano_ops_named_by_their_file_name_join_the_om_json(tmp_path):
    """A nano header holds no op name: it comes from the file name, where '/' and '.' are '_'
    (msaccucmp finds the file from the om name the same way). ``model_conv1_Conv2D`` missed
    the om json's ``model/conv1/Conv2D``: it kept the file's spelling, lost its fused names, went
    last, and was listed as not in the om json (review helper)."""
    import numpy as np

    from pytest_ascend_accuracy.dump.loader import load_dump
    from pytest_ascend_accuracy.dump.nano import encode_nano
    from pytest_ascend_accuracy.dump.om_json import OmOp, write_om_json

    leaf = tmp_path / "20240101000000" / "0" / "m" / "1" / "0"
    leaf.mkdir(parents=True)
    a = np.arange(6, dtype=np.float16)
    (leaf / "Relu.later.0.0.999").write_bytes(
        encode_nano([], [dict(ge_dtype=1, format=2, shape=[2, 3], data=a.tobytes())]))
    (leaf / "Conv2D.model_conv1_Conv2D.1.0.1000").write_bytes(encode_nano([], [dict(
        ge_dtype=1, format=2, shape=[2, 3], data=a.tobytes(), origin=("model/relu1/Relu", 0))]))
    write_om_json(tmp_path / "m.json", "m", [
        OmOp("model/conv1/Conv2D", "Conv2D", 1, ("model/conv1/Conv2D", "model/relu1/Relu"),
             (("model/relu1/Relu", 0),)),
        OmOp("later", "Relu", 2, ("later",))])
    ds = load_dump(tmp_path, om_json=tmp_path / "m.json")
    assert [op.name for op in ds.ops] == ["model/conv1/Conv2D", "later"]
    assert ds.ops[0].original_names == ("model/conv1/Conv2D", "model/relu1/Relu")
    assert "ops_not_in_om_json" not in ds.meta


def test_nano_output_original_format_decides_an_ambiguous_nc1hwc0_shape(tmp_path):
    """An NC1HWC0 output of original shape (1, 4, 4, 4) fits both NCHW and NHWC; the nano
    header's ``original_format`` (msaccucmp ``nano_dump_data.py`` OUTPUT_INFO_CONFIG_TAB) says
    NHWC (ge::Format 1), so it must be read as NHWC, not as ONNX's NCHW (formats.md §2.4)."""
    rng = np.random.default_rng(1)
    nhwc = rng.standard_normal((1, 4, 4, 4)).astype(np.float16)
    blocks = np.zeros((1, 1, 4, 4, 16), np.float16)  # N, C1, H, W, C0: channels padded to 16
    blocks[..., :4] = nhwc  # NHWC -> NC1HWC0 is the channel axis moved in place
    for fmt, expected in ((1, nhwc), (0, nhwc.transpose(0, 3, 1, 2))):
        data = encode_nano([], [dict(ge_dtype=1, format=3, original_format=fmt,
                                     shape=blocks.shape, original_shape=(1, 4, 4, 4),
                                     data=blocks.tobytes(), origin=("conv1", 0))])
        path = tmp_path / f"fmt{fmt}" / "Conv2D.conv1.1.0.1000"
        path.parent.mkdir()
        path.write_bytes(data)
        out = load_dump(path).ops[0].outputs[0]
        if fmt == 1:
            np.testing.assert_array_equal(out.load(), nhwc)
        else:  # NCHW: the blocks' channels in front of H, W
            np.testing.assert_array_equal(out.load(), blocks[..., :4].transpose(0, 1, 4, 2, 3)
                                          .reshape(1, 4, 4, 4))
        assert expected.shape == out.shape

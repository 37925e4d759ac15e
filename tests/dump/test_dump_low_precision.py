"""Dumps holding 8-bit floats and types nobody decodes (issue 11 item 4): fp8/hifloat8 load as
float32 through the reader and compare; a float4/int4 tensor becomes one compare row with the
reason while the rest of the file still compares."""
import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.ascend_bin import DumpTensor, read_dump_file, write_dump_file
from pytest_ascend_accuracy.dump.dtypes import decode_values
from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.model import DumpSet

CODES = np.arange(0, 120, dtype=np.uint8).reshape(4, 30)  # finite codes of all three types


@pytest.mark.parametrize("name,enum", [("float8_e5m2", 34), ("float8_e4m3fn", 35),
                                       ("hifloat8", 33)])
def test_byte_float_dump_loads_as_float32(tmp_path, name, enum):
    p = write_dump_file(tmp_path / "f", "op", outputs=[DumpTensor(CODES, dtype=name)])
    t = read_dump_file(p).outputs[0]
    assert (t.dtype, t.shape) == (name, (4, 30))
    values = t.load()
    assert values.dtype == np.float32
    np.testing.assert_array_equal(values, decode_values(CODES.reshape(-1), enum).reshape(4, 30))


def test_ml_dtypes_fp8_arrays_are_stored_as_their_codes(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.linspace(-3, 3, 24, dtype=np.float32).astype(ml_dtypes.float8_e4m3fn)
    p = write_dump_file(tmp_path / "f", "op", outputs=[DumpTensor(x)])
    np.testing.assert_array_equal(read_dump_file(p).outputs[0].load(), x.astype(np.float32))


def test_fp8_dump_compares_with_a_float32_golden(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    golden = np.linspace(-2, 2, 64, dtype=np.float32)
    leaf = tmp_path / "leaf"
    with AscendDumpWriter(leaf) as w:
        w.write_op("Relu", "r", outputs=[golden.astype(ml_dtypes.float8_e5m2).view(np.uint8)],
                   output_dtypes=["float8_e5m2"])
    result = compare_dumps(load_dump(leaf), DumpSet.from_arrays({"r": [golden]}))
    row = result.row("r")
    assert row.dtype == "float8_e5m2" and row.metrics.cosine > 0.99


@pytest.mark.parametrize("name", ["float4_e2m1", "int4", "float6_e3m2", "float8_e8m0"])
def test_undecodable_dtype_is_one_row_with_the_reason(tmp_path, name):
    leaf = tmp_path / "leaf"
    with AscendDumpWriter(leaf) as w:
        w.write_op("Cast", "q", outputs=[np.zeros(16, np.uint8)], output_dtypes=[name])
        w.write_op("Relu", "r", outputs=[np.ones(4, np.float16)])
    actual = load_dump(leaf)
    golden = DumpSet.from_arrays({"q": [np.zeros(16, np.float32)], "r": [np.ones(4, np.float32)]})
    result = compare_dumps(actual, golden)
    q, r = result.row("q"), result.row("r")
    assert q.metrics is None and "unreadable" in q.flags
    assert f"dtype DT_{name.upper()} cannot be decoded (msaccucmp does not decode it either)" \
        in q.reason
    assert r.metrics.cosine == pytest.approx(1.0)
    verdict = result.judge(0.99)
    assert not verdict.passed and verdict.first_failure.op_name == "q"
    assert actual.nbytes > 0  # byte counts stay defined for types numpy does not know


def test_raw_bytes_writer_refuses_values_that_are_not_bytes(tmp_path):
    from pytest_ascend_accuracy.dump.dtypes import UnsupportedDtype
    with pytest.raises(UnsupportedDtype, match="DT_INT4 values must be given as raw bytes"):
        write_dump_file(tmp_path / "f", "op", outputs=[DumpTensor(np.zeros(2, np.float32),
                                                                  dtype="int4")])


def test_uint1_is_said_to_be_bit_packed_not_refused_by_msaccucmp_too(tmp_path):
    """msaccucmp decodes DT_UINT1 (const_manager UNPACK_DTYPE: numpy.unpackbits of the bytes):
    the message claimed it did not (review helper)."""
    leaf = tmp_path / "leaf"
    with AscendDumpWriter(leaf) as w:
        w.write_op("Mask", "m", outputs=[np.zeros(2, np.uint8)], output_dtypes=["uint1"])
    with pytest.raises(Exception) as info:
        load_dump(leaf).get("m").outputs[0].load()
    assert "DT_UINT1 cannot be decoded (bit-packed, 8 values a byte; msaccucmp unpacks every " \
           "bit of the bytes, whatever the shape)" in str(info.value)

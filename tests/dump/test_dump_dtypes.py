"""Dump dtype/format enums (dump proto numbering, not ge::DataType) and bf16 conversion."""
import numpy as np
import pytest

from pytest_ascend_accuracy.dump import dtypes as dt


@pytest.mark.parametrize("enum,name", [
    (1, "float32"), (2, "float16"), (3, "int8"), (4, "uint8"), (5, "int16"), (6, "uint16"),
    (7, "int32"), (8, "int64"), (9, "uint32"), (10, "uint64"), (11, "bool"), (12, "float64"),
    (16, "complex64"), (17, "complex128"),
])
def test_enum_numpy_round_trip(enum, name):
    assert dt.storage_dtype(enum) == np.dtype(name)
    assert dt.enum_for(np.dtype(name)) == enum
    assert dt.logical_dtype_name(enum) == name


def test_msaccucmp_compatible_odd_entries():
    assert dt.storage_dtype(0) == np.dtype("int8")   # UNDEFINED read as int8
    assert dt.storage_dtype(23) == np.dtype("int64")  # RESOURCE read as int64
    assert dt.dtype_name(2) == "DT_FLOAT16"


def test_bf16_is_two_bytes_loaded_as_float32():
    assert dt.storage_dtype(27).itemsize == 2
    assert dt.logical_dtype_name(27) == "bfloat16"
    bits = np.array([0x3F80, 0xC000, 0x7F80, 0x0000, 0x7FC0], dtype=np.uint16)
    out = dt.decode_values(bits, 27)
    assert out.dtype == np.float32
    assert out[:4].tolist() == [1.0, -2.0, np.inf, 0.0]
    assert np.isnan(out[4])


def test_float32_to_bf16_rounds_to_nearest_even_and_keeps_nan():
    values = np.array([1.0, 1.00390625, 1.01171875, 3.4e38, -np.inf, np.nan], dtype=np.float32)
    bits = dt.float32_to_bf16_bits(values)
    back = dt.decode_values(bits, 27)
    # 1 + 2^-8 is a tie between 1 and 1 + 2^-7: rounds to even (1.0); 1 + 3*2^-8 rounds up
    assert back[:3].tolist() == [1.0, 1.0, 1.015625]
    assert back[3] == np.inf   # past the bf16 max it overflows, as hardware rounding does
    assert back[4] == -np.inf
    assert np.isnan(back[5])


@pytest.mark.parametrize("enum,problem", [
    (99, "unknown dtype enum 99"),
    (13, "dtype enum 13 (DT_STRING) has no numpy equivalent"),
    (28, "dtype enum 28 (DT_INT4) has no numpy equivalent"),
])
def test_unsupported_enums_name_the_number(enum, problem):
    with pytest.raises(dt.UnsupportedDtype, match=problem.replace("(", r"\(").replace(")", r"\)")):
        dt.storage_dtype(enum)


def test_writer_refuses_unknown_numpy_dtype():
    with pytest.raises(dt.UnsupportedDtype,
                       match="numpy dtype 'str32' cannot be stored in an Ascend dump"):
        dt.enum_for(np.array(["a"]).dtype)


def test_format_names_follow_output_format_enum():
    assert [dt.format_name(i) for i in (0, 1, 2, 3, 4, 29, 49, 255)] == [
        "NCHW", "NHWC", "ND", "NC1HWC0", "FRACTAL_Z", "FRACTAL_NZ", "C1HWC0", "MAX"]
    assert dt.format_id("fractal_nz") == 29
    assert dt.format_name(200) == "FORMAT_200"
    with pytest.raises(ValueError, match="unknown Ascend format name 'NOPE'"):
        dt.format_id("NOPE")

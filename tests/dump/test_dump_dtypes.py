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


# ------------------------------------------------------------------ 8-bit floats (issue 11)
CODES = np.arange(256, dtype=np.uint8)


@pytest.mark.parametrize("enum,code,value", [
    (34, 0x3C, 1.0), (34, 0x7B, 57344.0), (34, 0x01, 2.0 ** -16), (34, 0x7C, np.inf),
    (34, 0xFC, -np.inf), (35, 0x38, 1.0), (35, 0x7E, 448.0), (35, 0x01, 2.0 ** -9),
    (35, 0xC0, -2.0), (33, 0x08, 1.0), (33, 0x10, 2.0), (33, 0x18, 0.5), (33, 0x6E, 32768.0),
    (33, 0x01, 2.0 ** -22), (33, 0x6F, np.inf), (33, 0xEF, -np.inf), (33, 0x00, 0.0),
])
def test_byte_floats_decode_known_codes(enum, code, value):
    out = dt.decode_values(np.array([code], np.uint8), enum)
    assert out.dtype == np.float32 and out[0] == value


@pytest.mark.parametrize("enum,code", [(34, 0x7D), (34, 0xFF), (35, 0x7F), (35, 0xFF), (33, 0x80)])
def test_byte_floats_nan_codes(enum, code):
    assert np.isnan(dt.decode_values(np.array([code], np.uint8), enum)[0])


@pytest.mark.parametrize("enum,name", [(34, "float8_e5m2"), (35, "float8_e4m3fn")])
def test_fp8_tables_equal_ml_dtypes_on_all_256_codes(enum, name):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    expected = CODES.view(getattr(ml_dtypes, name)).astype(np.float32)
    np.testing.assert_array_equal(dt.decode_values(CODES, enum), expected)


def test_hifloat8_table_equals_en_dtypes_on_all_256_codes():
    en_dtypes = pytest.importorskip("en_dtypes")
    expected = CODES.view(en_dtypes.hifloat8).astype(np.float32)
    np.testing.assert_array_equal(dt.decode_values(CODES, 33), expected)


def test_byte_floats_agree_with_msaccucmp_except_its_documented_slips():
    """msaccucmp's scalar decoders: same values on every code but E4M3FN's NaN (it returns
    +-480), E5M2's -inf (it returns +inf) and HiF8 codes with 0/1 exponent bits and -inf."""
    conv = pytest.importorskip("msprobe.msaccucmp.conversion.dtype_conversion")
    slips = {35: {0x7F, 0xFF}, 34: {0xFC},
             33: set(range(0x08, 0x20)) | set(range(0x88, 0xA0)) | {0xEF}}
    for enum, fn in ((35, conv.float8e4m3fn_to_float32), (34, conv.float8e5m2_to_float32),
                     (33, conv.hifloat8_to_float32)):
        ours = dt.decode_values(CODES, enum)
        for c in range(256):
            if c in slips[enum]:
                continue
            theirs = np.float32(fn(c))
            assert ours[c] == theirs or (np.isnan(ours[c]) and np.isnan(theirs)), (enum, hex(c))


def test_byte_float_names_and_loaded_dtype():
    assert [dt.logical_dtype_name(e) for e in (33, 34, 35)] == [
        "hifloat8", "float8_e5m2", "float8_e4m3fn"]
    assert all(dt.loaded_dtype(e) == np.float32 for e in (33, 34, 35))
    assert dt.value_dtype("float8_e5m2") == np.float32 and dt.value_dtype("int4") == np.uint8
    assert dt.logical_dtype_name(39) == "float4_e2m1" and not dt.is_decodable(39)


@pytest.mark.parametrize("shape,problem", [
    ((1,) * 65, "65 dims (numpy allows at most 64)"),
    ((0, 1 << 63), "dim 9223372036854775808 is past numpy's limit of 2**63 - 1"),
    ((0, 1 << 62, 4), "needs more than 2**63 bytes"),
    ((-1,), "dim -1 is not a non-negative integer"),
    ((True,), "dim True is not a non-negative integer"),
])
def test_shape_problem_names_numpys_limits(shape, problem):
    assert problem in dt.shape_problem(shape, 4)


def test_shape_problem_accepts_what_numpy_accepts():
    assert dt.shape_problem((1,) * 64) == ""
    assert dt.shape_problem((0, 1 << 60)) == ""
    np.empty(0, np.int8).reshape((0, 1 << 60))  # numpy agrees

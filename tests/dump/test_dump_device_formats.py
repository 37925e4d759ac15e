"""Device layouts (NC1HWC0, FRACTAL_NZ, FRACTAL_Z) <-> logical layouts, checked element by element."""
import itertools

import numpy as np
import pytest

from pytest_ascend_accuracy.dump import device_formats as df


def test_nc1hwc0_places_channel_c_at_c1_c0():
    a = np.arange(1 * 20 * 2 * 3, dtype=np.float32).reshape(1, 20, 2, 3)
    dev = df.to_device(a, "NC1HWC0")
    assert dev.shape == (1, 2, 2, 3, 16)
    for n, c, h, w in itertools.product(range(1), range(20), range(2), range(3)):
        assert dev[n, c // 16, h, w, c % 16] == a[n, c, h, w]
    assert not dev[0, 1, :, :, 4:].any()  # channel padding is zero
    assert df.logical_shape("NC1HWC0", dev.shape, a.shape) == (1, 20, 2, 3)
    assert np.array_equal(df.to_logical(dev, "NC1HWC0", a.shape), a)
    # without an original shape the padded channels stay
    assert df.to_logical(dev, "NC1HWC0").shape == (1, 32, 2, 3)


def test_nc1hwc0_int8_uses_c0_32():
    dev = df.to_device(np.ones((1, 3, 1, 1), np.int8), "NC1HWC0")
    assert dev.shape == (1, 1, 1, 1, 32)


def test_nc1hwc0_to_nhwc_original_shape():
    a = np.random.default_rng(0).random((2, 5, 3, 4)).astype(np.float16)
    dev = df.to_device(a, "NC1HWC0")
    nhwc = a.transpose(0, 2, 3, 1)
    assert np.array_equal(df.to_logical(dev, "NC1HWC0", nhwc.shape), nhwc)


def test_fractal_nz_places_element_rc_in_fractals():
    a = np.arange(17 * 18, dtype=np.float16).reshape(17, 18)
    dev = df.to_device(a, "FRACTAL_NZ")
    assert dev.shape == (2, 2, 16, 16)
    for r, c in itertools.product(range(17), range(18)):
        assert dev[c // 16, r // 16, r % 16, c % 16] == a[r, c]
    assert np.array_equal(df.to_logical(dev, "FRACTAL_NZ", a.shape), a)


def test_fractal_z_places_weight_elements():
    a = np.arange(18 * 3 * 2 * 2, dtype=np.float32).reshape(18, 3, 2, 2)
    dev = df.to_device(a, "FRACTAL_Z")
    assert dev.shape == (1 * 2 * 2, 2, 16, 16)
    for n, c, h, w in itertools.product(range(18), range(3), range(2), range(2)):
        assert dev[(c // 16) * 4 + h * 2 + w, n // 16, n % 16, c % 16] == a[n, c, h, w]
    assert np.array_equal(df.to_logical(dev, "FRACTAL_Z", a.shape), a)
    # H and W cannot be recovered without the original shape: stays in device layout
    assert df.to_logical(dev, "FRACTAL_Z").shape == dev.shape


@pytest.mark.parametrize("fmt,shape", [
    ("NC1HWC0", (2, 19, 3, 4)), ("NC1HWC0", (3, 5)), ("NC1HWC0", (7,)), ("NC1HWC0", (0, 3, 2, 2)),
    ("FRACTAL_NZ", (2, 3, 17, 33)), ("FRACTAL_NZ", (5,)), ("FRACTAL_NZ", (0, 5)),
    ("FRACTAL_Z", (20, 35, 3, 2)), ("FRACTAL_Z", (1, 1, 1, 1)), ("ND", (2, 3)),
])
@pytest.mark.parametrize("dtype", ["float16", "float32", "int8"])
def test_round_trip(fmt, shape, dtype):
    a = (np.random.default_rng(1).random(shape) * 100).astype(dtype)
    dev = df.to_device(a, fmt)
    assert df.logical_shape(fmt, dev.shape, a.shape) == a.shape
    back = df.to_logical(dev, fmt, a.shape)
    assert back.shape == a.shape and back.dtype == a.dtype
    assert np.array_equal(back, a)


@pytest.mark.parametrize("fmt,dev,orig,problem", [
    ("NC1HWC0", (1, 2, 3, 4), (1, 3, 3, 4), "needs a 5-D shape"),
    ("NC1HWC0", (1, 1, 3, 4, 16), (1, 17, 3, 4), "does not fit original shape"),
    ("FRACTAL_NZ", (1, 16, 16), (16, 16), "at least 4 dims"),
    ("FRACTAL_NZ", (1, 1, 16, 16), (17, 16), "does not fit original shape"),
    ("FRACTAL_Z", (4, 2, 16, 16), (18, 3, 3, 3), "does not fit original shape"),
    ("FRACTAL_Z", (4, 2, 16, 16), (18, 3), "must be 4-D"),
])
def test_inconsistent_shapes_are_reported(fmt, dev, orig, problem):
    with pytest.raises(df.DeviceFormatError, match=problem):
        df.logical_shape(fmt, dev, orig)


def test_unconvertible_device_format_is_kept_as_stored():
    a = np.ones((1, 1, 2, 2, 4))
    assert df.logical_shape("FRACTAL_Z_C04", a.shape, (1, 3, 2, 2)) == a.shape
    assert df.to_logical(a, "FRACTAL_Z_C04", (1, 3, 2, 2)) is a
    with pytest.raises(df.DeviceFormatError, match="writing format FRACTAL_Z_C04 is not "):
        df.to_device(a, "FRACTAL_Z_C04")


# -- the writer's one-copy layout (issue 17) against the pad + transpose it replaced -----------
def _reference_to_device(a, fmt, c0):
    """The writer's NC1HWC0 / FRACTAL_Z layout as it was computed before issue 17: np.pad to
    whole C0 groups (and 16 filters), then transpose and ascontiguousarray. Kept as the
    reference the faster ``to_device`` must match byte for byte."""
    def pad_to(x, axis, size):
        pad = [(0, 0)] * x.ndim
        pad[axis] = (0, size - x.shape[axis])
        return np.pad(x, pad)

    if fmt == "NC1HWC0":
        if a.ndim == 2:
            a = a.reshape(a.shape[0], a.shape[1], 1, 1)
        elif a.ndim == 1:
            a = a.reshape(1, a.shape[0], 1, 1)
        n, c, h, w = a.shape
        c1 = -(-c // c0)
        a = pad_to(a, 1, c1 * c0)
        return np.ascontiguousarray(a.reshape(n, c1, c0, h, w).transpose(0, 1, 3, 4, 2))
    n, c, h, w = a.shape
    n1, c1 = -(-n // 16), -(-c // c0)
    a = pad_to(pad_to(a, 0, n1 * 16), 1, c1 * c0)
    dev = a.reshape(n1 * 16, c1, c0, h, w).transpose(1, 3, 4, 0, 2)
    return np.ascontiguousarray(dev).reshape(c1 * h * w, n1, 16, c0)


_SHAPES_4D = [(1, 16, 3, 5), (2, 40, 4, 3), (1, 8, 2, 2), (17, 33, 1, 3), (3, 1, 2, 2),
              (1, 64, 7, 7), (2, 0, 3, 3), (0, 5, 2, 2), (1, 3, 0, 4)]
#: FRACTAL_Z takes 4-D weights only; NC1HWC0 also takes 1-D and 2-D tensors (as N C 1 1)
_CASES = ([("NC1HWC0", s) for s in _SHAPES_4D + [(5,), (2, 20)]]
          + [("FRACTAL_Z", s) for s in _SHAPES_4D])


@pytest.mark.parametrize("dtype", ["float16", "float32", "int8", "uint8", "int32"])
@pytest.mark.parametrize("fmt, shape", _CASES)
def test_one_copy_layout_is_byte_identical_to_pad_and_transpose(fmt, dtype, shape):
    a = (np.arange(int(np.prod(shape))) % 251 - 120).astype(dtype).reshape(shape)
    c0 = df.default_c0(a.dtype)
    want = _reference_to_device(a, fmt, c0)
    for src in (a, np.asfortranarray(a)):  # contiguous or not, the same bytes
        got = df.to_device(src, fmt)
        assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
        assert got.tobytes() == want.tobytes()
        assert got.shape == df.device_shape(fmt, shape, a.dtype)


@pytest.mark.parametrize("hwc", [8, 16])
def test_an_nhwc_shape_with_h_w_and_c_equal_is_read_as_its_original_format_says(hwc):
    """(1, C, C, C) fits NCHW and NHWC: read as NCHW, an NHWC tensor (a TF model's) was
    compared value by value against the wrong golden elements (review helper)."""
    x = np.random.default_rng(hwc).standard_normal((1, hwc, hwc, hwc)).astype(np.float16)
    dev = df.to_device(x.transpose(0, 3, 1, 2), "NC1HWC0")  # what the device stores
    assert df.nc1hwc0_ambiguous(dev.shape, x.shape)
    assert np.array_equal(df.to_logical(dev, "NC1HWC0", x.shape, "NHWC"), x)
    assert np.array_equal(df.to_logical(dev, "NC1HWC0", x.shape),  # unknown: NCHW, as ONNX
                          x.transpose(0, 3, 1, 2).reshape(x.shape))
    assert np.array_equal(df.to_logical(dev, "NC1HWC0", x.shape, "NCHW"),
                          df.to_logical(dev, "NC1HWC0", x.shape))
    assert not df.nc1hwc0_ambiguous(dev.shape, (1, hwc, hwc, 3))

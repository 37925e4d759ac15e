"""Static AIPP applied to raw bytes: CANN's order, formulas and storage types."""
import numpy as np
import pytest

from pytest_ascend_accuracy.aipp import apply_aipp, parse_aipp_config
from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, imagenet_reference, random_rgb
from pytest_ascend_accuracy.errors import ConfigError


def _op(body: str):
    return parse_aipp_config("aipp_op {\n aipp_mode: static\n" + body + "\n}\n", "t.cfg").ops[0]


def test_rgb_normalisation_is_float16_nchw_with_device_storage():
    op = _op(" input_format: RGB888_U8\n mean_chn_0: 10\n min_chn_0: 0.3\n var_reci_chn_0: 0.1\n"
             " var_reci_chn_1: 2\n mean_chn_2: 255")
    raw = np.array([[[[20, 5, 0], [255, 0, 255]]]], dtype=np.uint8)  # N=1, H=1, W=2
    out = apply_aipp(op, raw)
    assert out.dtype == np.float16 and out.shape == (1, 3, 1, 2)
    var0 = np.float32(np.float16(0.1))
    min0 = np.float32(np.float16(0.3))
    expect0 = np.float16((np.float16(np.float32(20 - 10) - min0)).astype(np.float32) * var0)
    assert out[0, 0, 0, 0] == expect0
    assert out[0, 1, 0, 0] == 10 and out[0, 2, 0, 1] == 0 and out[0, 2, 0, 0] == -255


def test_matching_file_reproduces_the_reference_within_float16():
    images = random_rgb(2, 6, 5)
    op = parse_aipp_config(imagenet_aipp(), "t.cfg").ops[0]
    out = apply_aipp(op, images)
    for got, img in zip(out, images):
        np.testing.assert_allclose(got.astype(np.float32), imagenet_reference(img), atol=5e-3)


def test_rbuv_swap_reads_bgr_bytes():
    op = _op(" input_format: RGB888_U8\n rbuv_swap_switch: true")
    out = apply_aipp(op, np.array([[[1, 2, 3]]], dtype=np.uint8))  # one HWC image, no batch
    assert out.reshape(-1).tolist() == [3, 2, 1]


def test_xrgb_drops_x_and_ax_swap_reads_x_first():
    """CANN's "XRGB8888_U8转RGB" sets ax_swap_switch: true; without it the X byte is last
    (RGBX: tests/aipp/test_aipp_xrgb_order.py holds every documented package)."""
    raw = np.array([[[9, 1, 2, 3]]], dtype=np.uint8)
    assert apply_aipp(_op(" input_format: XRGB8888_U8"), raw).reshape(-1).tolist() == [9, 1, 2]
    swapped = apply_aipp(_op(" input_format: XRGB8888_U8\n ax_swap_switch: true"), raw)
    assert swapped.reshape(-1).tolist() == [1, 2, 3]


def test_nv12_csc_matches_the_documented_integer_formula():
    op = _op(" input_format: YUV420SP_U8\n csc_switch: true\n matrix_r0c0: 298\n matrix_r0c1: 0\n"
             " matrix_r0c2: 409\n matrix_r1c0: 298\n matrix_r1c1: -100\n matrix_r1c2: -208\n"
             " matrix_r2c0: 298\n matrix_r2c1: 516\n matrix_r2c2: 0\n input_bias_0: 16\n"
             " input_bias_1: 128\n input_bias_2: 128")
    y = np.array([[16, 100], [200, 235]], dtype=np.uint8)
    uv = np.array([[90, 200]], dtype=np.uint8)  # one U, V pair for the 2x2 block
    out = apply_aipp(op, np.concatenate([y, uv])[None])
    assert out.shape == (1, 3, 2, 2)
    yy, u, v = 100 - 16, 90 - 128, 200 - 128
    r = np.clip((298 * yy + 409 * v) >> 8, 0, 255)
    g = np.clip((298 * yy - 100 * u - 208 * v) >> 8, 0, 255)
    b = np.clip((298 * yy + 516 * u) >> 8, 0, 255)
    assert out[0, :, 0, 1].tolist() == [r, g, b]
    nv21 = apply_aipp(op.with_values({"rbuv_swap_switch": True}), np.concatenate([y, uv[:, ::-1]])[None])
    np.testing.assert_array_equal(nv21, out)


def test_yuv400_is_one_channel_and_crop_then_padding():
    op = _op(" input_format: YUV400_U8\n src_image_size_w: 4\n src_image_size_h: 3\n crop: true\n"
             " load_start_pos_w: 1\n load_start_pos_h: 1\n"
             " crop_size_w: 2\n crop_size_h: 1\n padding: true\n left_padding_size: 1\n"
             " top_padding_size: 1\n padding_value: -1\n var_reci_chn_0: 0.5")
    img = np.arange(12, dtype=np.uint8).reshape(3, 4)
    out = apply_aipp(op, img[None])
    assert out.shape == (1, 1, 2, 3)
    assert out[0, 0].tolist() == [[-1, -1, -1], [-1, 2.5, 3.0]]


def test_wrong_image_size_names_the_key():
    op = _op(" input_format: RGB888_U8\n src_image_size_w: 8\n src_image_size_h: 4")
    with pytest.raises(ConfigError, match=r"t.cfg:5: src_image_size_h: 4, but the images"):
        apply_aipp(op, np.zeros((1, 5, 8, 3), np.uint8), name="image")
    with pytest.raises(ConfigError, match="expects H x W x 3"):
        apply_aipp(op, np.zeros((1, 4, 8, 4), np.uint8))
    with pytest.raises(ConfigError, match="raw uint8"):
        apply_aipp(op, np.zeros((1, 4, 8, 3), np.float32))


def test_csc_without_a_matrix_uses_the_default_ge_fills_in_for_the_input_format():
    """GE AippOp::SetCscDefaultValue: YUV420SP_U8 gets the YUV -> BGR matrix, every other
    format RGB -> YUV (66, 129, 25 / -38, -74, 112 / 112, -94, -18, output bias 16, 128, 128).
    An RGB888 file with csc_switch and no matrix got the YUV one: 255, 255, 255 for the pixel
    (200, 100, 50) where the device gives 122, 91, 175 (review helper)."""
    from pytest_ascend_accuracy.aipp.apply import apply_aipp_image

    op = parse_aipp_config("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n"
                           " csc_switch: true\n}\n").ops[0]
    out = apply_aipp_image(op, np.array([[[200, 100, 50]]], dtype=np.uint8))
    assert out[:, 0, 0].tolist() == [122, 91, 175]
    yuv = parse_aipp_config("aipp_op {\n aipp_mode: static\n input_format: YUV420SP_U8\n"
                            " csc_switch: true\n}\n").ops[0]
    assert [yuv.get(f"matrix_r0c{c}") for c in range(3)] == [298, 516, 0]

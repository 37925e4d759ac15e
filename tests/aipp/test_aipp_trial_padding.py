"""padding_value in the mistake search (AIPP user trial): a YOLO letterbox pads gray 114 and then
divides by 255, so the file needs ``padding_value: 0.447059`` (AIPP pads after normalisation);
``padding_value: 114`` got "no correction ... makes them agree"."""
import numpy as np

from pytest_ascend_accuracy.aipp import check_preprocessing

RGB = np.random.default_rng(0).integers(0, 256, (2, 12, 16, 3), dtype=np.uint8)
LETTERBOX = """aipp_op {
    aipp_mode: static
    input_format: RGB888_U8
    src_image_size_w: 16
    src_image_size_h: 12
    padding: true
    top_padding_size: 2
    bottom_padding_size: 2
    padding_value: %s
    var_reci_chn_0: 0.00392157
    var_reci_chn_1: 0.00392157
    var_reci_chn_2: 0.00392157
}
"""


def letterbox(im):
    p = np.pad(im.astype(np.float64), ((2, 2), (0, 0), (0, 0)), constant_values=114)
    return (p / 255.0).transpose(2, 0, 1).astype(np.float32)


def test_pixel_unit_padding_value_is_corrected_to_the_normalised_one(tmp_path):
    src = tmp_path / "letterbox.cfg"
    src.write_text(LETTERBOX % "114")
    result = check_preprocessing(src, RGB, letterbox)
    assert not result.passed and result.verified
    assert [(f.key, f.old, f.new) for f in result.fixes] == [("padding_value", 114.0, 0.447059)]
    assert "AIPP pads after normalisation: 114 is the pixel value" in result.report()
    fixed = result.write_corrected(tmp_path / "letterbox.corrected.cfg")
    assert "padding_value: 0.447059\n" in (tmp_path / "letterbox.corrected.cfg").read_text()
    assert check_preprocessing(fixed, RGB, letterbox).passed


def test_padding_value_and_split_are_corrected_together(tmp_path):
    src = tmp_path / "letterbox.cfg"
    src.write_text((LETTERBOX % "0").replace("top_padding_size: 2", "top_padding_size: 3")
                   .replace("bottom_padding_size: 2", "bottom_padding_size: 1"))
    result = check_preprocessing(src, RGB, letterbox)
    assert {f.key: f.new for f in result.fixes} == {"top_padding_size": 2, "bottom_padding_size": 2,
                                                    "padding_value": 0.447059}
    assert result.verified
    assert "the reference's border holds 0.447059" in result.report()

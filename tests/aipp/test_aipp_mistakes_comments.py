"""The correction comments tell the truth (AIPP trial findings 7, 8, 9).

8: with CSC the fit absorbs the device's rounding (integer matrix, ``>> 8``) against a reference
that decodes NV12 as cv2 does, and read "min_chn_0: 0 -> 0.687  # the reference subtracts
123.687" (it subtracts 123.675; the file's 0.675 passes) and "var_reci_chn_0: 58.395 ->
0.017118  # ... reciprocal 1/std" (1/58.395 = 0.017125). 9: mean and std swapped was nine
unnamed lines. 7: a border padded before normalisation got "compare ... by hand".
Every corrected file is applied verbatim and must pass.
"""
import re

import numpy as np

from pytest_ascend_accuracy.aipp import check_preprocessing
from pytest_ascend_accuracy.aipp.samples import (IMAGENET_MEAN, IMAGENET_STD, imagenet_aipp,
                                                 random_nv12, random_rgb)

# cv2.cvtColor(nv12, cv2.COLOR_YUV2RGB_NV12) in numpy (OpenCV's color_yuv: BT.601 narrow range
# in 20-bit fixed point, rounded to nearest); checked equal to cv2 4.x/5.x on random frames
_CY, _CUB, _CUG, _CVG, _CVR, _SHIFT = 1220542, 2116026, -409993, -852492, 1673527, 20


def cv2_nv12_to_rgb(nv12: np.ndarray) -> np.ndarray:
    h = nv12.shape[0] * 2 // 3
    y = nv12[:h].astype(np.int64)
    uv = nv12[h:].reshape(h // 2, -1, 2).repeat(2, 0).repeat(2, 1).astype(np.int64)
    u, v = uv[..., 0] - 128, uv[..., 1] - 128
    yy = np.maximum(0, y - 16) * _CY + (1 << (_SHIFT - 1))
    rgb = np.stack([yy + _CVR * v, yy + _CVG * v + _CUG * u, yy + _CUB * u], -1) >> _SHIFT
    return np.clip(rgb, 0, 255).astype(np.uint8)


def cv2_reference(nv12: np.ndarray) -> np.ndarray:
    rgb = cv2_nv12_to_rgb(nv12).astype(np.float64)
    return ((rgb - IMAGENET_MEAN) / IMAGENET_STD).transpose(2, 0, 1).astype(np.float32)


NV12 = random_nv12(2, 16, 24, seed=5)
GOOD_NV12 = imagenet_aipp("YUV420SP_U8", csc=True)


def _check(tmp_path, text, images, reference, name="aipp.cfg"):
    path = tmp_path / name
    path.write_text(text)
    return check_preprocessing(path, images, reference)


def _applied_passes(result, tmp_path, images, reference):
    """The corrected file, written and read back verbatim, passes."""
    written = result.write_corrected(tmp_path / "corrected.cfg")
    return check_preprocessing(written, images, reference).passed


def test_the_correct_nv12_file_passes_a_cv2_reference(tmp_path):
    assert _check(tmp_path, GOOD_NV12, NV12, cv2_reference).passed


def test_left_out_fractions_get_the_references_own_constants_not_the_fit(tmp_path):
    text = re.sub(r"min_chn_(\d): [\d.]+", r"min_chn_\1: 0", GOOD_NV12)
    result = _check(tmp_path, text, NV12, cv2_reference)
    assert not result.passed and result.verified
    assert {f.key: f.new for f in result.fixes} == {"min_chn_0": 0.675, "min_chn_1": 0.28,
                                                    "min_chn_2": 0.53}
    why = result.fixes[0].why
    assert why.startswith("the reference subtracts 123.675 = 0.485 * 255 (the ImageNet mean of R)")
    fit = re.search(r"the fit reads (\d+\.\d+), absorbing the device's integer CSC "
                    r"\(>> 8 truncation\)", why)
    assert fit and float(fit.group(1)) != 123.675  # said apart from the reference's number
    assert _applied_passes(result, tmp_path, NV12, cv2_reference)


def test_std_for_its_reciprocal_gets_one_over_the_std_not_the_fit(tmp_path):
    text = GOOD_NV12
    for std in IMAGENET_STD:
        text = text.replace(f"{1.0 / std:.7f}", f"{std}")
    result = _check(tmp_path, text, NV12, cv2_reference)
    assert result.verified
    assert {f.key: f.new for f in result.fixes} == {
        "var_reci_chn_0": 0.017125, "var_reci_chn_1": 0.017507, "var_reci_chn_2": 0.017429}
    why = result.fixes[0].why
    assert why.startswith("58.395 is the std; var_reci_chn is its reciprocal 1/std; the fit reads")
    assert _applied_passes(result, tmp_path, NV12, cv2_reference)


def test_a_field_whose_own_value_passes_is_not_proposed(tmp_path):
    result = _check(tmp_path, GOOD_NV12.replace("mean_chn_0: 123", "mean_chn_0: 125"), NV12,
                    cv2_reference)
    assert [(f.key, f.old, f.new) for f in result.fixes] == [("mean_chn_0", 125, 123)]
    # the whole offset zeroed: mean_chn comes back, the file's min_chn_0 0.675 stays
    result = _check(tmp_path, GOOD_NV12.replace("mean_chn_0: 123", "mean_chn_0: 0"), NV12,
                    cv2_reference)
    assert [(f.key, f.new) for f in result.fixes] == [("mean_chn_0", 123)]
    assert _applied_passes(result, tmp_path, NV12, cv2_reference)


def test_an_offset_no_constant_explains_is_said_to_be_fitted(tmp_path):
    mean = np.array([131.4137, 116.28, 103.53])

    def odd_reference(nv12):
        rgb = cv2_nv12_to_rgb(nv12).astype(np.float64)
        return ((rgb - mean) / IMAGENET_STD).transpose(2, 0, 1).astype(np.float32)

    result = _check(tmp_path, GOOD_NV12, NV12, odd_reference)
    assert result.verified, result.report()
    fixes = {f.key: f for f in result.fixes}
    assert set(fixes) <= {"mean_chn_0", "min_chn_0"}
    why = fixes["mean_chn_0"].why  # the fit rounded where that verifies, said as 'about'
    assert re.match(r"the reference subtracts about 131\.4 from channel 0; the fit reads "
                    r"131\.4\d\d, absorbing", why), why
    assert _applied_passes(result, tmp_path, NV12, odd_reference)


RGB = random_rgb(2, 12, 16, seed=7)


def _imagenet(img):
    return ((img.astype(np.float64) - IMAGENET_MEAN) / IMAGENET_STD).transpose(2, 0, 1).astype(
        np.float32)


def _swapped(text, digits):
    for c, (mean, std) in enumerate(zip(IMAGENET_MEAN, IMAGENET_STD)):
        text = (text.replace(f"mean_chn_{c}: {int(mean)}", f"mean_chn_{c}: {int(std)}")
                .replace(f"min_chn_{c}: {round(mean - int(mean), 3)}",
                         f"min_chn_{c}: {round(std - int(std), 3)}")
                .replace(f"var_reci_chn_{c}: {1.0 / std:.7f}",
                         f"var_reci_chn_{c}: {1.0 / mean:.{digits}g}"))
    return text


def test_mean_and_std_swapped_is_named_in_one_line_before_the_fields(tmp_path):
    text = _swapped(imagenet_aipp(), 3)  # var_reci 0.00809, 0.0086, 0.00966: 1/them ~ the means
    assert "mean_chn_0: 58" in text and "var_reci_chn_1: 0.0086\n" in text
    result = _check(tmp_path, text, RGB, _imagenet)
    assert result.verified
    assert {f.key: f.new for f in result.fixes} == {
        "mean_chn_0": 123, "min_chn_0": 0.675, "var_reci_chn_0": 0.017125,
        "mean_chn_1": 116, "min_chn_1": 0.28, "var_reci_chn_1": 0.017507,
        "mean_chn_2": 103, "min_chn_2": 0.53, "var_reci_chn_2": 0.017429}
    lines = result.report().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("AIPP fields to correct"))
    assert lines[at - 1] == (
        "mean and std are swapped: the file subtracts 58.395, 57.12, 57.375 (the std) and "
        "multiplies by 1/123.675, 1/116.28, 1/103.53 (1/mean); the reference subtracts the mean "
        "123.675, 116.28, 103.53 and multiplies by 1/std (1/58.395, 1/57.12, 1/57.375)")
    assert all("mean and std swapped" in f.why for f in result.fixes)
    assert _applied_passes(result, tmp_path, RGB, _imagenet)


def test_a_single_wrong_mean_is_no_swap(tmp_path):
    result = _check(tmp_path, imagenet_aipp().replace("mean_chn_0: 123", "mean_chn_0: 58"), RGB,
                    _imagenet)
    assert result.verified and "swapped" not in result.report()


def test_a_mean_equal_to_the_std_shows_no_swap(tmp_path):
    half = "\n".join(["aipp_op {", "    aipp_mode: static", "    input_format: RGB888_U8",
                      "    rbuv_swap_switch: true"]
                     + [f"    mean_chn_{c}: 127\n    min_chn_{c}: 0.5\n"
                        f"    var_reci_chn_{c}: 0.00784314" for c in range(3)] + ["}", ""])

    def minus_one_to_one(img):  # (x / 255 - 0.5) / 0.5: mean and std both 127.5
        return ((img.astype(np.float64) - 127.5) / 127.5).transpose(2, 0, 1).astype(np.float32)

    result = _check(tmp_path, half, RGB, minus_one_to_one)
    assert [(f.key, f.new) for f in result.fixes] == [("rbuv_swap_switch", False)]
    assert "swapped" not in result.report()


def test_a_correction_that_does_not_verify_says_its_csc_values_are_fitted():
    from pytest_ascend_accuracy.aipp import parse_aipp_config
    from pytest_ascend_accuracy.aipp.norm_values import fitted_reasons

    op = parse_aipp_config(GOOD_NV12, "aipp.cfg").ops[0]
    reasons = fitted_reasons(op, {"min_chn_0": 0.687, "var_reci_chn_1": 0.017514},
                             [(1 / 58.395, -123.687 / 58.395), (0.017514, -116.28 * 0.017514)])
    assert reasons["min_chn_0"][1].startswith(
        "fitted from the images, not the reference's number: channel 0's offset reads 123.687 "
        "through the device's integer CSC (>> 8 truncation)")
    assert "channel 1's scale reads 0.017514" in reasons["var_reci_chn_1"][1]
    rgb = parse_aipp_config(imagenet_aipp(), "aipp.cfg").ops[0]
    assert fitted_reasons(rgb, {"min_chn_0": 0.687}, [(1 / 58.395, -123.687 / 58.395)]) == {}


PAD_CFG = imagenet_aipp(src_hw=(12, 16), extra="    padding: true\n    top_padding_size: 2\n"
                              "    bottom_padding_size: 2\n    left_padding_size: 2\n"
                              "    right_padding_size: 2\n    padding_value: 0")


def _pad_then_normalise(img):  # cv2.copyMakeBorder(BORDER_CONSTANT, 0), then normalise
    return _imagenet(np.pad(img, ((2, 2), (2, 2), (0, 0))))


def _normalise_then_pad(img):  # what AIPP does
    return np.pad(_imagenet(img), ((0, 0), (2, 2), (2, 2)))


def test_a_border_padded_before_normalisation_is_explained(tmp_path):
    result = _check(tmp_path, PAD_CFG, RGB, _pad_then_normalise)
    assert not result.passed and not result.fixes and result.corrected_text() is None
    report = result.report()
    assert "compare the reference pre-processing with the file by hand" not in report
    assert ("the reference's 2/2/2/2-pixel border (top/bottom/left/right) holds one value per "
            "channel (-2.118, -2.036, -1.804): pixel value 0 padded before normalisation, "
            "(0 - mean_chn - min_chn) * var_reci_chn per channel; everything inside the border "
            "agrees. AIPP pads after normalisation with one padding_value for every channel, so "
            "no padding_value gives these: pad after normalising in the reference (the border "
            "then holds padding_value, 0 in this file), as AIPP does; or, if the network needs "
            "this border, pad the raw images with 0 before AIPP (src_image_size_w: 20, "
            "src_image_size_h: 16) and set padding: false") in report


def test_both_ways_the_border_note_offers_pass_as_written(tmp_path):
    # 1: the reference pads after normalising, the file unchanged
    assert _check(tmp_path, PAD_CFG, RGB, _normalise_then_pad).passed
    # 2: the raw images padded with 0 before AIPP, the sizes and padding: false as printed
    padded = np.pad(RGB, ((0, 0), (2, 2), (2, 2), (0, 0)))
    text = imagenet_aipp(src_hw=(16, 20), extra="    padding: false")
    assert _check(tmp_path, text, padded, _imagenet, "prepadded.cfg").passed


def test_a_border_with_one_value_is_still_a_padding_value_fix(tmp_path):
    def gray_border(img):
        return np.pad(_imagenet(img), ((0, 0), (2, 2), (2, 2)), constant_values=0.5)

    result = _check(tmp_path, PAD_CFG, RGB, gray_border)
    assert [(f.key, f.new) for f in result.fixes] == [("padding_value", 0.5)]
    assert "one value per channel" not in result.report()

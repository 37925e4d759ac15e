"""check_preprocessing: passes a matching file; names each classic mistake with its corrected value."""
import pytest

from pytest_ascend_accuracy.aipp import check_preprocessing, parse_aipp_config
from pytest_ascend_accuracy.aipp.samples import (
    IMAGENET_STD, imagenet_aipp, imagenet_reference, nv12_reference, random_nv12, random_rgb)

RGB = random_rgb(3, 12, 16, seed=1)
NV12 = random_nv12(2, 16, 24, seed=2)
CROP = (2, 4, 12, 16)  # y, x, h, w


def _check(text, images, reference):
    return check_preprocessing(parse_aipp_config(text, "aipp.cfg"), images, reference)


def _fixes(result):
    return {f.key: (f.old, f.new) for f in result.fixes}


def test_matching_rgb_file_passes():
    result = _check(imagenet_aipp(src_hw=(12, 16)), RGB, imagenet_reference)
    assert result.passed and not result.fixes
    assert "3 of 3 image(s) agree" in result.report()


def test_matching_nv12_file_with_csc_and_crop_passes():
    result = _check(imagenet_aipp("YUV420SP_U8", csc=True, crop=CROP, src_hw=(16, 24)), NV12,
                    lambda im: nv12_reference(im, crop=CROP))
    assert result.passed, result.report()


def test_rb_swapped_names_rbuv_swap_switch():
    text = imagenet_aipp(extra="    rbuv_swap_switch: true")
    result = _check(text, RGB, imagenet_reference)
    assert not result.passed and result.verified
    assert _fixes(result) == {"rbuv_swap_switch": (True, False)}
    assert "rbuv_swap_switch: true -> false" in result.report()


def test_std_instead_of_reciprocal_fails_although_cosine_passes():
    text = imagenet_aipp()
    for std in IMAGENET_STD:
        text = text.replace(f"{1.0 / std:.7f}", f"{std}")
    result = _check(text, RGB, imagenet_reference)
    assert not result.passed
    assert min(a.cosine for a in result.agreements) > 0.999  # cosine alone would pass it
    assert min(a.scale for a in result.agreements) > 1000
    fixes = _fixes(result)
    assert fixes["var_reci_chn_0"] == (58.395, 0.017125)
    assert set(fixes) == {"var_reci_chn_0", "var_reci_chn_1", "var_reci_chn_2"}
    report = result.report()
    assert "var_reci_chn_0: 58.395 -> 0.017125" in report and "reciprocal" in report


def test_one_over_variance_is_named():
    text = imagenet_aipp().replace(f"{1.0 / 57.12:.7f}", f"{1.0 / 57.12 ** 2:.9f}")
    result = _check(text, RGB, imagenet_reference)
    assert list(_fixes(result)) == ["var_reci_chn_1"]
    assert _fixes(result)["var_reci_chn_1"][1] == pytest.approx(1 / 57.12, rel=1e-4)
    assert "1/std^2" in result.report()


def test_means_zeroed_names_each_mean():
    text = imagenet_aipp()
    for c, m in enumerate((123, 116, 103)):
        text = text.replace(f"mean_chn_{c}: {m}", f"mean_chn_{c}: 0")
    result = _check(text, RGB, imagenet_reference)
    assert _fixes(result) == {"mean_chn_0": (0, 123), "mean_chn_1": (0, 116), "mean_chn_2": (0, 103)}
    assert result.verified


def test_means_in_bgr_order_are_a_channel_order_mix_up():
    text = imagenet_aipp().replace("mean_chn_0: 123", "mean_chn_0: 103").replace(
        "mean_chn_2: 103", "mean_chn_2: 123")
    result = _check(text, RGB, imagenet_reference)
    assert _fixes(result) == {"mean_chn_0": (103, 123), "mean_chn_2": (123, 103)}
    assert "channel order mix-up" in result.report()


def test_crop_offset_wrong_names_load_start_pos():
    ref = lambda im: nv12_reference(im, crop=CROP)  # noqa: E731
    text = imagenet_aipp("YUV420SP_U8", csc=True, crop=(2, 8, 12, 16), src_hw=(16, 24))
    result = _check(text, NV12, ref)
    assert _fixes(result) == {"load_start_pos_w": (8, 4)}
    assert result.verified


def test_missing_crop_is_found_from_the_reference_shape():
    ref = lambda im: imagenet_reference(im, crop=(3, 5, 8, 8))  # noqa: E731
    result = _check(imagenet_aipp(), RGB, ref)
    assert _fixes(result) == {"crop": (False, True), "crop_size_h": (0, 8), "crop_size_w": (0, 8),
                              "load_start_pos_h": (0, 3), "load_start_pos_w": (0, 5),
                              "src_image_size_h": (0, 12), "src_image_size_w": (0, 16)}
    # the corrected file, as written, is one ATC takes (a crop needs src_image_size) and passes
    fixed = parse_aipp_config(result.corrected_text(), "aipp.cfg")
    assert check_preprocessing(fixed, RGB, ref).passed


def test_yuv420sp_with_bt709_matrix_names_the_bt601_values():
    text = imagenet_aipp("YUV420SP_U8", csc=True)
    for old, new in (("r0c2: 409", "r0c2: 459"), ("r1c1: -100", "r1c1: -55"), ("r1c2: -208", "r1c2: -136"),
                     ("r2c1: 516", "r2c1: 541")):
        text = text.replace(old, new)
    result = _check(text, NV12, nv12_reference)
    assert not result.passed
    assert _fixes(result) == {"matrix_r0c2": (459, 409), "matrix_r1c1": (-55, -100),
                              "matrix_r1c2": (-136, -208), "matrix_r2c1": (541, 516)}
    assert "BT.601 narrow range" in result.report()


def test_corrected_file_is_written_and_then_passes(tmp_path):
    text = imagenet_aipp(extra="    rbuv_swap_switch: true  # camera sends BGR?").replace(
        f"{1.0 / 58.395:.7f}", "58.395")
    src = tmp_path / "aipp.cfg"
    src.write_text(text)
    result = check_preprocessing(src, RGB, imagenet_reference)
    out = result.write_corrected(tmp_path / "aipp.corrected.cfg")
    fixed = (tmp_path / "aipp.corrected.cfg").read_text()
    assert "# camera sends BGR?" in fixed and "rbuv_swap_switch: false" in fixed
    assert check_preprocessing(out, RGB, imagenet_reference).passed
    assert src.read_text() == text  # the original is never touched


def test_no_correction_in_the_search_space_says_so():
    result = _check(imagenet_aipp(), RGB, lambda im: -imagenet_reference(im)[:, ::-1])  # flipped image
    assert not result.passed and not result.verified
    assert "still differ" in result.report() or "no correction" in result.report()


def test_multi_input_file_checks_the_requested_rank():
    text = imagenet_aipp(rank=0) + imagenet_aipp("YUV420SP_U8", csc=True, rank=1)
    cfg = parse_aipp_config(text, "aipp.cfg")
    assert check_preprocessing(cfg, NV12, nv12_reference, rank=1).passed
    with pytest.raises(Exception, match="no aipp_op block for input 2"):
        check_preprocessing(cfg, NV12, nv12_reference, rank=2)

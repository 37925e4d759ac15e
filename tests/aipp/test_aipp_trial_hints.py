"""Explanations of the AIPP user trial: a corrected mean or scale of 0 (or 1) is not 'the value
of channel 3 of the file' when channel 3 is a left-out key's default, nor 'channel 1' on a
one-channel YUV400 file; a reference that subtracts no mean is said to do so."""
import numpy as np

from pytest_ascend_accuracy.aipp import check_preprocessing, parse_aipp_config
from pytest_ascend_accuracy.aipp.hints import why_changed
from pytest_ascend_accuracy.aipp.samples import IMAGENET_STD, imagenet_aipp, random_rgb

RGB = random_rgb(2, 16, 16, seed=3)
GRAY = np.random.default_rng(4).integers(0, 256, (2, 16, 16), dtype=np.uint8)


def _whys(result):
    return {f.key: f.why for f in result.fixes}


def test_no_mean_in_the_reference_is_not_a_channel_order_mix_up():
    std = np.array(IMAGENET_STD)
    result = check_preprocessing(parse_aipp_config(imagenet_aipp(), "a.cfg"), RGB,
                                 lambda im: (im / std).transpose(2, 0, 1).astype(np.float32))
    whys = _whys(result)
    assert result.verified and set(whys) == {f"{k}_{c}" for k in ("mean_chn", "min_chn")
                                             for c in range(3)}
    assert "mix-up" not in result.report()
    assert whys["mean_chn_0"] == ("the reference subtracts no mean from channel 0; the file "
                                  "subtracts 123.675 there")


def test_yuv400_file_has_one_channel_to_mix_up():
    text = ("aipp_op {\n aipp_mode: static\n input_format: YUV400_U8\n mean_chn_0: 127\n"
            " min_chn_0: 0.5\n var_reci_chn_0: 0.00784314\n}\n")
    result = check_preprocessing(parse_aipp_config(text, "g.cfg"), GRAY,
                                 lambda g: g[None].astype(np.float32) / 255.0)
    whys = _whys(result)
    assert result.verified and "channel 1" not in result.report()
    assert whys["mean_chn_0"].startswith("the reference subtracts no mean from channel 0")


def test_a_left_out_key_default_is_no_channel_of_the_file():
    op = parse_aipp_config("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n"
                           " mean_chn_0: 5\n mean_chn_1: 7\n var_reci_chn_0: 0.5\n}\n",
                           "a.cfg").ops[0]
    # var_reci_chn_1/_2 are left out (default 1.0): 1.0 is no other channel's value
    assert "mix-up" not in why_changed(op, "var_reci_chn_0", 1.0, {"var_reci_chn_0": 1.0}, "")
    # mean_chn_2 is left out (default 0), so 0 is no other channel's mean; 7 is channel 1's
    why = why_changed(op, "mean_chn_0", 0, {"mean_chn_0": 0, "min_chn_0": 0.5}, "")
    assert why == "the reference subtracts 0.5 from channel 0"
    assert "channel 1 of the file" in why_changed(op, "mean_chn_0", 7, {"mean_chn_0": 7}, "")

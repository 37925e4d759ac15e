"""A systematic offset under CSC (AIPP user trial): the element-wise allowance for the ``>> 8``
truncation (``CSC_LEVELS`` = 3 levels) let ``mean_chn_0: 125`` (for 123.675) and a file without
its ``min_chn`` fractions pass, the latter scoring better than the correct file. Each channel's
mean error less the truncation's known part must now stay near zero."""
import re

import numpy as np

from pytest_ascend_accuracy.aipp import check_preprocessing, parse_aipp_config
from pytest_ascend_accuracy.aipp.apply import crop, csc, decode
from pytest_ascend_accuracy.aipp.samples import (IMAGENET_MEAN, IMAGENET_STD, imagenet_aipp,
                                                 nv12_reference, random_nv12)

NV12 = random_nv12(2, 16, 24, seed=11)
GOOD = imagenet_aipp("YUV420SP_U8", csc=True)  # BT.601 narrow, mean 123 + min 0.675, ...


def _check(text, reference=nv12_reference):
    return check_preprocessing(parse_aipp_config(text, "csc.cfg"), NV12, reference)


def test_the_correct_bt601_file_passes():
    result = _check(GOOD)
    assert result.passed
    assert all(abs(a.offset_levels) < 0.1 for a in result.agreements)


def test_a_mean_two_levels_off_fails_and_is_named(tmp_path):
    result = _check(GOOD.replace("mean_chn_0: 123", "mean_chn_0: 125"))
    assert not result.passed
    assert all(a.worst_excess <= 1 for a in result.agreements)  # within the element-wise allowance
    assert "channel 0 is offset by -2 pixel levels" in result.report()
    fixes = [(f.key, f.old, f.new) for f in result.fixes]
    assert result.verified and fixes == [("mean_chn_0", 125, 123)]


def test_every_min_chn_left_out_fails_and_the_corrected_file_passes(tmp_path):
    src = tmp_path / "nomin.cfg"
    src.write_text(re.sub(r"    min_chn_\d: [\d.]+\n", "", GOOD))
    result = check_preprocessing(src, NV12, nv12_reference)
    assert not result.passed and result.verified
    fixes = {f.key: f.new for f in result.fixes}
    assert set(fixes) >= {"min_chn_0", "min_chn_2"}
    assert abs(fixes["min_chn_0"] - 0.675) < 0.02 and abs(fixes["min_chn_2"] - 0.53) < 0.02
    assert check_preprocessing(result.write_corrected(tmp_path / "fixed.cfg"), NV12,
                               nv12_reference).passed


def test_a_reference_truncating_as_the_device_does_still_passes():
    op = parse_aipp_config(GOOD, "csc.cfg").ops[0]

    def device_like(img):  # integer CSC as the device computes it, then float normalisation
        rgb = csc(op, crop(op, decode(op, img))).astype(np.float64)
        return ((rgb - IMAGENET_MEAN) / IMAGENET_STD).transpose(2, 0, 1).astype(np.float32)

    assert _check(GOOD, device_like).passed
    result = _check(re.sub(r"    min_chn_\d: [\d.]+\n", "", GOOD), device_like)
    assert not result.passed and "channel 0 is offset by +0.67" in result.report()

"""Files the AIPP operator refuses at conversion are refused when read (audit H105, finding 3).

ascend-opp ``impl/aipp_comm.py`` (``check_aipp_static_config``) and the ATC guide's template
(mirror-cann/ge docs/zh/user_guides/atc_tools/AIPP/config_file_template.md): ``mean_chn`` and
``min_chn`` 0..255 for U8 input, padding sizes 0..32, a crop size of 0 only without padding,
crop or padding only with ``src_image_size``. Each refusal names the file, the line and the
key; each fix it gives works pasted into the file. The mistake search never advises a
``mean_chn`` / ``min_chn`` outside that range (a negative fitted offset floored below 0).
"""
import re

import numpy as np
import pytest

from pytest_ascend_accuracy.aipp import check_preprocessing, parse_aipp_config
from pytest_ascend_accuracy.aipp.samples import (IMAGENET_STD, imagenet_aipp, imagenet_reference,
                                                 random_rgb)
from pytest_ascend_accuracy.errors import ConfigError

HEAD = "aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n"


def _refused(text):
    with pytest.raises(ConfigError) as info:
        parse_aipp_config(text, "cam.cfg")
    return str(info.value)


def _line(text, start):
    return [k for k, line in enumerate(text.splitlines(), 1) if line.strip().startswith(start)][0]


def _write(text, fields):
    """``text`` with each ``key: value`` of ``fields`` replacing its line, or added."""
    for key, value in fields:
        if re.search(rf"(?m)^\s*{key}\s*:", text):
            text = re.sub(rf"(?m)^(\s*){key}\s*:.*$", rf"\g<1>{key}: {value}", text)
        else:
            text = text.replace("}", f" {key}: {value}\n}}")
    return text


@pytest.mark.parametrize("body, key", [
    (" mean_chn_0: 300\n", "mean_chn_0"),
    (" mean_chn_1: -20\n", "mean_chn_1"),
    (" min_chn_2: -1.5\n", "min_chn_2"),
    (" mean_chn_0: 123\n min_chn_0: -0.325\n", "min_chn_0"),
    (" mean_chn_2: 200\n min_chn_2: 256\n", "min_chn_2"),
])
def test_mean_and_min_outside_0_255_are_refused_with_pasteable_fields(body, key):
    text = HEAD + body + "}\n"
    msg = _refused(text)
    assert msg.startswith(f"cam.cfg:{_line(text, key)}: {key}: "), msg
    assert "outside 0..255" in msg and "aipp_comm.py" in msg, msg
    c = int(key[-1])
    total = sum(float(v) for k, v in re.findall(r"(mean_chn|min_chn)_\d: (\S+)", body))
    written = re.search(rf"write (mean_chn_{c}): (\d+) and (min_chn_{c}): (\S+)", msg)
    if total < 0:
        assert written is None and f"no mean_chn_{c} / min_chn_{c} pair subtracts" in msg, msg
        return
    fixed = parse_aipp_config(_write(text, [written.group(1, 2), written.group(3, 4)]), "c.cfg")
    op = fixed.ops[0]
    assert op.get(f"mean_chn_{c}") + op.get(f"min_chn_{c}") == pytest.approx(total)


def test_a_fractional_mean_over_255_is_split_as_atc_takes_it():
    msg = _refused(HEAD + " mean_chn_0: 300.5\n}\n")
    assert "put 255 in mean_chn_0 and 45.5 in min_chn_0" in msg, msg
    parse_aipp_config(HEAD + " mean_chn_0: 255\n min_chn_0: 45.5\n}\n", "cam.cfg")


def _padded(sizes=(8, 8, 8, 8), src=True, crop=None):
    lines = [" aipp_mode: static", " input_format: RGB888_U8"]
    if src:
        lines += [" src_image_size_w: 160", " src_image_size_h: 160"]
    if crop is not None:
        lines += [" crop: true", " load_start_pos_w: 8", " load_start_pos_h: 8"] + crop
    lines += [" padding: true"] + [f" {side}_padding_size: {n}" for side, n in
                                   zip(("left", "right", "top", "bottom"), sizes)]
    return "aipp_op {\n" + "\n".join(lines) + "\n}\n"


def test_padding_over_32_is_refused_naming_its_line():
    text = _padded((48, 48, 48, 48))
    msg = _refused(text)
    assert msg.startswith(f"cam.cfg:{_line(text, 'left_padding_size')}: left_padding_size: 48 "
                          f"is over 32"), msg
    parse_aipp_config(_padded((32, 32, 32, 32)), "cam.cfg")


@pytest.mark.parametrize("crop, where", [([], "crop"),
                                         ([" crop_size_w: 0", " crop_size_h: 0"], "crop_size_w")])
def test_a_crop_size_of_0_with_padding_is_refused(crop, where):
    text = _padded(crop=crop)
    msg = _refused(text)
    line = _line(text, "crop:" if where == "crop" else where)
    assert msg.startswith(f"cam.cfg:{line}: {where}: "), msg
    assert "while padding is on" in msg and "should be not enable" in msg, msg
    # the fix it names: the window before padding (a 160x160 model input less 8 + 8)
    fixed = _write(text, [("crop_size_w", 144), ("crop_size_h", 144)])
    assert parse_aipp_config(fixed, "cam.cfg").ops[0].get("crop_size_w") == 144


@pytest.mark.parametrize("switch", ["crop", "padding"])
def test_crop_or_padding_without_src_image_size_is_refused(switch):
    crop_lines = [" crop_size_w: 144", " crop_size_h: 144"]
    text = (_padded(src=False, crop=crop_lines) if switch == "crop" else _padded(src=False))
    msg = _refused(text)
    line = _line(text, "crop:") if switch == "crop" else _line(text, "padding:")
    assert msg.startswith(f"cam.cfg:{line}: {switch}: src_image_size_w is left out, but "), msg
    assert "should be greater than 0" in msg, msg
    zero = text.replace(" input_format: RGB888_U8\n",
                        " input_format: RGB888_U8\n src_image_size_w: 0\n")
    assert _refused(zero).startswith("cam.cfg:4: src_image_size_w: 0, but "), zero  # its line
    fixed = _write(text, [("src_image_size_w", 160), ("src_image_size_h", 160)])
    parse_aipp_config(fixed, "cam.cfg")


def _shifted_reference(offset):
    """ImageNet's scale with channel 0's mean ``offset`` (the reference subtracts it)."""
    def reference(image):
        out = imagenet_reference(image)
        out[0] = (image[..., 0].astype(np.float64) - offset) / (IMAGENET_STD[0] * 255)
        return out.astype(np.float32)
    return reference


def test_the_search_never_advises_a_negative_mean_and_says_no_file_holds_it():
    """A reference adding 20 to channel 0 before scaling: no file subtracts -20 (mean_chn and
    min_chn are 0..255); the old search advised ``mean_chn_0: -20``, which ATC refuses."""
    images = random_rgb(2, 8, 8, seed=3)
    result = check_preprocessing(parse_aipp_config(imagenet_aipp(), "aipp.cfg"), images,
                                 _shifted_reference(-20.0))
    assert not result.passed
    for fix in result.fixes:
        if fix.key.startswith(("mean_chn_", "min_chn_")):
            assert 0 <= fix.new <= 255, result.report()
    assert "no mean_chn_0 / min_chn_0 pair subtracts -20" in result.report(), result.report()


def test_an_offset_over_255_is_advised_as_mean_255_plus_min_and_passes_pasted():
    images = random_rgb(2, 8, 8, seed=4)
    config = parse_aipp_config(imagenet_aipp(), "aipp.cfg")
    result = check_preprocessing(config, images, _shifted_reference(300.0))
    fixes = {f.key: f.new for f in result.fixes}
    assert fixes.get("mean_chn_0") == 255 and fixes.get("min_chn_0") == pytest.approx(45), fixes
    corrected = parse_aipp_config(result.corrected_text(), "aipp.cfg")
    assert check_preprocessing(corrected, images, _shifted_reference(300.0)).passed


def test_a_min_past_float16_is_refused_by_its_operator_range():
    """min_chn_0: 70000 read "outside float16's range" (a check run before the range's), where
    the operator's 0..255 says more: what the pair can subtract."""
    msg = _refused(HEAD + " min_chn_0: 70000\n}\n")
    assert "outside 0..255" in msg and "no mean_chn_0 / min_chn_0 pair subtracts 70000" in msg

"""YUV420SP_U8 crops: CANN requires even offsets, not even sizes (audit H105, finding 4).

The current ATC guide, "Crop/Padding配置说明" (mirror-cann/ge
docs/zh/user_guides/atc_tools/AIPP/crop_padding_config.md): "对于YUV420SP_U8图片类型,
load_start_pos_w、load_start_pos_h参数必须配置为偶数" (the offsets only); its example crops
50 x 60 at (10, 20) of a 320 x 240 NV12 image and pads 20/15 and 20/15 (an odd total). The
fixture below has that structure, built here, with an odd crop width.
"""
import numpy as np
import pytest

from pytest_ascend_accuracy.aipp import parse_aipp_config
from pytest_ascend_accuracy.aipp.apply import apply_aipp_image
from pytest_ascend_accuracy.errors import ConfigError


def _nv12_block(pos_w=10, pos_h=20, size_w=50, size_h=60):
    lines = ["aipp_op {", "    aipp_mode: static", "    input_format: YUV420SP_U8", "",
             "    src_image_size_w: 320", "    src_image_size_h: 240", "", "    crop: true",
             f"    load_start_pos_w: {pos_w}", f"    load_start_pos_h: {pos_h}",
             f"    crop_size_w: {size_w}", f"    crop_size_h: {size_h}", "", "    padding: true",
             "    left_padding_size: 20", "    right_padding_size: 15",
             "    top_padding_size: 20", "    bottom_padding_size: 15", "    padding_value: 0", "}"]
    return "\n".join(lines) + "\n"


def _nv12(h=240, w=320, seed=0):
    return np.random.default_rng(seed).integers(16, 236, (h * 3 // 2, w), dtype=np.uint8)


@pytest.mark.parametrize("size_w,size_h", [(50, 60), (51, 60), (50, 61), (51, 61)])
def test_odd_crop_size_of_nv12_is_accepted_and_applied(size_w, size_h):
    op = parse_aipp_config(_nv12_block(size_w=size_w, size_h=size_h), "crop.cfg").ops[0]
    out = apply_aipp_image(op, _nv12())
    assert out.shape == (3, size_h + 35, size_w + 35)


@pytest.mark.parametrize("key,kwargs", [
    ("load_start_pos_w", {"pos_w": 11}), ("load_start_pos_h", {"pos_h": 21})])
def test_odd_crop_offset_of_nv12_is_refused(key, kwargs):
    with pytest.raises(ConfigError) as exc:
        parse_aipp_config(_nv12_block(**kwargs), "crop.cfg")
    text = str(exc.value)
    assert text.startswith(f"crop.cfg:{9 if key.endswith('_w') else 10}: {key}")
    assert "even" in text


def test_size_advice_for_nv12_crops_to_an_odd_model_size_and_pastes():
    """Images that AIPP makes another size than the model input: the advice crops NV12 images
    to an odd model height too (before, no crop was offered for an odd size), names no NV12 image
    size that cannot exist (an odd height), and pasted into the block it converts and runs."""
    import re

    from pytest_ascend_accuracy.aipp.apply import apply_aipp
    from pytest_ascend_accuracy.aipp.emulation import AippInputs

    text = "aipp_op {\n    aipp_mode: static\n    input_format: YUV420SP_U8\n}\n"
    op = parse_aipp_config(text, "cam.cfg").ops[0]
    images = np.stack([_nv12(20, 24, seed) for seed in range(2)])
    with pytest.raises(ConfigError) as info:
        AippInputs({"x": op}, {"x": (1, 3, 15, 16)}).preprocess({"x": images})
    msg = str(info.value)
    assert "Feed images" not in msg, msg  # an NV12 image 15 high does not exist
    added = re.findall(r"(?m)^    (\w+: \S+)$", msg)
    assert "crop_size_h: 15" in added, msg
    fixed = parse_aipp_config(text.replace("}", "".join(f"    {a}\n" for a in added) + "}"),
                              "cam.cfg").ops[0]
    assert apply_aipp(fixed, images).shape == (2, 3, 15, 16)

"""XRGB8888_U8 byte order and ``ax_swap_switch``, as CANN's documented configs set them (H105 #2).

The ATC guide's CSC configurations (mirror-cann/ge docs/zh/user_guides/atc_tools/AIPP/
CSC_config.md) give, for ``input_format: XRGB8888_U8`` and ``csc_switch: false``: "XRGB8888_U8转RGB"
``rbuv_swap_switch: false``, ``ax_swap_switch: true``; "XRGB8888_U8转BGR" ``rbuv_swap_switch:
true``, ``ax_swap_switch: true``; and with the gray matrix "XBGR8888_U8转GRAY" (true, true),
"RGBX8888_U8转GRAY" (false, false), "BGRX8888_U8转GRAY" (true, false). The configuration
template's table 2 (config_file_template.md) says the same per package: XRGB: rbuv false, ax
true; XBGR: true, true; RGBX: false, false; BGRX: true, false. So ``ax_swap_switch: true`` reads
the X byte first and false reads it last. The emulator had it the other way round.
"""
import numpy as np
import pytest

from pytest_ascend_accuracy.aipp import apply_aipp, check_preprocessing, parse_aipp_config

X, R, G, B = 9, 1, 2, 3
PACKAGES = {"XRGB": (X, R, G, B), "XBGR": (X, B, G, R), "RGBX": (R, G, B, X),
            "BGRX": (B, G, R, X)}


def _block(rbuv, ax):
    return "\n".join(["aipp_op {", "    aipp_mode: static", "    input_format : XRGB8888_U8",
                      "    csc_switch : false", f"    rbuv_swap_switch : {str(rbuv).lower()}",
                      f"    ax_swap_switch : {str(ax).lower()}", "}"]) + "\n"


@pytest.mark.parametrize("package, rbuv, ax, out", [
    ("XRGB", False, True, (R, G, B)),  # XRGB8888_U8转RGB
    ("XRGB", True, True, (B, G, R)),  # XRGB8888_U8转BGR
    ("XBGR", True, True, (R, G, B)),  # the table: XBGR package, both true
    ("RGBX", False, False, (R, G, B)),  # the table: RGBX package, both false
    ("BGRX", True, False, (R, G, B)),  # the table: BGRX package, rbuv true
])
def test_documented_configs_read_each_package(package, rbuv, ax, out):
    op = parse_aipp_config(_block(rbuv, ax), "x.cfg").ops[0]
    raw = np.array([[PACKAGES[package]]], dtype=np.uint8)  # one 1 x 1 image, H x W x 4
    assert apply_aipp(op, raw).reshape(-1).tolist() == list(out)


def test_the_search_names_ax_swap_for_an_rgbx_camera_and_the_fix_passes():
    """RGBX frames under the documented XRGB config: the fix is ``ax_swap_switch: false``,
    said as "the X byte last (RGBX)", and the corrected file passes."""
    frames = np.random.default_rng(3).integers(0, 256, (2, 6, 5, 4), dtype=np.uint8)

    def reference(image):  # R, G, B of an RGBX frame
        return image[..., 0:3].transpose(2, 0, 1).astype(np.float32)

    result = check_preprocessing(parse_aipp_config(_block(False, True), "x.cfg"), frames,
                                 reference)
    assert {f.key: f.new for f in result.fixes} == {"ax_swap_switch": False}, result.report()
    assert "the X byte last (RGBX)" in result.report()
    fixed = parse_aipp_config(result.corrected_text(), "x.cfg")
    assert check_preprocessing(fixed, frames, reference).passed

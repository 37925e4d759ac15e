"""Regressions found by reviewing AIPP against CANN's own sample files (issue 15 review).

- YUV420SP + CSC: the ``>> 8`` truncation biases the fitted offsets by about half a level, so a
  plain RGB/BGR mean mix-up came out as ``mean_chn_0: 123 -> 103`` plus ``min_chn_0: 0 -> 0.742``
  with a sentence about 123.742 and a zeroed mean; it must read as the swap it is.
- A wrong crop window made the search fit absurd offsets whose float16 cast overflowed:
  a RuntimeWarning, an error under ``filterwarnings = error``.
- Protobuf text format ends a field with an optional ``;`` or ``,``; ATC accepts such files.
- A wrong padding split (left 2 / right 6 for 4 / 4) was outside the search, which then
  listed nine fitted fields of nonsense as the "closest correction".
- ``related_input_name`` (Caffe models only, and ahead of ``related_input_rank`` on the device)
  was accepted and ignored: the block went to input 0 whatever input it named.
"""
import warnings

import numpy as np

from pytest_ascend_accuracy.aipp import check_preprocessing, parse_aipp_config
from pytest_ascend_accuracy.aipp.samples import (imagenet_aipp, imagenet_reference, random_nv12,
                                                 random_rgb)

H, W = 16, 24
NV12 = random_nv12(2, H, W, seed=5)
# CANN's "YUV420SP_U8 to BGR" sample (ATC guide, AIPP configuration examples): BT.601 narrow
# range, rows B, G, R, Caffe-style means subtracted in B, G, R order
BGR_FILE = """aipp_op {
    aipp_mode: static
    input_format: YUV420SP_U8
    csc_switch: true
    rbuv_swap_switch: false
    matrix_r0c0: 298
    matrix_r0c1: 516
    matrix_r0c2: 0
    matrix_r1c0: 298
    matrix_r1c1: -100
    matrix_r1c2: -208
    matrix_r2c0: 298
    matrix_r2c1: 0
    matrix_r2c2: 409
    input_bias_0: 16
    input_bias_1: 128
    input_bias_2: 128
    mean_chn_0: 104
    mean_chn_1: 117
    mean_chn_2: 123
    min_chn_0: 0.0
    min_chn_1: 0.0
    min_chn_2: 0.0
    var_reci_chn_0: 1.0
    var_reci_chn_1: 1.0
    var_reci_chn_2: 1.0
}
"""


def bgr_reference(img):
    """NV12 -> BGR uint8 as OpenCV's BT.601 narrow-range decoder rounds it, minus B, G, R means."""
    y = img[:H].astype(np.float64) - 16
    uv = img[H:].reshape(H // 2, W // 2, 2).repeat(2, 0).repeat(2, 1).astype(np.float64) - 128
    u, v = uv[..., 0], uv[..., 1]
    b, g, r = 1.164 * y + 2.017 * u, 1.164 * y - 0.392 * u - 0.813 * v, 1.164 * y + 1.596 * v
    bgr = np.clip(np.rint(np.stack([b, g, r])), 0, 255)
    return (bgr - np.array([104.0, 117.0, 123.0])[:, None, None]).astype(np.float32)


def _check(text, images, reference):
    return check_preprocessing(parse_aipp_config(text, "aipp.cfg"), images, reference)


def test_cann_bgr_sample_passes():
    assert _check(BGR_FILE, NV12, bgr_reference).passed


def test_means_in_rgb_order_after_csc_are_named_as_the_swap():
    text = BGR_FILE.replace("mean_chn_0: 104", "mean_chn_0: 123").replace(
        "mean_chn_2: 123", "mean_chn_2: 104")
    result = _check(text, NV12, bgr_reference)
    assert result.verified
    assert {f.key: (f.old, f.new) for f in result.fixes} == {"mean_chn_0": (123, 104),
                                                             "mean_chn_2": (104, 123)}
    report = result.report()
    assert "channel order mix-up" in report and "zeroed" not in report
    fixed = text.replace("mean_chn_0: 123", "mean_chn_0: 104").replace(
        "mean_chn_2: 104", "mean_chn_2: 123")
    assert _check(fixed, NV12, bgr_reference).passed  # the advice, pasted


def test_zeroed_means_after_csc_get_whole_levels_and_the_full_offset_in_the_reason():
    text = BGR_FILE
    for c, m in enumerate((104, 117, 123)):
        text = text.replace(f"mean_chn_{c}: {m}", f"mean_chn_{c}: 0")
    result = _check(text, NV12, bgr_reference)
    assert {f.key: f.new for f in result.fixes} == {"mean_chn_0": 104, "mean_chn_1": 117,
                                                    "mean_chn_2": 123}
    assert "subtracts 104 from channel 0; the file subtracts nothing there" in result.report()


def test_zeroed_mean_and_min_reasons_agree_on_the_offset():
    text = imagenet_aipp().replace("mean_chn_0: 123", "mean_chn_0: 0").replace(
        "min_chn_0: 0.675", "min_chn_0: 0.0")
    rgb = random_rgb(2, 12, 16, seed=3)
    fixes = {f.key: f for f in _check(text, rgb, imagenet_reference).fixes}
    assert fixes["mean_chn_0"].new == 123 and fixes["min_chn_0"].new == 0.675
    assert "subtracts 123.675" in fixes["mean_chn_0"].why
    assert "subtracts 123.675" in fixes["min_chn_0"].why


def test_an_offset_no_file_can_hold_is_never_offered_nor_warns():
    from pytest_ascend_accuracy.aipp.apply import normalise
    from pytest_ascend_accuracy.aipp.mistakes import _normalisation_changes

    op = parse_aipp_config(imagenet_aipp(), "aipp.cfg").ops[0]
    # a wrong crop window fits each channel with a near-zero scale: offset -b/a ~ 1e6
    changes = _normalisation_changes(op, [(1e-7, 0.1), (1 / 57.12, -116.28 / 57.12), (1e-7, 0.1)])
    assert not any(k.startswith(("mean_chn", "min_chn")) for k in changes)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # filterwarnings = error in a user's pytest.ini
        out = normalise(op.with_values({"mean_chn_0": 10 ** 6}), np.zeros((2, 2, 3), np.int32))
    assert np.isinf(out[0]).all()


def test_fields_may_end_with_semicolon_or_comma_as_in_protobuf_text_format():
    cfg = parse_aipp_config("aipp_op {\n\taipp_mode : static;\n\tinput_format : RGB888_U8;\n"
                            "\tmean_chn_0: 104,\n};\n", "aipp.cfg")
    assert cfg.ops[0].values == {"aipp_mode": "static", "input_format": "RGB888_U8",
                                 "mean_chn_0": 104}
    assert "\tmean_chn_0: 5,\n" in cfg.corrected_text({0: {"mean_chn_0": 5}})


def test_related_input_name_is_refused_naming_the_line():
    import pytest

    from pytest_ascend_accuracy.errors import ConfigError

    text = ('aipp_op {\n aipp_mode: static\n related_input_name: "im_info"\n'
            ' input_format: RGB888_U8\n}\n')
    with pytest.raises(ConfigError, match=r"aipp.cfg:3: related_input_name: applies to Caffe "
                                          r"models only.*related_input_rank: N"):
        parse_aipp_config(text, "aipp.cfg")


PAD_FILE = imagenet_aipp(src_hw=(12, 16), extra="""    padding: true
    top_padding_size: 2
    bottom_padding_size: 2
    left_padding_size: 2
    right_padding_size: 6""")


def padded_reference(image):
    return np.pad(imagenet_reference(image), ((0, 0), (2, 2), (4, 4))).astype(np.float32)


def test_padding_split_wrong_is_named_from_the_reference_border():
    result = _check(PAD_FILE, random_rgb(2, 12, 16, seed=6), padded_reference)
    assert result.verified
    assert {f.key: (f.old, f.new) for f in result.fixes} == {"left_padding_size": (2, 4),
                                                             "right_padding_size": (6, 4)}
    assert "border is 2 top, 2 bottom, 4 left, 4 right" in result.report()


def test_a_mistake_outside_the_search_names_no_fitted_fields():
    fixed = PAD_FILE.replace("left_padding_size: 2", "left_padding_size: 4").replace(
        "right_padding_size: 6", "right_padding_size: 4")
    flipped = lambda im: -padded_reference(im)[:, ::-1]  # noqa: E731
    result = _check(fixed, random_rgb(2, 12, 16, seed=6), flipped)
    assert not result.passed and not result.fixes
    assert "no correction of the likely mistakes" in result.report()


def test_two_folders_with_a_reference_module_of_one_name_each_get_their_own(tmp_path):
    """``reference: prep:preprocess`` in two suites, each folder with its own prep.py: the
    second got the first folder's module from sys.modules, and its function (found as a
    flaky -n 2 failure of this suite's own tests)."""
    import sys

    from pytest_ascend_accuracy.aipp.user_files import load_reference

    for name, value in (("a", 1.0), ("b", 2.0)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "prep_same_name.py").write_text(
            f"def preprocess(image):\n    return image * 0 + {value}\n")
    try:
        first = load_reference("prep_same_name:preprocess", tmp_path / "a")
        second = load_reference("prep_same_name:preprocess", tmp_path / "b")
        assert first(np.zeros(1))[0] == 1.0 and second(np.zeros(1))[0] == 2.0
        assert load_reference("prep_same_name:preprocess", tmp_path / "a")(np.zeros(1))[0] == 1.0
    finally:
        sys.modules.pop("prep_same_name", None)


def test_each_folders_reference_module_imports_its_own_siblings(tmp_path):
    """The second folder's prep.py ran on its own, but its ``import helper_same_name`` found
    the first folder's helper in sys.modules (review of the first fix)."""
    import sys

    from pytest_ascend_accuracy.aipp.user_files import load_reference

    for name in ("s1", "s2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "helper_same_name.py").write_text(f"WHO = {name!r}\n")
        (tmp_path / name / "prep_same_name2.py").write_text(
            "import helper_same_name\n\ndef preprocess(image):\n    return helper_same_name.WHO\n")
    try:
        got = [load_reference("prep_same_name2:preprocess", tmp_path / n)(None)
               for n in ("s1", "s2", "s1")]
        assert got == ["s1", "s2", "s1"]
    finally:
        for mod in ("prep_same_name2", "helper_same_name"):
            sys.modules.pop(mod, None)

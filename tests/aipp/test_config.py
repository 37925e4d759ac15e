"""Parsing the real insert_op_conf syntax; every bad file is a ConfigError naming file, line, key."""
import pytest

from pytest_ascend_accuracy.aipp import parse_aipp_config, read_aipp_config
from pytest_ascend_accuracy.errors import ConfigError

TWO_BLOCKS = """\
# AIPP for a two-input model (ATC guide, "Static AIPP")
aipp_op {
    aipp_mode : static
    related_input_rank: 0  # first input
    src_image_size_w : 608
    src_image_size_h : 608
    crop : false
    input_format : YUV420SP_U8
    csc_switch : true
    rbuv_swap_switch : false
    matrix_r0c0 : 298
    matrix_r0c1 : 0
    matrix_r0c2 : 409
    input_bias_0 : 16
    mean_chn_0 : 104 mean_chn_1 : 117
    var_reci_chn_0: 0.0039215
}
aipp_op: { aipp_mode: static related_input_rank: 1 input_format: RGB888_U8 }
"""


def test_two_blocks_with_comments_and_both_brace_styles():
    cfg = parse_aipp_config(TWO_BLOCKS, "aipp.cfg")
    assert [op.rank for op in cfg.ops] == [0, 1]
    first = cfg.for_input(0)
    assert first.input_format == "YUV420SP_U8"
    assert first.get("csc_switch") is True and first.get("matrix_r0c2") == 409
    assert first.get("mean_chn_1") == 117 and first.lines["mean_chn_1"] == 15
    assert first.get("var_reci_chn_0") == pytest.approx(0.0039215)
    assert first.get("var_reci_chn_2") == 1.0  # template default
    assert cfg.for_input(1).input_format == "RGB888_U8"
    assert cfg.for_input(2) is None


def test_corrected_text_keeps_comments_and_adds_missing_keys():
    cfg = parse_aipp_config(TWO_BLOCKS, "aipp.cfg")
    text = cfg.corrected_text({0: {"mean_chn_1": 116, "rbuv_swap_switch": True, "min_chn_0": 0.675}})
    assert "# AIPP for a two-input model" in text and "# first input" in text
    assert "mean_chn_0 : 104 mean_chn_1 : 116" in text
    assert "rbuv_swap_switch : true" in text
    assert "    min_chn_0: 0.675\n}" in text
    again = parse_aipp_config(text, "fixed.cfg").for_input(0)
    assert again.get("mean_chn_1") == 116 and again.get("min_chn_0") == pytest.approx(0.675)


def _error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_aipp_config(text, "bad.cfg")
    return str(info.value)


def test_unknown_key_names_line_and_closest_real_keys():
    msg = _error("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n var_reci_chn0: 0.5\n}\n")
    assert msg.startswith("bad.cfg:4: var_reci_chn0: unknown AIPP key")
    assert "var_reci_chn_0" in msg


@pytest.mark.parametrize("text, where, words", [
    ("aipp_op {\n aipp_mode: dynamic\n max_src_image_size: 752640\n}\n", "bad.cfg:2", "dynamic AIPP"),
    ("aipp_op {\n aipp_mode: static\n input_format: YUYV_U8\n}\n", "bad.cfg:3", "YUV420SP_U8, RGB888_U8"),
    ("aipp_op {\n aipp_mode: static\n input_format: RGB888\n}\n", "bad.cfg:3", "RGB888_U8"),
    ("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n csc_switch: yes\n}\n", "bad.cfg:4",
     "true or false"),
    ("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n mean_chn_0: 123.6\n}\n", "bad.cfg:4",
     "integer"),
    ("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n mean_chn_0: 1\n mean_chn_0: 2\n}\n",
     "bad.cfg:5", "twice"),
    ("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n", "bad.cfg:1", "not closed"),
    ("aipp_op {\n input_format: RGB888_U8\n}\n", "bad.cfg:1", "aipp_mode"),
    ("aipp_op {\n aipp_mode: static\n}\n", "bad.cfg:1", "input_format"),
    ("aipp_opp {\n aipp_mode: static\n}\n", "bad.cfg:1", "aipp_op"),
    ("", "bad.cfg", "no aipp_op block"),
    ("aipp_op {\n aipp_mode: static\n input_format: YUV420SP_U8\n crop: true\n load_start_pos_w: 3\n}\n",
     "bad.cfg:5", "even"),
    ("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n src_image_size_w: 32\n crop: true\n"
     " load_start_pos_w: 8\n crop_size_w: 30\n}\n", "bad.cfg:7", "exceeds src_image_size_w"),
    ("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n var_reci_chn_0: 70000\n}\n", "bad.cfg:4",
     "float16"),
    ("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n resize: true\n}\n", "bad.cfg:4",
     "not supported"),
    ("aipp_op { aipp_mode: static input_format: RGB888_U8 }\naipp_op { aipp_mode: static "
     "input_format: RGB888_U8 related_input_rank: 0 }\n", "bad.cfg:2", "already has"),
    ("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n mean_chn_0 104\n}\n", "bad.cfg:4", "':'"),
    ("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8 =\n}\n", "bad.cfg:3", "unexpected character"),
    ("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8 ;;\n}\n", "bad.cfg:3", "expected a key, found ';'"),
])
def test_bad_files_name_file_line_and_problem(text, where, words):
    msg = _error(text)
    assert msg.startswith(where + ":"), msg
    assert words in msg, msg


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the AIPP file"):
        read_aipp_config(tmp_path / "nope.cfg")


def test_syntax_seen_in_deployed_files():
    """What hand-written files on GitHub do: no space before '{', no space around ':', a comment
    after a value, integers for float keys, 32-digit decimals, dynamic-only keys left in a
    static block, an indented closing brace."""
    text = (" aipp_op{\n    aipp_mode:static\n    max_src_image_size : 1228800\n"
            "    support_rotation : false\n    input_format : YUV420SP_U8 # RGB888_U8\n"
            "    cpadding_value: 0.0\n    csc_switch : true\n    min_chn_0 : 0\n"
            "    var_reci_chn_0 : 0.0039215686274509803921568627451\n }\n\n")
    op = parse_aipp_config(text, "yolo.cfg").ops[0]
    assert op.input_format == "YUV420SP_U8" and op.get("min_chn_0") == 0
    assert op.get("var_reci_chn_0") == pytest.approx(1 / 255)


@pytest.mark.parametrize("line, kept", [("input_bias_0: 300", 44), ("input_bias_1: -128", 128),
                                        ("output_bias_0: 999", 231),
                                        ("matrix_r0c0: 100000", -31072)])
def test_csc_values_the_device_registers_cannot_hold_are_refused(line, kept):
    """Biases go into 8-bit registers and matrix entries into 16-bit ones (ascend-opp
    aipp_comm.set_spr2_spr9: & 0xff, & 0xffff); the emulator computed with the full value,
    which the device never sees (review helper)."""
    key = line.split(":")[0]
    with pytest.raises(ConfigError, match=f"{key}: .* does not fit the device's register .*"
                                          f"the device would use {kept},"):
        parse_aipp_config(f"aipp_op {{\n aipp_mode: static\n input_format: YUV420SP_U8\n"
                          f" csc_switch: true\n {line}\n}}\n", "t.cfg")


def test_input_edge_idx_is_refused_as_not_emulated():
    """On the device AIPP then feeds only the listed consumers of the input; the emulator
    applied it to all of them, silently."""
    with pytest.raises(ConfigError, match="input_edge_idx: not emulated"):
        parse_aipp_config("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n"
                          " input_edge_idx: 1\n}\n", "t.cfg")

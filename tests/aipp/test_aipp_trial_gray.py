"""CSC to gray (AIPP user trial): a matrix whose rows 1 and 2 are zero (RGB/YUV -> one channel)
was accepted and failed later as "AIPP output shape (3, 16, 16) ... reference gives (1, 16, 16)";
the device's one-channel output is not clearly documented, so it is refused at parse, as resize
and rotation are. CSC on one-channel YUV400_U8 is refused at parse too, not at run time."""
import pytest

from pytest_ascend_accuracy.aipp import parse_aipp_config
from pytest_ascend_accuracy.errors import ConfigError

RGB2GRAY = """aipp_op {
    aipp_mode: static
    input_format: RGB888_U8
    csc_switch: true
    matrix_r0c0: 76
    matrix_r0c1: 150
    matrix_r0c2: 30
    matrix_r1c0: 0
    matrix_r1c1: 0
    matrix_r1c2: 0
    matrix_r2c0: 0
    matrix_r2c1: 0
    matrix_r2c2: 0
    output_bias_0: 0
    output_bias_1: 0
    output_bias_2: 0
}
"""


def test_rgb_to_gray_csc_is_refused_at_parse():
    with pytest.raises(ConfigError) as e:
        parse_aipp_config(RGB2GRAY, "gray.cfg")
    assert str(e.value).startswith("gray.cfg:8: matrix_r1c0: matrix rows 1 and 2 are all zero")
    assert "gray" in str(e.value) and "not supported" in str(e.value)


def test_yuv_to_gray_csc_is_refused_at_parse():
    text = ("aipp_op {\n aipp_mode: static\n input_format: YUV420SP_U8\n csc_switch: true\n"
            " matrix_r0c0: 256\n matrix_r0c1: 0\n matrix_r0c2: 0\n"
            + "".join(f" matrix_r{r}c{c}: 0\n" for r in (1, 2) for c in range(3)) + "}\n")
    with pytest.raises(ConfigError, match="conversion to gray"):
        parse_aipp_config(text, "gray.cfg")


def test_csc_on_yuv400_is_refused_at_parse():
    with pytest.raises(ConfigError) as e:
        parse_aipp_config("aipp_op {\n aipp_mode: static\n input_format: YUV400_U8\n"
                          " csc_switch: true\n}\n", "y.cfg")
    assert str(e.value).startswith("y.cfg:4: csc_switch: YUV400_U8 has one channel")


def test_a_three_channel_csc_still_parses():
    text = RGB2GRAY.replace("matrix_r1c0: 0", "matrix_r1c0: -43")
    assert parse_aipp_config(text, "c.cfg").ops[0].get("csc_switch") is True

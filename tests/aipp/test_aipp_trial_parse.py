"""Parser items of the AIPP user trial: the file's syntax is protobuf text format, as ATC reads it.

- a bool takes exactly TextFormat's spellings (``true``/``True``/``t``/``1``, ``false``/
  ``False``/``f``/``0``): ``crop: TRUE`` was accepted though ATC refuses it;
- an enum may be given by its number in ``insert_op.proto`` (``aipp_mode: 1``,
  ``input_format: 3``), which TextFormat accepts; a wrong name lists the names with numbers;
- a fractional ``mean_chn`` says how to split it into ``mean_chn`` and ``min_chn``.
"""
import pytest

from pytest_ascend_accuracy.aipp import parse_aipp_config
from pytest_ascend_accuracy.errors import ConfigError

HEAD = "aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n"


@pytest.mark.parametrize("word", ["TRUE", "FALSE", "T", "F", "tRue", "yes"])
def test_bool_spellings_textformat_refuses_are_refused(word):
    with pytest.raises(ConfigError) as e:
        parse_aipp_config(HEAD + f" crop: {word}\n}}\n", "a.cfg")
    assert str(e.value).startswith("a.cfg:4: crop:")
    assert "true, True, t, 1" in str(e.value)


@pytest.mark.parametrize("word, value", [("true", True), ("True", True), ("t", True), ("1", True),
                                         ("false", False), ("False", False), ("f", False),
                                         ("0", False)])
def test_bool_spellings_textformat_takes(word, value):
    cfg = parse_aipp_config(HEAD + f" rbuv_swap_switch: {word}\n}}\n", "a.cfg")
    assert cfg.ops[0].values["rbuv_swap_switch"] is value


def test_enum_numbers_are_the_proto_numbers():
    cfg = parse_aipp_config("aipp_op {\n aipp_mode: 1\n input_format: 3\n}\n", "a.cfg")
    assert cfg.ops[0].values["aipp_mode"] == "static"
    assert cfg.ops[0].input_format == "RGB888_U8"
    for number, name in ((1, "YUV420SP_U8"), (2, "XRGB8888_U8"), (4, "YUV400_U8")):
        text = f"aipp_op {{\n aipp_mode: static\n input_format: {number}\n}}\n"
        assert parse_aipp_config(text, "a.cfg").ops[0].input_format == name
    with pytest.raises(ConfigError, match="dynamic AIPP is not supported"):
        parse_aipp_config("aipp_op {\n aipp_mode: 2\n input_format: 3\n}\n", "a.cfg")


@pytest.mark.parametrize("text, shown", [
    ("aipp_op {\n aipp_mode: 0\n input_format: 3\n}\n", "static (1), dynamic (2)"),
    ("aipp_op {\n aipp_mode: static\n input_format: 21\n}\n", "RGB888_U8 (3)"),
    ("aipp_op {\n aipp_mode: static\n input_format: rgb888_u8\n}\n", "did you mean RGB888_U8?"),
])
def test_enum_errors_name_the_names_and_numbers(text, shown):
    with pytest.raises(ConfigError) as e:
        parse_aipp_config(text, "a.cfg")
    assert shown in str(e.value)


def test_fractional_mean_says_how_to_split_it():
    with pytest.raises(ConfigError) as e:
        parse_aipp_config(HEAD + " mean_chn_0: 123.675\n}\n", "a.cfg")
    assert "a.cfg:4: mean_chn_0: expected an integer, found '123.675'" in str(e.value)
    assert "put 123 in mean_chn_0 and 0.675 in min_chn_0" in str(e.value)
    with pytest.raises(ConfigError) as e:
        parse_aipp_config(HEAD + " mean_chn_2: -5.5\n}\n", "a.cfg")
    # ATC takes mean_chn and min_chn 0..255 only: no split of a negative offset to suggest
    assert "no mean_chn_2 / min_chn_2 pair subtracts -5.5: each is 0..255" in str(e.value)
    assert "put -" not in str(e.value)
    with pytest.raises(ConfigError) as e:  # not a number at all: no split to suggest
        parse_aipp_config(HEAD + " mean_chn_0: abc\n}\n", "a.cfg")
    assert "min_chn" not in str(e.value)


@pytest.mark.parametrize("before", [True, False], ids=["min-before", "min-after"])
def test_a_fraction_beside_a_min_chn_is_added_to_it_and_passes_pasted(before):
    """``mean_chn_0: 123.5`` beside ``min_chn_0: 0.175`` (the ImageNet mean 123.675) was told
    "0.5 in min_chn_0": pasted it replaced 0.175, and 0 of 4 images agreed."""
    import re

    from pytest_ascend_accuracy.aipp.check import check_preprocessing
    from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, imagenet_reference, random_rgb

    text = imagenet_aipp(src_hw=(4, 4))
    assert "    mean_chn_0: 123\n    min_chn_0: 0.675\n" in text
    frac = text.replace("    mean_chn_0: 123\n    min_chn_0: 0.675\n",
                        "    min_chn_0: 0.175\n    mean_chn_0: 123.5\n" if before else
                        "    mean_chn_0: 123.5\n    min_chn_0: 0.175\n")
    with pytest.raises(ConfigError) as e:
        parse_aipp_config(frac, "a.cfg")
    advice = re.search(r"put (\d+) in mean_chn_0 and add 0\.5 to min_chn_0 \(0\.175 -> "
                       r"([\d.]+)\)", str(e.value))
    assert advice, str(e.value)
    pasted = re.sub(r"mean_chn_0: 123\.5", f"mean_chn_0: {advice.group(1)}", frac)
    pasted = re.sub(r"min_chn_0: 0\.175", f"min_chn_0: {advice.group(2)}", pasted)
    result = check_preprocessing(parse_aipp_config(pasted, "a.cfg"), random_rgb(4, 4, 4),
                                 reference=imagenet_reference)
    assert result.passed

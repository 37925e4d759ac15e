import json

import pytest

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.core.modes import (
    BUFFER_OFF, DEFAULT, FUSION_OFF, HIGH_PRECISION, Mode, keep_dtype, resolve_mode)


def test_presets_render_documented_atc_options():
    assert DEFAULT.atc_options() == [("precision_mode", "force_fp16")]
    assert HIGH_PRECISION.atc_options() == [("precision_mode", "allow_fp32_to_fp16")]
    assert ("buffer_optimize", "off_optimize") in BUFFER_OFF.atc_options()
    assert ("fusion_switch_file", "cfg/fusion_switch.cfg") in FUSION_OFF.atc_options("cfg")


def test_fusion_off_switch_file_turns_both_fusion_kinds_off():
    text = FUSION_OFF.config_files()["fusion_switch.cfg"]
    assert json.loads(text) == {"Switch": {"GraphFusion": {"ALL": "off"}, "UBFusion": {"ALL": "off"}}}


def test_keep_dtype_file_has_one_op_per_line_and_dedups():
    mode = keep_dtype(["Mul_3", "OpType::Softmax", "Mul_3"])
    # OpType:: entries are written in ATC's Ascend IR spelling (core.ascend_optypes)
    assert mode.config_files() == {"keep_dtype.cfg": "Mul_3\nOpType::SoftmaxV2\n"}
    assert mode.keeps_fp32("Mul_3", "Mul") and mode.keeps_fp32("sm", "Softmax")
    assert not mode.keeps_fp32("Add_1", "Add")


def test_combination_and_names_are_stable():
    combo = FUSION_OFF | BUFFER_OFF | keep_dtype(["a"])
    assert combo.name == "buffer_off+fusion_off+keep_dtype(a)"
    assert combo == resolve_mode("fusion_off+buffer_off") | keep_dtype(["a"])
    assert hash(combo) == hash(Mode(buffer_optimize="off_optimize", fusion=False, keep_dtype=("a",)))
    assert DEFAULT.name == "default" and HIGH_PRECISION.name == "high_precision"


@pytest.mark.parametrize("bad", [dict(precision_mode="fp8_please"), dict(buffer_optimize="x"),
                                 dict(keep_dtype=("a\nb",)), dict(keep_dtype=("",))])
def test_bad_mode_values_are_config_errors(bad):
    with pytest.raises(ConfigError):
        Mode(**bad)


def test_unknown_preset_names_the_place():
    with pytest.raises(ConfigError, match="test_x: unknown mode 'fastest'"):
        resolve_mode("fastest", where="test_x")


@pytest.mark.parametrize("entry, closest", [("UbFusion:ConvBatchnormFusionPass",
                                             "'UBFusion:ConvBatchnormFusionPass'"),
                                            ("graphfusion:X", "'GraphFusion:X'"),
                                            ("GraphFusion:", "'GraphFusion:Rule'")])
def test_a_misspelled_fusion_section_is_refused(entry, closest):
    """The fusion switch file has two sections; an entry naming another went into GraphFusion
    under a name no rule has, switching nothing off."""
    from pytest_ascend_accuracy.core.modes import Mode

    with pytest.raises(ConfigError, match=f"{entry!r}.*GraphFusion and UBFusion.*closest: "
                                          f"{closest}"):
        Mode(fusion_rules_off=(entry,))
    assert Mode(fusion_rules_off=("UBFusion:X", "GraphFusion:Y", "Z")).fusion_rules_off


def test_the_yaml_form_keeps_extra_atc_options_and_reads_back_to_the_same_mode():
    """A hint's YAML of Mode(fusion=False, extra=...) dropped the extra options, so pasted it
    converted with other ATC arguments than the Python form (review helper)."""
    import yaml

    from pytest_ascend_accuracy.core.modes import Mode, keep_dtype, mode_from_spec

    for mode in (Mode(fusion=False, extra=(("log", "error"),)) | keep_dtype(["a.b"]),
                 Mode(extra=(("op_select_implmode", "high_precision"),))):
        text = mode.yaml_form()
        assert "extra: {" in text
        assert mode_from_spec(yaml.safe_load(text)) == mode


@pytest.mark.parametrize("option", ["precision_mode", "precision_mode_v2", "keep_dtype",
                                    "buffer_optimize", "fusion_switch_file"])
def test_extra_atc_options_never_set_what_the_mode_sets(option):
    """Mode(extra=(("precision_mode", "force_fp32"),)) was named and cached as that mode while
    the command line dropped it (or carried both precision options, which ATC refuses)."""
    from pytest_ascend_accuracy.core.modes import Mode

    with pytest.raises(ConfigError, match=f"extra ATC option '{option}' is what the mode itself "
                                          f"sets: "):
        Mode(extra=((option, "x"),))


def test_a_string_combined_with_a_bar_names_the_plus_spelling():
    """README said presets combine with + or |; "high_precision|buffer_off" was an unknown mode
    with high_precision as the closest (review helper). The error now gives the working
    spelling, which resolves."""
    from pytest_ascend_accuracy.core.modes import resolve_mode
    from pytest_ascend_accuracy.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        resolve_mode("high_precision|buffer_off", "modes")
    assert "presets combine with + ('high_precision+buffer_off')" in str(err.value)
    assert "HIGH_PRECISION | BUFFER_OFF" in str(err.value)
    assert resolve_mode("high_precision+buffer_off").name == "high_precision+buffer_off"


def test_a_bar_between_non_presets_is_not_offered_a_plus_spelling():
    """'keep_dtype(norm)|high_precision' was told to write 'keep_dtype(norm)+high_precision',
    itself unknown (review helper)."""
    from pytest_ascend_accuracy.core.modes import resolve_mode
    from pytest_ascend_accuracy.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        resolve_mode("keep_dtype(norm)|high_precision", "modes")
    assert "+" not in str(err.value).split("known:")[0] and "KEEP_DTYPE" not in str(err.value)


def test_extra_takes_the_mapping_the_yaml_form_prints():
    """``Mode(extra={"log": "info"})``, as a YAML mode writes ``extra``, raised ValueError, and
    a two-letter key was unpacked into its letters (``{"og": "x"}`` became ``(("o", "g"),)``)."""
    from pytest_ascend_accuracy import Mode
    from pytest_ascend_accuracy.errors import ConfigError

    assert Mode(extra={"log": "info"}) == Mode(extra=(("log", "info"),))
    assert Mode(extra={"og": "x"}).extra == (("og", "x"),)
    # a bool as ATC takes it, as the keyword form display_model_info=True is (it read "True")
    assert Mode(extra={"display_model_info": True}).extra == (("display_model_info", "1"),)
    for bad in ({"log"}, ("log", "info"), "log"):
        with pytest.raises(ConfigError, match=r"extra takes ATC options as \{option: value\} or "
                                              r"\(option, value\) pairs"):
            Mode(extra=bad)


def test_a_yaml_extras_booleans():
    """YAML reads ``true`` as a bool: display_model_info takes it as ATC's 1 (as Mode(extra=...)
    does); another option is refused saying to quote it, not "must map ATC options to values"
    alone, though the mapping was one."""
    from pytest_ascend_accuracy.core.modes import mode_from_spec
    from pytest_ascend_accuracy.errors import ConfigError

    mode = mode_from_spec({"extra": {"display_model_info": True}}, "m")
    assert mode.extra == (("display_model_info", "1"),)
    with pytest.raises(ConfigError, match=r"log: YAML reads yes/no, on/off and true/false as "
                                          r"booleans, not ATC values: write the value ATC "
                                          r"takes, quoted, log: \"VALUE\" \(ATC's \"null\" is no "
                                          r"log\)"):
        mode_from_spec({"extra": {"log": False}}, "m")  # (log: off: which word, YAML hides)
    # an allowed boolean before the bad value is not blamed for it (H98)
    with pytest.raises(ConfigError, match=r"^m\.extra: log: YAML reads"):
        mode_from_spec({"extra": {"display_model_info": True, "log": True}}, "m")
    with pytest.raises(ConfigError, match=r"YAML reads null as no value: quote it, log: "):
        mode_from_spec({"extra": {"display_model_info": True, "log": None}}, "m")


def test_a_misspelled_mode_argument_names_the_closest():
    """``Mode(fusion_rules_of=...)`` raised Python's TypeError, naming no argument Mode takes."""
    from pytest_ascend_accuracy import Mode
    from pytest_ascend_accuracy.errors import ConfigError

    with pytest.raises(ConfigError, match=r"Mode: unknown argument 'fusion_rules_of'; closest: "
                                          r"'fusion_rules_off'; it takes precision_mode, "):
        Mode(fusion_rules_of=["GraphFusion:X"])
    assert Mode(fusion_rules_off=["GraphFusion:X"]).fusion_rules_off == ("GraphFusion:X",)

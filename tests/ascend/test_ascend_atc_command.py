"""The ATC argv builder (pure: no ATC is run). Checks exact argument lists."""
import pytest

from pytest_ascend_accuracy.backends.ascend.atc_command import (
    build_atc_command, format_input_shape, om_to_json_command, precision_argument)
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.core.modes import (
    BUFFER_OFF, DEFAULT, FUSION_OFF, HIGH_PRECISION, Mode, keep_dtype)


def build(mode=DEFAULT, **kw):
    kw.setdefault("output_prefix", "tiny")
    kw.setdefault("soc_version", "Ascend310P3")
    return build_atc_command("/opt/atc", "/m/tiny.onnx", mode, **kw)


def test_default_mode_on_old_toolkit_uses_precision_mode():
    cmd = build(toolkit_version="6.3.RC2")
    assert cmd.argv == ("/opt/atc", "--model=/m/tiny.onnx", "--framework=5", "--output=tiny",
                        "--soc_version=Ascend310P3", "--precision_mode=force_fp16", "--log=error")
    assert cmd.om_name == "tiny.om" and cmd.precision_option == "precision_mode"


def test_default_mode_on_7_0_and_later_uses_precision_mode_v2():
    for version in ("7.0.RC1", "7.0.0.alpha003", "8.0.RC2", "9.0.0"):
        cmd = build(toolkit_version=version)
        assert "--precision_mode_v2=fp16" in cmd.argv
        assert not any(a.startswith("--precision_mode=") for a in cmd.argv)


def test_unknown_toolkit_version_falls_back_to_precision_mode():
    assert build(toolkit_version=None).option("precision_mode") == "force_fp16"
    assert build(toolkit_version="garbage").option("precision_mode") == "force_fp16"


@pytest.mark.parametrize("v1, v2", [
    ("force_fp16", "fp16"), ("must_keep_origin_dtype", "origin"), ("force_fp32", "cube_fp16in_fp32out"),
    ("cube_fp16in_fp32out", "cube_fp16in_fp32out"), ("allow_mix_precision", "mixed_float16"),
    ("allow_mix_precision_fp16", "mixed_float16"), ("allow_mix_precision_bf16", "mixed_bfloat16")])
def test_precision_modes_map_to_v2_values(v1, v2):
    assert precision_argument(Mode(precision_mode=v1), "8.0.RC1") == ("precision_mode_v2", v2)


@pytest.mark.parametrize("v1", ["allow_fp32_to_fp16", "allow_fp32_to_bf16"])
def test_modes_without_v2_equivalent_stay_on_precision_mode(v1):
    assert precision_argument(Mode(precision_mode=v1), "8.0.RC1") == ("precision_mode", v1)
    with pytest.raises(ConfigError, match="no --precision_mode_v2 equivalent"):
        precision_argument(Mode(precision_mode=v1), "8.0.RC1", "precision_mode_v2")


def test_high_precision_preset_renders_allow_fp32_to_fp16():
    assert build(HIGH_PRECISION, toolkit_version="8.0.RC2").option("precision_mode") == "allow_fp32_to_fp16"


def test_forced_policy_and_user_override_never_pass_both():
    assert build(toolkit_version="8.0.RC2", precision_policy="precision_mode").option("precision_mode") == "force_fp16"
    cmd = build(toolkit_version="6.0.0", atc_options={"precision_mode_v2": "origin"})
    assert cmd.option("precision_mode_v2") == "origin" and cmd.option("precision_mode") is None
    with pytest.raises(ConfigError, match="cannot be combined"):
        build(atc_options={"precision_mode": "force_fp16", "--precision_mode_v2": "fp16"})


def test_full_combination_in_documented_order():
    mode = FUSION_OFF | BUFFER_OFF | keep_dtype(["conv1", "OpType::Softmax"])
    cmd = build(mode, toolkit_version="8.0.RC2", input_shape={"x": (1, 3, 4, 4), "m": (1, 10)},
                input_format="NCHW", atc_options={"out_nodes": "sig1:0", "op_select_implmode": "high_precision"})
    assert cmd.argv[1:] == (
        "--model=/m/tiny.onnx", "--framework=5", "--output=tiny", "--soc_version=Ascend310P3",
        "--input_shape=x:1,3,4,4;m:1,10", "--input_format=NCHW", "--precision_mode_v2=fp16",
        "--keep_dtype=keep_dtype.cfg", "--buffer_optimize=off_optimize",
        "--fusion_switch_file=fusion_switch.cfg", "--out_nodes=sig1:0", "--log=error",
        "--op_select_implmode=high_precision")
    # OpType:: entries reach ATC in Ascend IR spelling (core.ascend_optypes): Softmax -> SoftmaxV2
    assert cmd.config_files == {"keep_dtype.cfg": "conv1\nOpType::SoftmaxV2\n",
                                "fusion_switch.cfg": mode.config_files()["fusion_switch.cfg"]}


def test_user_aipp_file_is_copied_and_hashed_into_the_key(tmp_path):
    aipp = tmp_path / "aipp.cfg"
    aipp.write_text("aipp_op {\n aipp_mode: static\n}\n")
    cmd = build(atc_options={"insert_op_conf": str(aipp)})
    assert cmd.option("insert_op_conf") == "user_insert_op_conf.cfg"
    assert cmd.copied_files == {"user_insert_op_conf.cfg": str(aipp.resolve())}
    key1 = cmd.key_parts()
    aipp.write_text("aipp_op {\n aipp_mode: dynamic\n}\n")
    assert cmd.key_parts() != key1
    assert all("/m/tiny.onnx" not in a for a in key1["args"])


def test_a_file_option_of_mode_extra_is_copied_and_hashed_into_the_key(tmp_path):
    """``Mode(extra=...)`` file options (op_precision_mode, modify_mixlist...) were passed as
    bare paths: the key held the path only, so an edited file reused the old .om (and a
    relative path broke, ATC running in the build directory)."""
    ini = tmp_path / "opp.ini"
    ini.write_text("Conv2D=high_precision\n")
    mode = Mode(extra=(("op_precision_mode", str(ini)),))
    cmd = build(mode)
    assert cmd.option("op_precision_mode") == "user_op_precision_mode.ini"
    assert cmd.copied_files == {"user_op_precision_mode.ini": str(ini.resolve())}
    key1 = cmd.key_parts()
    ini.write_text("Conv2D=high_performance\n")
    assert build(mode).key_parts() != key1
    with pytest.raises(ConfigError, match="option --modify_mixlist.*does not exist"):
        build(Mode(extra=(("modify_mixlist", str(tmp_path / "none.json")),)))
    plain = build(Mode(extra=(("op_select_implmode", "high_precision"),)))
    assert plain.option("op_select_implmode") == "high_precision" and plain.copied_files == {}


@pytest.mark.parametrize("options, message", [
    ({"model": "x.onnx"}, "set by the backend"),
    ({"soc_version": "Ascend910"}, "set by the backend"),
    ({"keep_dtype": "k.cfg"}, "does not exist"),
    ({"Bad Name": "1"}, "not an ATC option"),
    ({"log": "a\nb"}, "single line"),
])
def test_bad_user_options_are_config_errors(options, message):
    with pytest.raises(ConfigError, match=message):
        build(atc_options=options)


def test_mode_option_given_again_by_user_is_refused():
    with pytest.raises(ConfigError, match="set by the mode"):
        build(BUFFER_OFF, atc_options={"buffer_optimize": "l2_optimize"})


def test_input_shape_syntax_and_errors():
    assert format_input_shape({"in1": [1, 3, 224, 224], "in2": (-1, 10)}) == "in1:1,3,224,224;in2:-1,10"
    with pytest.raises(ConfigError, match="cannot be written"):
        format_input_shape({"a;b": (1,)})
    with pytest.raises(ConfigError, match="negative"):
        format_input_shape({"a": (-2,)})


def test_bad_soc_or_output_prefix():
    with pytest.raises(ConfigError, match="soc_version"):
        build(soc_version="Ascend 310; rm -rf")
    with pytest.raises(ConfigError, match="plain file stem"):
        build(output_prefix="../x")


def test_om_to_json_command():
    assert om_to_json_command("/opt/atc", "tiny.om", "tiny.json") == (
        "/opt/atc", "--mode=1", "--om=tiny.om", "--json=tiny.json")


@pytest.mark.parametrize("version, mode_value, passed", [
    ("6.0.1", "allow_fp32_to_fp16", "allow_fp32_to_fp16"),
    ("6.0.1", "cube_fp16in_fp32out", "force_fp32"),          # documented same effect, older spelling
    ("6.0.1", "allow_mix_precision_fp16", "allow_mix_precision"),
    ("6.3.RC2", "allow_mix_precision_bf16", "allow_mix_precision_bf16"),
    ("6.3.RC2", "cube_fp16in_fp32out", "force_fp32"),
    (None, "allow_fp32_to_bf16", "allow_fp32_to_bf16"),        # unknown version: ATC decides
])
def test_precision_mode_value_fits_the_toolkit_version(version, mode_value, passed):
    cmd = build(Mode(precision_mode=mode_value), toolkit_version=version)
    assert cmd.option("precision_mode") == passed and cmd.option("precision_mode_v2") is None


def test_precision_mode_the_toolkit_lacks_is_refused_before_atc_runs():
    with pytest.raises(ConfigError) as info:
        build(Mode(precision_mode="allow_mix_precision_bf16"), toolkit_version="6.0.1")
    assert str(info.value) == (
        "precision_mode: 'allow_mix_precision_bf16' needs CANN 6.2 or later; the installed toolkit is CANN "
        "6.0.1, whose ATC accepts force_fp16, force_fp32, allow_fp32_to_fp16, must_keep_origin_dtype, "
        "allow_mix_precision")
    with pytest.raises(ConfigError, match=r"the same effect on this toolkit: 'force_fp32'"):
        build(toolkit_version="6.3.RC2", atc_options={"precision_mode": "cube_fp16in_fp32out"})
    with pytest.raises(ConfigError, match=r"'force_fp61' is not a precision mode ATC knows.*closest: force_fp16"):
        build(toolkit_version="8.0.RC2", atc_options={"precision_mode": "force_fp61"})


def test_accepted_values_per_release():
    from pytest_ascend_accuracy.backends.ascend.precision_modes import accepted_precision_modes

    assert len(accepted_precision_modes("6.0.RC1")) == 5
    assert "allow_mix_precision_fp16" in accepted_precision_modes("6.2.RC1")
    assert "cube_fp16in_fp32out" not in accepted_precision_modes("6.3.RC2")
    assert len(accepted_precision_modes("7.0.0")) == 8 and len(accepted_precision_modes("8.0.RC2")) == 9
    assert len(accepted_precision_modes(None)) == len(accepted_precision_modes("not-a-version")) == 9

"""One check of the ATC options on every path (``core.atc_option_check``). A trial: ``diagnose``
and ``dataset`` took ``--mode '{..., extra: {output_type: FP16}}'`` and the emulator ignored it
(a false PASS: ATC casts every output to float16); a library call to ``convert`` with such a
``Mode`` too; the neutral options took any value (``log=verbose``, ``input_format=nchw``), and
the ascend backend wrote ``display_model_info=True`` as ``true``, which ATC refuses; one option
given twice in a mode's extra was merged without a word; the gear options were refused with no
way forward."""
import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy import Mode
from pytest_ascend_accuracy.cli import main
from pytest_ascend_accuracy.cli.mode_arg import mode_arg
from pytest_ascend_accuracy.core.atc_option_check import check_atc_options, option_text
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.testing import models as tiny_models

REFUSED = ["output_type", "input_fp16_nodes", "op_select_implmode", "out_nodes", "precison_mode",
           "modify_mixlist"]


@pytest.fixture
def mlp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    onnx.save(tiny_models.passing_mlp(), "mlp.onnx")
    return tmp_path / "mlp.onnx"


@pytest.mark.parametrize("option", REFUSED)
def test_the_clis_mode_refuses_what_the_plugin_refuses(mlp, option):
    with pytest.raises(ConfigError) as info:
        mode_arg(f"{{base: high_precision, extra: {{{option}: x}}}}", mlp)
    assert str(info.value).startswith(f"--mode extra: ATC option {option}=... is refused on "
                                      f"every backend"), info.value


def test_dataset_refuses_output_type_before_converting(mlp, capsys):
    samples = mlp.parent / "ds"
    samples.mkdir()
    np.savez(samples / "s0.npz", x=np.ones((1, 16), np.float32))
    rc = main(["dataset", "mlp.onnx", "ds", "--metric", "agreement", "--cache-dir", "c",
               "--mode", "{base: high_precision, extra: {output_type: FP16}}"])
    err = capsys.readouterr().err
    assert rc == 2 and "--mode extra: ATC option output_type=... is refused" in err, err


def _backend(kind, tmp_path, monkeypatch):
    from pytest_ascend_accuracy.core.cache import Cache

    if kind == "emulator":
        from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend

        return EmulatorBackend(Cache(tmp_path / "cache"))
    from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
    from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend

    use_fake_ascend(monkeypatch, tmp_path / "fake", device_count=1)
    return AscendBackend(Cache(tmp_path / "cache"), device_id=0, progress=None)


@pytest.mark.parametrize("kind", ["emulator", "ascend"])
def test_convert_refuses_a_mode_with_an_option_it_cannot_build(mlp, tmp_path, monkeypatch, kind):
    backend = _backend(kind, tmp_path, monkeypatch)
    with pytest.raises(ConfigError) as info:
        backend.convert(mlp, Mode(extra=(("output_type", "FP16"),)))
    assert str(info.value).startswith("convert: Mode(extra=...): ATC option output_type=... is "
                                      "refused on every backend"), info.value


def test_the_emulator_refuses_an_atc_option_it_would_ignore(mlp, tmp_path, monkeypatch):
    backend = _backend("emulator", tmp_path, monkeypatch)
    with pytest.raises(ConfigError, match="op_select_implmode=... is refused"):
        backend.convert(mlp, atc_options={"op_select_implmode": "high_precision"})


@pytest.mark.parametrize("kind", ["emulator", "ascend"])
@pytest.mark.parametrize("option, value, said", [
    ("log", "verbose", "log=verbose: ATC takes debug, info, warning, error, null, default"),
    ("log", "ERROR", "log=ERROR: ATC takes debug, info, warning, error, null, default (it stops "
                     "with E10010 at any other value); closest: log=error"),
    ("input_format", "NHWC", "input_format=NHWC: ATC takes NCHW, ND, NCDHW (it stops with E10001"),
    ("input_format", "nchw", "closest: input_format=NCHW"),
    ("display_model_info", "yes", "display_model_info=yes: ATC takes 0, 1 (it stops with E10006"),
])
def test_a_neutral_option_takes_only_the_values_atc_takes_on_every_backend(
        mlp, tmp_path, monkeypatch, kind, option, value, said):
    backend = _backend(kind, tmp_path, monkeypatch)
    for call in (lambda: backend.convert(mlp, atc_options={option: value}),
                 lambda: backend.convert(mlp, Mode(extra=((option, value),)))):
        with pytest.raises(ConfigError) as info:
            call()
        assert said in str(info.value), info.value


def test_display_model_info_true_reaches_atc_as_1(mlp, tmp_path, monkeypatch):
    backend = _backend("ascend", tmp_path, monkeypatch)
    assert option_text("display_model_info", True) == "1"
    command = backend.atc_command(mlp, atc_options={"display_model_info": True, "log": "info"})
    assert "--display_model_info=1" in command.argv and "--log=info" in command.argv
    assert backend.convert(mlp, atc_options={"display_model_info": True}).path.is_file()
    emulated = _backend("emulator", tmp_path, monkeypatch).convert(
        mlp, atc_options={"display_model_info": True})
    assert "--display_model_info=1" in _cmdline(emulated)


def _cmdline(converted) -> str:
    from pytest_ascend_accuracy.dump.om_json import read_om_json

    return read_om_json(converted.om_json).attrs["atc_cmdline"]


@pytest.mark.parametrize("extra", [(("log", "debug"), ("log", "info")),
                                   (("log", "debug"), ("--log", "info"))])
def test_an_option_given_twice_in_a_modes_extra_is_refused_naming_both(mlp, tmp_path,
                                                                       monkeypatch, extra):
    mode = Mode(extra=extra)
    said = "ATC option log given twice (log=debug and log=info)"
    with pytest.raises(ConfigError, match=r"given twice \(log=debug and log=info\)"):
        _backend("emulator", tmp_path, monkeypatch).convert(mlp, mode)
    with pytest.raises(ConfigError) as info:
        mode_arg("{extra: {log: debug, --log: info}}", mlp)
    assert str(info.value).startswith(f"--mode extra: {said}"), info.value


@pytest.mark.parametrize("option", ["dynamic_batch_size", "dynamic_image_size", "dynamic_dims",
                                    "input_shape_range"])
def test_a_gear_option_is_refused_saying_what_to_do_instead(option):
    with pytest.raises(ConfigError) as info:
        check_atc_options({option: "1,4,8"}, "ascend_model")
    assert str(info.value) == (
        f"ascend_model: ATC option {option}=1,4,8 builds one .om for several shapes (gears), and "
        f"each check converts and compares one static shape: leave the option out and check each "
        f"gear's shape as a conversion of its own, input_shape={{NAME: [d0, d1, ...]}} per test or "
        f"parametrized case (a YAML item's input_shape: key, diagnose's --input-shape), one per "
        f"gear (README: \"A model deployed with gears\")")


def test_the_yaml_error_example_of_extra_is_an_accepted_option(mlp):
    import yaml

    from pytest_ascend_accuracy.core.modes import mode_from_spec

    with pytest.raises(ConfigError) as info:
        mode_from_spec({"extra": ["log"]}, "modes[0]")
    example = str(info.value).partition("e.g. ")[2].partition(", got")[0]
    assert example == "{log: info}"
    assert mode_arg(f"{{extra: {example}}}", mlp).extra == (("log", "info"),)
    assert mode_from_spec({"extra": yaml.safe_load(example)}).extra == (("log", "info"),)


def test_atc_convert_advice_names_the_modes_own_entries_and_the_file_given():
    """Under the default base the mode's own keep_dtype entries went unnamed (under
    high_precision they were named), and the AIPP fix said aipp="aipp.cfg" for any file (H96)."""
    from pytest_ascend_accuracy import Mode, keep_dtype
    from pytest_ascend_accuracy.core.atc_option_check import atc_convert_advice

    assert "with the mode's own 'a';" in atc_convert_advice(keep_dtype(["a"]))["keep_dtype"]
    assert 'ascend_model(model, aipp="my a.cfg")' in atc_convert_advice(
        Mode(extra={"insert_op_conf": "my a.cfg"}))["insert_op_conf"]
    assert 'ascend_model(model, aipp="b.cfg")' in atc_convert_advice(
        None, {"insert_op_conf": "b.cfg"})["insert_op_conf"]

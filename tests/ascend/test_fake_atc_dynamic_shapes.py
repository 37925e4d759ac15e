"""The FAKE atc against GE's dynamic-shape checks (``CheckAndTransferInputShapeToRange``, then
``CheckDynamicInputParamValid``; main.cc's ``--display_model_info`` check), cited in
``testing/fake_atc_checks``. A trial (/tmp/t53 proof_fake_atc.sh) found the fake building the
static model from ``--input_shape`` beside ``--input_shape_range``, refusing a range beside a
gear option with its own profile words instead of E10009, ``'~'`` with a gear option with
"dims must be integers" instead of E10040, a range build with an untrue "set --input_shape",
and taking any ``--display_model_info``."""
import pytest

from pytest_ascend_accuracy.testing import fake_atc
from pytest_ascend_accuracy.testing.fake_atc_checks import (NO_DYNAMIC_SHAPE, RANGE_DEPRECATED,
                                                            RANGE_OVERRIDES)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("FAKE_ATC_FAIL", "FAKE_ATC_HANG", "FAKE_ATC_REJECT", "FAKE_ATC_CALLS"):
        monkeypatch.delenv(var, raising=False)


def run(capsys, model, *extra):
    """(exit code, lines after the start line) of one conversion."""
    code = fake_atc.main([f"--model={model}", "--framework=5", "--output=tiny",
                          "--soc_version=Ascend310P3", *extra])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == fake_atc.START_LINE
    return code, lines[1:]


def refused(lines):
    """(the lines before ATC's failed line, its error line)."""
    k = lines.index(fake_atc.FAILED_LINE)
    return lines[:k], lines[k + 1]


def test_a_range_beside_a_gear_option_is_e10009(capsys, model_factory, tmp_path):
    model = model_factory("dyn.onnx", dynamic_batch=True)
    code, lines = run(capsys, model, "--input_shape=x:-1,3,4,4",
                      "--input_shape_range=x:[1~4,3,4,4]", "--dynamic_batch_size=1,2")
    assert code == 255
    before, error = refused(lines)
    assert before == [RANGE_DEPRECATED, RANGE_OVERRIDES]
    assert error == ("E10009: --dynamic_batch_size, --dynamic_image_size, --input_shape_range, "
                     "and --dynamic_dims are mutually exclusive.")
    assert not (tmp_path / "tiny.om").exists()


def test_a_range_overrides_a_static_input_shape_never_builds_it(capsys, tiny_model, tmp_path):
    code, lines = run(capsys, tiny_model, "--input_shape=x:1,3,4,4",
                      "--input_shape_range=x:[1~4,3,4,4]")
    assert code == 255  # was 0: the static x:1,3,4,4 model, the range ignored
    before, error = refused(lines)
    assert before == [RANGE_DEPRECATED, RANGE_OVERRIDES]
    assert error == ("E10001: Value [x:[1~4,3,4,4]] for parameter [--input_shape_range] is "
                     f"invalid. Reason: {NO_DYNAMIC_SHAPE}")
    assert not (tmp_path / "tiny.om").exists()


@pytest.mark.parametrize("args, option, value", [
    (("--input_shape_range=x:[1~4,3,4,4]",), "input_shape_range", "x:[1~4,3,4,4]"),
    (("--input_shape=x:-1,3,4,4",), "input_shape", "x:-1,3,4,4"),
    (("--input_shape=x:1~4,3,4,4",), "input_shape", "x:1~4,3,4,4"),
])
def test_a_shape_range_build_is_refused_in_the_fakes_words(capsys, model_factory, args,
                                                           option, value):
    model = model_factory("dyn.onnx", dynamic_batch=True)
    code, lines = run(capsys, model, *args)
    assert code == 255
    _, error = refused(lines)
    assert error == (f"E10001: Value [{value}] for parameter [--{option}] is invalid. Reason: "
                     f"{NO_DYNAMIC_SHAPE}")
    assert "set --input_shape" not in error


def test_a_model_left_dynamic_is_refused_in_the_fakes_words(capsys, model_factory):
    code, lines = run(capsys, model_factory("dyn.onnx", dynamic_batch=True))
    assert code == 255
    _, error = refused(lines)
    assert "the FAKE atc builds no dynamic-shape model" in error
    assert "; set --input_shape" not in error


def test_a_range_in_input_shape_with_a_gear_option_is_e10040(capsys, model_factory):
    model = model_factory("dyn.onnx", dynamic_batch=True)
    code, lines = run(capsys, model, "--input_shape=x:1~4,3,4,4", "--dynamic_batch_size=1,2")
    assert code == 255
    _, error = refused(lines)
    assert error == ("E10040: As the --dynamic_batch_size, --dynamic_image_size, or "
                     "--dynamic_dims argument is included, the corresponding nodes specified in "
                     "--input_shape must have -1 axes and cannot have '~'.")


@pytest.mark.parametrize("value, ok", [("0", True), ("1", True), ("2", False),
                                       ("true", False)])
def test_display_model_info_takes_0_or_1(capsys, tiny_model, value, ok):
    code, lines = run(capsys, tiny_model, f"--display_model_info={value}")
    assert (code == 0) is ok, lines
    if not ok:
        _, error = refused(lines)
        assert error == (f"E10006: Value {value} for parameter --display_model_info is invalid. "
                         f"The value must be either 1 or 0.")

"""A mode's own ATC option given under ``extra:`` is refused, and the advice is the mode meant,
whole, in the spelling of where it was written. It said ``use Mode(buffer_optimize=...)`` to a
YAML suite and to ``diagnose --mode``, where no Python runs (README/docs trial), then gave the
bare key, which dropped the mode's base and other options and pasted values YAML misreads
(``off``) or no mode takes (review); it now gives the mode's YAML/--mode form and its Python
form, both pasted whole, and names the values no mode takes."""
import re

import pytest
import yaml

from pytest_ascend_accuracy import Mode
from pytest_ascend_accuracy.core.modes import BUFFER_OFF, mode_from_spec
from pytest_ascend_accuracy.errors import ConfigError

SUITE = """
models:
  - model: models/overflow.onnx
    modes: [{mode}]
"""


def _advised(text: str):
    """(the YAML / --mode form, the Python expression) the refusal advises."""
    match = re.search(r"the mode meant, whole: (.*?) in a YAML suite's modes or --mode, (.*?) in "
                      r"Python", text)
    assert match, text
    return match.group(1), match.group(2)


def test_the_yaml_suite_advice_pasted_in_place_of_the_extra_entry_runs(pytester, models_dir):
    pytester.makefile(".yaml", accuracy_m=SUITE.format(
        mode="{extra: {buffer_optimize: off_optimize}}"))
    refused = pytester.runpytest("-q")
    refused.stdout.fnmatch_lines(["*modes[[]0]: extra ATC option 'buffer_optimize' is what the "
                                  "mode itself sets: write it as the mode's own key, not in "
                                  "extra; the mode meant, whole: buffer_off in a YAML suite's*"])
    mapping, _ = _advised(refused.stdout.str())
    pytester.makefile(".yaml", accuracy_m=SUITE.format(mode=mapping))
    ran = pytester.runpytest("-q", "-rA")
    ran.assert_outcomes(failed=1)  # a verdict: overflow fails in float16 whatever the buffers
    ran.stdout.fnmatch_lines(["FAILED accuracy_m.yaml::overflow[[]buffer_off]*"])


@pytest.mark.parametrize("spec, expected", [
    ({"extra": {"buffer_optimize": "off_optimize"}}, BUFFER_OFF),
    ({"extra": {"precision_mode": "force_fp32"}}, Mode(precision_mode="force_fp32")),
    ({"extra": {"precision_mode_v2": "mixed_float16"}}, Mode(precision_mode="allow_mix_precision")),
    # the base, the other fields and the other extra options are the mode's too
    ({"base": "fusion_off", "keep_dtype": ["norm"],
      "extra": {"precision_mode": "allow_fp32_to_fp16", "op_select_implmode": "high_precision"}},
     Mode(precision_mode="allow_fp32_to_fp16", fusion=False, keep_dtype=("norm",),
          extra=(("op_select_implmode", "high_precision"),))),
])
def test_each_spelling_of_the_advice_is_the_mode_meant(spec, expected):
    import pytest_ascend_accuracy as api

    with pytest.raises(ConfigError) as info:
        mode_from_spec(spec, "modes[0]")
    text, python = _advised(str(info.value))
    assert mode_from_spec(yaml.safe_load(text)) == expected
    names = {name: getattr(api, name) for name in api.__all__}  # from pytest_ascend_accuracy
    assert eval(python, names) == expected


def test_a_keep_dtype_file_is_read_and_its_ops_are_the_advice(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.cfg").write_text("norm\nOpType::Softmax\n")
    with pytest.raises(ConfigError) as info:
        mode_from_spec({"base": "fusion_off", "extra": {"keep_dtype": "keep.cfg"}}, "modes[0]")
    text, _ = _advised(str(info.value))
    assert mode_from_spec(yaml.safe_load(text)) == Mode(fusion=False,
                                                        keep_dtype=("norm", "OpType::SoftmaxV2"))


@pytest.mark.parametrize("option, value, said", [
    ("precision_mode", "fp16", "'fp16' is no --precision_mode value here; known: force_fp16,"),
    ("buffer_optimize", "off", "'off' is no --buffer_optimize value here; known: l2_optimize, "
                               "l1_optimize, off_optimize"),
    ("precision_mode_v2", "cube_hif8", "--precision_mode_v2=cube_hif8 is no mode here; a mode "
                                       "converts with fp16, origin,"),
    ("keep_dtype", "gone/keep.cfg", "its file 'gone/keep.cfg' cannot be read from here"),
])
def test_a_value_no_mode_takes_is_named_not_pasted_back(option, value, said):
    with pytest.raises(ConfigError) as info:
        mode_from_spec({"extra": {option: value}}, "modes[0]")
    assert said in str(info.value) and "the mode meant" not in str(info.value)


def test_the_diagnose_mode_advice_pasted_runs(tmp_path, monkeypatch, capsys):
    import onnx

    from pytest_ascend_accuracy.cli import main
    from pytest_ascend_accuracy.testing import models as tiny_models

    monkeypatch.chdir(tmp_path)
    onnx.save(tiny_models.overflow_model(), "overflow.onnx")
    args = ["diagnose", "overflow.onnx", "--cache-dir", "cache", "--out", "fix"]
    assert main(args + ["--mode", "{extra: {precision_mode: force_fp32}}"]) == 2
    mapping, _ = _advised(capsys.readouterr().err)
    assert mapping == '{precision_mode: "force_fp32"}'
    assert main(args + ["--mode", mapping]) == 0  # float32 throughout: the overflow is gone
    assert "force_fp32" in capsys.readouterr().out

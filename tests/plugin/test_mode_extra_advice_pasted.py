"""A mode's own ATC option given under ``extra:`` is refused, and the advice is the spelling of
where it was written. It said ``use Mode(buffer_optimize=...)`` to a YAML suite and to
``diagnose --mode``, where no Python runs (README/docs trial); it now gives the mode mapping,
with the value, and that mapping pasted in place of the extra entry runs."""
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
    """(the mapping, the Python expression) the refusal advises."""
    match = re.search(r"instead of extra: (\{[^}]*\}) in a YAML mode or --mode, (\S+\)) in "
                      r"Python", text)
    assert match, text
    return match.group(1), match.group(2)


def test_the_yaml_suite_advice_pasted_in_place_of_the_extra_entry_runs(pytester, models_dir):
    pytester.makefile(".yaml", accuracy_m=SUITE.format(
        mode="{extra: {buffer_optimize: off_optimize}}"))
    refused = pytester.runpytest("-q")
    refused.stdout.fnmatch_lines(["*modes[[]0]: extra ATC option 'buffer_optimize' is what the "
                                  "mode itself sets: write it as the mode's own key instead of "
                                  "extra: {buffer_optimize: off_optimize} in a YAML mode*"])
    mapping, _ = _advised(refused.stdout.str())
    pytester.makefile(".yaml", accuracy_m=SUITE.format(mode=mapping))
    ran = pytester.runpytest("-q", "-rA")
    ran.assert_outcomes(failed=1)  # a verdict: overflow fails in float16 whatever the buffers
    ran.stdout.fnmatch_lines(["FAILED accuracy_m.yaml::overflow[[]buffer_off]*"])


@pytest.mark.parametrize("option, value, expected", [
    ("buffer_optimize", "off_optimize", BUFFER_OFF),
    ("precision_mode", "force_fp32", Mode(precision_mode="force_fp32")),
    ("precision_mode_v2", "mixed_float16", Mode(precision_mode="allow_mix_precision")),
])
def test_each_spelling_of_the_advice_is_the_mode_meant(option, value, expected):
    with pytest.raises(ConfigError) as info:
        mode_from_spec({"extra": {option: value}}, "modes[0]")
    mapping, python = _advised(str(info.value))
    assert mode_from_spec(yaml.safe_load(mapping)) == expected
    assert eval(python, {"Mode": Mode}) == expected


def test_the_diagnose_mode_advice_pasted_runs(tmp_path, monkeypatch, capsys):
    import onnx

    from pytest_ascend_accuracy.cli import main
    from pytest_ascend_accuracy.testing import models as tiny_models

    monkeypatch.chdir(tmp_path)
    onnx.save(tiny_models.overflow(), "overflow.onnx")
    args = ["diagnose", "overflow.onnx", "--cache-dir", "cache", "--out", "fix"]
    assert main(args + ["--mode", "{extra: {precision_mode: force_fp32}}"]) == 2
    mapping, _ = _advised(capsys.readouterr().err)
    assert mapping == "{precision_mode: force_fp32}"
    assert main(args + ["--mode", mapping]) == 0  # float32 throughout: the overflow is gone
    assert "force_fp32" in capsys.readouterr().out

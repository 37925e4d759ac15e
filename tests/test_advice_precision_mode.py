"""An unknown precision_mode names the closest known one, as every other unknown name does (a
YAML trial: "unknown precision_mode 'allow_fp32_to_fp61'; known: ..." named none), and the
value it names, pasted into the same mode, is accepted."""
import re

import pytest

from pytest_ascend_accuracy.core.modes import Mode, mode_from_spec
from pytest_ascend_accuracy.errors import ConfigError


def test_a_misspelled_precision_mode_names_the_closest_and_it_pastes():
    with pytest.raises(ConfigError) as info:
        mode_from_spec({"precision_mode": "allow_fp32_to_fp61"}, "models[0].modes[0]")
    text = str(info.value)
    assert "unknown precision_mode 'allow_fp32_to_fp61'; closest: 'allow_fp32_to_fp16'; known: " \
           "force_fp16, " in text, text
    closest = re.search(r"closest: '([^']+)'", text).group(1)
    assert mode_from_spec({"precision_mode": closest}) == Mode(precision_mode="allow_fp32_to_fp16")


def test_a_value_near_none_lists_them_without_a_closest():
    with pytest.raises(ConfigError,
                       match=r"unknown precision_mode 'fp8'; known: force_fp16") as info:
        Mode(precision_mode="fp8")
    assert "closest" not in str(info.value)


def test_a_misspelled_buffer_optimize_names_the_closest_and_it_pastes():
    with pytest.raises(ConfigError) as info:
        mode_from_spec({"buffer_optimize": "off_optimise"}, "models[0].modes[0]")
    text = str(info.value)
    assert "unknown buffer_optimize 'off_optimise'; closest: 'off_optimize'; known: " in text, text
    closest = re.search(r"closest: '([^']+)'", text).group(1)
    assert mode_from_spec({"buffer_optimize": closest}) == Mode(buffer_optimize="off_optimize")

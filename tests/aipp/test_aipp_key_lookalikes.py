"""An unknown key's suggestions start with the key it spells with a look-alike character (O for
0, l for 1) or in another case: ``mean_chn_O`` was answered "did you mean mean_chn_3,
mean_chn_2, mean_chn_1?", without mean_chn_0 (an AIPP trial: a copied sample with the letter O
typed for zero)."""
import pytest

from pytest_ascend_accuracy.aipp import parse_aipp_config
from pytest_ascend_accuracy.errors import ConfigError

BLOCK = "aipp_op {{\n  aipp_mode: static\n  input_format: RGB888_U8\n  {line}\n}}\n"


@pytest.mark.parametrize("line, first", [
    ("mean_chn_O: 123", "mean_chn_0"),
    ("var_reci_chn_l: 0.0175", "var_reci_chn_1"),
    ("matrix_rOcI: 0", "matrix_r0c1"),
    ("Crop_Size_W: 16", "crop_size_w"),
])
def test_the_key_meant_is_suggested_first(line, first):
    with pytest.raises(ConfigError) as err:
        parse_aipp_config(BLOCK.format(line=line), "cam.cfg")
    key = line.split(":")[0]
    assert err.value.where == "cam.cfg:4", err.value.where
    assert err.value.problem.startswith(f"{key}: unknown AIPP key (did you mean {first}"), \
        err.value.problem


def test_a_plain_typo_keeps_its_suggestions():
    with pytest.raises(ConfigError) as err:
        parse_aipp_config(BLOCK.format(line="rbuv_swap_swich: true"), "cam.cfg")
    assert err.value.problem == ("rbuv_swap_swich: unknown AIPP key (did you mean "
                                 "rbuv_swap_switch, ax_swap_switch?)"), err.value.problem

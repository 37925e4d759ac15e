"""A fix's ATC arguments for a model whose only input is a scalar hold no empty
``--input_shape=`` (a scalar takes no entry: CANN 6.0 refuses ``name:``, E10002; F8)."""
from pytest_ascend_accuracy.core.modes import DEFAULT
from pytest_ascend_accuracy.triage.atc_args import _mode_spelling


def test_scalar_inputs_get_no_input_shape_option():
    alone = dict(_mode_spelling(DEFAULT, {"sr": []}, {}).options)
    assert "input_shape" not in alone
    beside = dict(_mode_spelling(DEFAULT, {"sr": [], "x": [1, 4]}, {}).options)
    assert beside["input_shape"] == "x:1,4"

"""An op named like another op's tensor (``conv:output:0``, as the failure table spells output
0 of op ``conv``): a per_op or ignore entry by that name applied to both, and a device whose
``conv`` was wrong passed with ``ignore=["conv:output:0"]`` (an odd-graphs trial). Refused."""
import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.report.assertion import assert_accuracy

Y = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)
GOLDEN = DumpSet.from_arrays({"conv": [Y], "conv:output:0": [np.abs(Y)]})
DEVICE = DumpSet.from_arrays({"conv": [-Y], "conv:output:0": [np.abs(Y)]})  # conv wrong
SAID = ("names an op and also, as the failure table spells tensors, an output of op 'conv': "
        "it would apply to both; rename one of the two ops in the model")


@pytest.mark.parametrize("setting", [{"ignore": ["conv:output:0"]},
                                     {"per_op": {"conv:output:0": -1.0}}])
def test_an_entry_naming_an_op_and_another_op_s_tensor_is_refused(setting):
    with pytest.raises(ConfigError) as info:
        assert_accuracy(DEVICE, GOLDEN, threshold=0.95, **setting)
    assert SAID in str(info.value)
    with pytest.raises(ConfigError) as judged:  # the CLI's judge path
        compare_dumps(DEVICE, GOLDEN).judge(0.95, **setting)
    assert SAID in str(judged.value)


def test_the_op_s_own_name_and_unclashing_names_are_taken():
    result = compare_dumps(DEVICE, GOLDEN)
    assert result.judge(0.95, ignore=["conv"]).passed
    assert not result.judge(0.95).passed


@pytest.mark.parametrize("entry", ["conv:output:[0]", "conv:output:*"])
def test_a_glob_matching_a_clashing_name_is_refused_too(entry):
    """A review: the exact name was refused, a glob matching only it was taken, and passed."""
    with pytest.raises(ConfigError) as info:
        compare_dumps(DEVICE, GOLDEN).judge(0.95, ignore=[entry])
    assert SAID in str(info.value)


def test_a_fused_row_s_golden_tensor_name_clashing_with_an_op_is_refused_in_judge():
    """A review: a fused convrelu compared with golden relu carries 'relu:output:0' among its
    names; with an op of that name, judge (the CLI's path) took ignore=['relu:output:0'] and
    passed a device whose op 'relu:output:0' was wrong."""
    y = np.linspace(-1, 1, 16, dtype=np.float32)
    golden = DumpSet.from_arrays({"conv": [y], "relu": [np.maximum(y, 0)],
                                  "relu:output:0": [y * 2]})
    device = DumpSet.from_arrays({"convrelu": [np.maximum(y, 0)], "relu:output:0": [-y * 2]},
                                 original_names={"convrelu": ["conv", "relu"]})
    with pytest.raises(ConfigError) as info:
        compare_dumps(device, golden).judge(0.95, ignore=["relu:output:0"])
    assert "an output of op 'relu'" in str(info.value)

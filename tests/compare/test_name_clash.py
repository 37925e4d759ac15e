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

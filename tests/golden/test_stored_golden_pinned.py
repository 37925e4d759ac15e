"""A stored golden handed to a test is the one its checks vouched for, even when another pytest
session rewrites it before the test compares (H100: ``--accuracy-regen-all`` in one session,
between another's check of the golden and its compare, a conversion and a device run later,
gave that test the other session's tensors under the same file names: a false failure naming
an op). ``GoldenPolicy.obtain`` hands out the golden as its files were under the lock
(``dump.pinned``)."""
import numpy as np

from pytest_ascend_accuracy.core.regen import Regen
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.golden import stored
from pytest_ascend_accuracy.golden import stored_record as rec
from tests.golden.test_stored_record_check import computer


def _values(golden):
    return {op.name: [t.load().copy() for t in op.outputs] for op in golden}


def test_a_golden_rewritten_after_it_was_handed_out_is_compared_as_it_was(tmp_path, model):
    path = tmp_path / "golden" / "mlp"
    compute = computer(model)
    stored.GoldenPolicy().obtain(path, compute, compute.identity)  # written (missing)
    golden, status = stored.GoldenPolicy().obtain(path, compute, compute.identity)
    assert status == stored.USED
    checked = {name: [v.copy() for v in vs] for name, vs in _values(golden).items()}

    def other():  # another session's model run: the same op names, other values
        dump = DumpSet.from_arrays({"fc1_MatMul": [np.full((2, 3), 7, np.float32)],
                                    "relu1": [np.zeros(4, np.float32)]})
        dump.meta[rec.SOURCE_META] = compute.identity.as_meta()
        return dump

    _, status = stored.GoldenPolicy(Regen.ALL).obtain(path, other, compute.identity)
    assert status == stored.REWRITTEN_ALL
    now = _values(stored.GoldenPolicy().obtain(path, other, compute.identity)[0])
    assert not np.array_equal(now["relu1"][0], checked["relu1"][0])  # the files did change
    handed = _values(golden)
    assert handed.keys() == checked.keys()
    for name, values in checked.items():
        for got, want in zip(handed[name], values):
            np.testing.assert_array_equal(got, want)

"""A stored golden handed to a test is compared only as its checks vouched for it, even when
another pytest session rewrites it before the test compares (H100: ``--accuracy-regen-all`` in
one session, between another's check of the golden and its compare, a conversion and a device
run later, gave that test the other session's tensors under the same file names: a false
failure naming an op). ``GoldenPolicy.obtain`` hands out the golden held to its files as they
were under the lock (``dump.pinned``): a read of a replaced file is an error saying so, through
``TensorRef.load`` and through the compare engine's direct read (``FileSpan``); and no file is
held open meanwhile (H101: one descriptor per tensor ran a 1,393-file golden out of 1,024)."""
import os

import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.core.regen import Regen
from pytest_ascend_accuracy.dump.file_span import span_of
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.dump.pinned import REPLACED
from pytest_ascend_accuracy.errors import DumpFormatError
from pytest_ascend_accuracy.golden import stored
from pytest_ascend_accuracy.golden import stored_record as rec
from tests.golden.test_stored_record_check import computer


def _handed_out_then_rewritten(tmp_path, model):
    path = tmp_path / "golden" / "mlp"
    compute = computer(model)
    stored.GoldenPolicy().obtain(path, compute, compute.identity)  # written (missing)
    golden, status = stored.GoldenPolicy().obtain(path, compute, compute.identity)
    assert status == stored.USED
    checked = {op.name: [t.load().copy() for t in op.outputs] for op in golden}

    def other():  # another session's model run: the same op names, other values
        dump = DumpSet.from_arrays({"fc1_MatMul": [np.full((2, 3), 7, np.float32)],
                                    "relu1": [np.zeros(4, np.float32)]})
        dump.meta[rec.SOURCE_META] = compute.identity.as_meta()
        return dump

    return path, golden, checked, other, compute


def test_a_golden_rewritten_after_it_was_handed_out_is_never_compared(tmp_path, model):
    path, golden, checked, other, compute = _handed_out_then_rewritten(tmp_path, model)
    before = {op.name: [t.load().copy() for t in op.outputs] for op in golden}
    assert before.keys() == checked.keys()  # read as often as wanted while the files stay
    _, status = stored.GoldenPolicy(Regen.ALL).obtain(path, other, compute.identity)
    assert status == stored.REWRITTEN_ALL
    for op in golden:
        for t in op.outputs:
            with pytest.raises(DumpFormatError, match="changed on disk since this golden was"):
                t.load()
            span = span_of(t.loader)
            assert span is not None  # the compare engine's own read refuses it too
            with pytest.raises(DumpFormatError, match="another pytest session's --accuracy-regen"):
                span.read_into(np.empty(span.nbytes + 8, np.uint8))
    with pytest.raises(DumpFormatError) as err:
        compare_dumps(golden, golden)
    assert REPLACED in str(err.value)


def _written_with_ops(tmp_path, model, ops: int, size: int):
    """(path, compute, identity) of a stored golden of ``ops`` ops of ``size`` values each."""
    path = tmp_path / "golden" / "big"
    compute = computer(model)

    def many():
        dump = DumpSet.from_arrays({f"op{k}": [np.full(size, k, np.float32)] for k in range(ops)})
        dump.meta[rec.SOURCE_META] = compute.identity.as_meta()
        return dump

    stored.GoldenPolicy().obtain(path, many, compute.identity)
    return path, many, compute.identity


def test_a_handed_out_golden_holds_no_file_open(tmp_path, model):
    path, many, identity = _written_with_ops(tmp_path, model, 300, 3)
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    golden, _ = stored.GoldenPolicy().obtain(path, many, identity)
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) - before < 10
    assert [float(op.outputs[0].load()[0]) for op in golden][:3] == [0.0, 1.0, 2.0]


def test_a_replaced_golden_in_a_parallel_compare_is_one_clean_error(tmp_path, model, capfd):
    """The forked children of a parallel compare (compare/parallel.py) stop quietly on a
    replaced file and the parent raises it: each child printed a traceback (H102)."""
    from pytest_ascend_accuracy.compare import parallel

    if not parallel.available():
        pytest.skip("the parallel compare forks: Linux only")
    path, many, identity = _written_with_ops(tmp_path, model, 200, 64)
    golden, _ = stored.GoldenPolicy().obtain(path, many, identity)
    for f in path.glob("*.npy"):
        os.utime(f, ns=(1, 1))  # (touched: as a git checkout of the same bytes)
    capfd.readouterr()
    with pytest.raises(DumpFormatError, match="changed on disk since this golden was checked"):
        compare_dumps(golden, golden, workers=4)
    assert "Traceback" not in capfd.readouterr().err

"""``compare_dumps`` takes what ``assert_accuracy`` takes and refuses counts below 1 (API review
findings 1 and 2; each failed on the code before the fix)."""
from pathlib import Path

import numpy as np
import pytest

from pytest_ascend_accuracy import compare_dumps
from pytest_ascend_accuracy.compare import parallel
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter
from pytest_ascend_accuracy.errors import ConfigError


def _dumps(tmp_path):
    """Two one-op npy dumps, the actual a little off its golden."""
    values = np.linspace(-1, 1, 64, dtype=np.float32)
    for side, arr in (("actual", values + 0.01), ("golden", values)):
        with NpyDumpWriter(tmp_path / side) as writer:
            writer.write_op("relu", [], [arr], timestamp_us=1)
    return tmp_path / "actual", tmp_path / "golden"


@pytest.mark.parametrize("as_path", [str, Path])
@pytest.mark.parametrize("side", ["actual", "golden", "both"])
def test_either_side_may_be_a_path_as_in_assert_accuracy(tmp_path, as_path, side):
    """Paths gave ``AttributeError: 'str' object has no attribute 'ops'``."""
    actual, golden = _dumps(tmp_path)
    expected = compare_dumps(load_dump(actual), load_dump(golden))
    a = as_path(actual) if side in ("actual", "both") else load_dump(actual)
    g = as_path(golden) if side in ("golden", "both") else load_dump(golden)
    result = compare_dumps(a, g)
    assert [(r.op_name, r.golden_name, r.metrics.cosine) for r in result.rows] == \
        [(r.op_name, r.golden_name, r.metrics.cosine) for r in expected.rows]
    assert result.golden_root == expected.golden_root


def test_anything_else_is_refused_naming_its_type(tmp_path):
    actual, _ = _dumps(tmp_path)
    with pytest.raises(TypeError, match="expected a DumpSet or a path to a dump, got int"):
        compare_dumps(str(actual), 3)


@pytest.mark.parametrize("kwargs, words", [
    ({"chunk_size": 0}, r"compare_dumps\(chunk_size=\): must be an int of 1 or more, got 0"),
    ({"chunk_size": -5}, r"chunk_size=\): must be an int of 1 or more, got -5"),
    ({"chunk_size": 2.5}, r"chunk_size=\): must be an int of 1 or more, got 2.5"),
    ({"workers": 0}, r"compare_dumps\(workers=\): must be an int of 1 or more or None, got 0"),
    ({"workers": -1}, r"workers=\): must be an int of 1 or more or None, got -1"),
])
def test_counts_below_one_are_a_config_error_naming_the_argument(tmp_path, kwargs, words):
    """``chunk_size=0`` raised ``range() arg 3 must not be zero`` (or nothing, on the compiled
    kernel); ``workers=-1`` was taken as one process."""
    actual, golden = _dumps(tmp_path)
    with pytest.raises(ConfigError, match=words):
        compare_dumps(load_dump(actual), load_dump(golden), **kwargs)


def test_counts_of_one_or_more_still_compare(tmp_path):
    """(The numpy kernel -- no C compiler, or ASCEND_ACCURACY_NUMPY_KERNEL=1 -- sums in float32
    chunks: 7-value chunks give a cosine 5e-12 from the default chunks' there.)"""
    from pytest_ascend_accuracy.compare import pair_sums

    actual, golden = _dumps(tmp_path)
    rows = compare_dumps(actual, golden, chunk_size=np.int64(7), workers=1).rows
    assert rows[0].metrics.cosine == pytest.approx(
        compare_dumps(actual, golden).rows[0].metrics.cosine,
        abs=1e-12 if pair_sums.pair_sums_extension() is not None else 1e-9)


@pytest.mark.parametrize("workers", [0, -1, True])
def test_processes_for_refuses_workers_below_one(workers):
    with pytest.raises(ConfigError, match="workers: must be 1 or more"):
        parallel.processes_for(1 << 30, workers)

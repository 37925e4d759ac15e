"""Tensor pairs measured by forked worker processes (compare.parallel): the same rows in the
same order as one process, and never a hang or a lost row when a child dies or stalls."""
import os
import time

import numpy as np
import pytest

from pytest_ascend_accuracy.compare import parallel
from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.core import cpu_share
from pytest_ascend_accuracy.dump.model import DumpSet

pytestmark = pytest.mark.skipif(not parallel.available(), reason="forked workers: Linux only")


def _collect(count, measure, processes):
    out = []
    parallel.measure_in_processes(count, measure, processes, lambda i, row: out.append((i, row)))
    return out


def test_rows_come_back_in_order_from_every_process():
    import multiprocessing

    parent = os.getpid()
    # the parent measures on once a child has measured a pair (bounded): under load the parent
    # alone finished all 40 first, as it did when the forked children started 0.3 s late
    child_measured, waited = multiprocessing.get_context("fork").Event(), []

    def measure(i):
        if os.getpid() != parent:
            child_measured.set()
        elif not waited:
            waited.append(child_measured.wait(60))
        time.sleep(0.005)  # not instant: rows of every process interleave
        return i * i, os.getpid() != parent

    out = _collect(40, measure, 3)
    assert [i for i, _ in out] == list(range(40))
    assert [row[0] for _, row in out] == [i * i for i in range(40)]
    assert any(row[1] for _, row in out)  # children measured some of them
    assert parallel.LAST_RUN["processes"] == 3


def test_a_child_that_dies_loses_no_row():
    parent = os.getpid()

    def measure(i):
        if os.getpid() != parent and i >= 5:
            os._exit(3)  # killed mid-compare (OOM killer, a crash in a C extension)
        return -i

    out = _collect(30, measure, 3)
    assert out == [(i, -i) for i in range(30)]


def test_a_stalled_child_is_killed_and_its_pairs_measured_here(monkeypatch):
    monkeypatch.setattr(parallel, "STALL_S", 0.3)
    parent = os.getpid()

    def measure(i):
        if os.getpid() != parent:
            time.sleep(3600)  # a deadlocked child
        return i + 100

    started = time.monotonic()
    out = _collect(6, measure, 2)
    assert out == [(i, i + 100) for i in range(6)]
    assert time.monotonic() - started < 30


def test_compare_dumps_in_processes_equals_one_process():
    rng = np.random.default_rng(5)
    golden = {f"op{i}": [rng.standard_normal(20000 + 999 * i).astype(np.float32)] for i in range(9)}
    actual = {k: [(v[0] * 1.01 + 0.001).astype(np.float16)] for k, v in golden.items()}
    actual["op4"][0][3] = np.inf
    a, g = DumpSet.from_arrays(actual), DumpSet.from_arrays(golden)
    one = compare_dumps(a, g, workers=1)
    seen = []
    many = compare_dumps(a, g, workers=3, progress=lambda p: seen.append((p.done, p.op_name)))
    assert many.rows == one.rows
    assert seen == [(i + 1, f"op{i}") for i in range(9)]


def test_how_many_processes(monkeypatch):
    monkeypatch.setattr(cpu_share, "_SHARE", [None])
    cpu_share.set_core_share(4)
    assert parallel.processes_for(parallel.MIN_BYTES, None) == 4
    assert parallel.processes_for(parallel.MIN_BYTES - 1, None) == 1  # too small to fork for
    assert parallel.processes_for(10, 3) == 3  # asked for
    cpu_share.set_core_share(1)  # an xdist worker's share on a 2-core machine under -n 2
    assert parallel.processes_for(1 << 40, None) == 1

"""Dataset figures in the session summary, and their trip from xdist workers to the controller."""
from __future__ import annotations

from pytest_ascend_accuracy.dataset.result import Culprit, DatasetResult, to_record
from pytest_ascend_accuracy.plugin.session import AccuracyState, Settings
from pytest_ascend_accuracy.plugin.terminal_report import summary_lines


def _result(device: float, **kw) -> DatasetResult:
    return DatasetResult(metric="top1", reference=0.5, device=device, max_drop=0.01, samples=20,
                         rows=20, model="spiky", mode=kw.pop("mode", "default"), **kw)


def test_worker_records_reach_the_controller_and_the_summary():
    worker = AccuracyState(Settings())
    failed = _result(0.4, flipped=("3", "11"), culprit=Culprit("3", op="amplify2", op_type="Mul"))
    worker.dataset_records.append(to_record(failed, "t.py::test[default]"))
    controller = AccuracyState(Settings())
    controller.dataset_records.append(to_record(_result(0.5, mode="high_precision"),
                                                "t.py::test[high_precision]"))
    controller.merge_worker(worker.to_workeroutput())
    lines = summary_lines([], backend="emulator", cache_stats={},
                          dataset_records=controller.dataset_records)
    assert "no accuracy checks ran" not in lines
    assert lines[1:] == [
        "2 dataset checks: 1 passed, 1 failed",
        "  spiky [default] top1 0.4000 device vs 0.5000 reference (drop 0.1000 > 0.01), "
        "20 samples, 2 flipped",
        "  spiky [high_precision] top1 0.5000 device vs 0.5000 reference (drop 0.0000 <= 0.01), "
        "20 samples, 0 flipped",
        "FAILED t.py::test[default] [spiky, default]: top1 drop 0.1000 > max_drop 0.01; first "
        "failing op amplify2 (sample 3)",
        "cache: 0 hits, 0 misses",
    ]


def test_non_finite_figures_fail():
    assert not _result(float("nan")).passed
    assert _result(0.495).passed and not _result(0.489).passed

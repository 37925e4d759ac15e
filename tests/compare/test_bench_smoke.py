"""The compare benchmark still runs (a tiny size; no timing is asserted)."""
import importlib.util
import os

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "bench_compare.py")


def test_benchmark_runs_on_a_tiny_dump_pair(capsys):
    if not os.path.exists(BENCH):
        pytest.skip("benchmarks/ not present")
    spec = importlib.util.spec_from_file_location("bench_compare", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--size-gb", "0.0006", "--tensors", "4", "--repeat", "1",
                       "--mask-elements", "20000"]) == 0  # (its default, 10M, took 7 s here)
    out = capsys.readouterr().out
    assert "dump pair: 4 tensors" in out
    assert "baseline (parse headers, np.fromfile/np.load, sum):" in out
    assert "ratio compare/baseline:" in out
    assert "compare peak RSS:" in out and "; 4 rows," in out
    assert "mask stand-in, compute_metrics of one 20,000-element pair" in out
    assert "the unmasked pair" in out

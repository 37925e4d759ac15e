"""The conversion cache as the plugin uses it: shared by xdist workers, repaired after a crash."""
import os

import pytest

from pytest_ascend_accuracy.testing.models import passing_mlp

pytest.importorskip("xdist")

CONCURRENT_TEST = """
import os, time
from pathlib import Path

def test_convert(atc_convert, worker_id):
    barrier = Path(os.environ["BARRIER_DIR"])
    (barrier / worker_id).touch()
    deadline = time.time() + 60
    while len(list(barrier.iterdir())) < 4 and time.time() < deadline:
        time.sleep(0.01)
    converted = atc_convert("mlp.onnx", "high_precision")
    assert converted.path.is_file()
"""


def save_model(pytester):
    import onnx

    onnx.save(passing_mlp(), str(pytester.path / "mlp.onnx"))


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
@pytest.mark.reliability
def test_four_workers_convert_once(pytester, monkeypatch):
    save_model(pytester)
    barrier = pytester.mkdir("barrier")
    monkeypatch.setenv("BARRIER_DIR", str(barrier))
    pytester.makepyfile(test_concurrent=CONCURRENT_TEST)
    # --dist each: every one of the 4 workers (4 processes) runs the test, released together by
    # the barrier; the controller runs in this process (it converts nothing)
    result = pytester.runpytest("-n", "4", "--dist", "each", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    assert sorted(p.name for p in barrier.iterdir()) == ["gw0", "gw1", "gw2", "gw3"]
    result.stdout.fnmatch_lines(["cache: 3 hits, 1 miss"])
    entries = list((pytester.path / ".ascend-accuracy" / "emulator").glob("*/*"))
    assert len(entries) == 1


KILLING_CONFTEST = """
import os, signal
from pytest_ascend_accuracy.core.cache import Cache

_real = Cache.get_or_build

def _killed_midway(self, namespace, key, build):
    def build_then_die(tmp):
        build(tmp)  # the converted files are written ...
        if os.environ.get("KILL_CONVERSION"):
            os.kill(os.getpid(), signal.SIGKILL)  # ... and the process dies before publishing
    return _real(self, namespace, key, build_then_die)

Cache.get_or_build = _killed_midway
"""

CONVERT_TEST = """
def test_convert(atc_convert):
    assert atc_convert("mlp.onnx").path.is_file()
"""


@pytest.mark.reliability
def test_killed_conversion_is_repaired_by_the_next_run(pytester, monkeypatch):
    save_model(pytester)
    pytester.makeconftest(KILLING_CONFTEST)
    pytester.makepyfile(test_convert=CONVERT_TEST)
    cache = pytester.path / ".ascend-accuracy"

    monkeypatch.setenv("KILL_CONVERSION", "1")
    killed = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert killed.ret == -9
    leftovers = [p.name for p in cache.glob("emulator/*/*")]
    assert len(leftovers) == 1 and leftovers[0].startswith(".tmp-")  # nothing published

    # the next runs are undisturbed: without the killing conftest they can run in this process
    # (its patch of Cache.get_or_build would otherwise outlive an in-process run)
    monkeypatch.delenv("KILL_CONVERSION")
    (pytester.path / "conftest.py").unlink()
    repaired = pytester.runpytest("-p", "no:cacheprovider")
    repaired.assert_outcomes(passed=1)
    repaired.stdout.fnmatch_lines(["cache: 0 hits, 1 miss"])
    entries = [p for p in cache.glob("emulator/*/*")]
    assert len(entries) == 1 and not entries[0].name.startswith(".")  # stale .tmp removed

    model_file = entries[0] / "model.onnx"
    data = bytearray(model_file.read_bytes())
    data[-1] ^= 0xFF  # same size, different bytes: only the manifest hash can tell
    model_file.write_bytes(bytes(data))
    rebuilt = pytester.runpytest("-p", "no:cacheprovider")
    rebuilt.assert_outcomes(passed=1)
    rebuilt.stdout.fnmatch_lines(["cache: 0 hits, 1 miss, 1 corrupt entry rebuilt"])
    assert os.path.getsize(model_file) == len(data)

"""A check whose compare forks worker processes (compare.parallel) behaves as one that does not:
the same outcomes and failure text, printed once."""
import pytest

from conftest import ACCURACY_TESTS
from pytest_ascend_accuracy.compare import parallel
from pytest_ascend_accuracy.core import cpu_share


@pytest.mark.skipif(not parallel.available(), reason="forked workers: Linux only")
def test_checks_with_forked_compare_workers(pytester, models_dir, monkeypatch):
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    serial = pytester.runpytest()
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)  # every compare forks
    monkeypatch.setattr(cpu_share, "_SHARE", [2])
    parallel.LAST_RUN.clear()
    forked = pytester.runpytest()
    assert parallel.LAST_RUN.get("processes") == 2
    forked.assert_outcomes(passed=3, failed=1)
    serial.assert_outcomes(passed=3, failed=1)
    text = forked.stdout.str()
    assert text.count("first failing operator") == serial.stdout.str().count("first failing operator")
    block = [line for line in forked.outlines if line.strip().startswith("dump name")]
    assert block == [line for line in serial.outlines if line.strip().startswith("dump name")]


@pytest.mark.skipif(not parallel.available(), reason="forked workers: Linux only")
@pytest.mark.parametrize("plugin", ["loaded", "off"])
def test_the_plugin_loads_the_forked_compares_multiprocessing_modules_first(pytester, plugin):
    """Loaded when pytest starts, they are never dropped by a pytester in-process run and
    imported again, which crashes CPython 3.11 now and then (core.multiprocessing_preload):
    in a fresh process, they are there before any test runs only because of the plugin."""
    pytester.makepyfile(test_loaded="""
        import sys

        def test_loaded():
            assert "multiprocessing.synchronize" in sys.modules
        """)
    args = ["-p", "no:ascend_accuracy"] if plugin == "off" else []
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=1) if plugin == "loaded" else result.assert_outcomes(failed=1)

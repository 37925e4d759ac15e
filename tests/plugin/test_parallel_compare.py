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

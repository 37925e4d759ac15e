"""The xdist controller runs no check: printing the summary of its workers' checks (a failed
one's first failing op and threshold included) imports neither numpy nor onnx. It did, through
``report.checked_shapes`` and ``compare.thresholds`` (the ``report`` and ``compare`` packages
imported their numpy modules eagerly), 0.23-0.4 s on the wall clock after the last worker ended
(benchmarks/bench_check_suite.py's -n 2 run). A dataset check's lines:
tests/dataset/test_plugin.py."""
import json

import pytest

from conftest import ACCURACY_TESTS

pytest.importorskip("xdist")


def test_the_controller_prints_the_summary_without_numpy_or_onnx(pytester, models_dir):
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    result = pytester.runpytest_subprocess("-n", "1", "-p", "no:cacheprovider",
                                           "-p", "record_controller_modules")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.re_match_lines([
        r"4 accuracy checks: 3 passed, 1 failed .*",
        r"FAILED test_acc.py::test_overflow\[default\] \[overflow, default\]: first failing op "
        r"norm \(cosine 0\.\d+ < 0\.95\)",
    ])
    assert json.loads((pytester.path / "controller_modules.json").read_text()) == []

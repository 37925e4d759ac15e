"""The ascend-accuracy summary lines: plurals, grid, failure lines, cache counters."""
from pytest_ascend_accuracy.plugin.session import CheckRecord, GoldenWrite
from pytest_ascend_accuracy.plugin.terminal_report import plural, summary_lines


def test_plural():
    assert [plural(n, "model") for n in (0, 1, 2)] == ["0 models", "1 model", "2 models"]
    assert plural(1, "miss") == "1 miss" and plural(3, "miss") == "3 misses"


def rec(nodeid, model, mode, passed, **kw):
    return CheckRecord(nodeid=nodeid, model=model, mode=mode, passed=passed, **kw)


def test_summary_lines():
    records = [
        rec("t.py::test_a[default]", "overflow", "default", False, first_op="norm",
            first_value=0.412345678, threshold=0.95),
        rec("t.py::test_a[high_precision]", "overflow", "high_precision", True),
        rec("t.py::test_b", "mlp", "default", True),
        rec("t.py::test_c", "mlp", "default", False, first_op="fc1/Add", first_value=None),
    ]
    lines = summary_lines(records, backend="emulator backend", cache_stats={"hits": 1, "misses": 2},
                          golden_writes=[GoldenWrite("golden/mlp", "written (missing)")])
    assert lines == [
        "backend: emulator backend",
        "4 accuracy checks: 2 passed, 2 failed (2 models x 2 modes)",
        "  model     default     high_precision",
        "  overflow  FAILED      passed",
        "  mlp       1/2 passed  -",
        "FAILED t.py::test_a[default] [overflow, default]: first failing op norm "
        "(cosine 0.412346 < 0.95)",
        "FAILED t.py::test_c [mlp, default]: first failing op fc1/Add "
        "(cosine undefined: NaN/Inf or not compared)",
        "cache: 1 hit, 2 misses",
        "1 golden file written:",
        "  golden/mlp: written (missing)",
    ]


def test_singular_and_rebuilt():
    lines = summary_lines([rec("t.py::t", "m", "default", True)], backend="b",
                          cache_stats={"hits": 0, "misses": 1, "rebuilt": 1}, report_dir="out")
    assert lines[1] == "1 accuracy check: 1 passed, 0 failed (1 model x 1 mode)"
    assert lines[-2:] == ["cache: 0 hits, 1 miss, 1 corrupt entry rebuilt", "reports: out"]


def test_error_metric_failure_line():
    lines = summary_lines([rec("t.py::t", "m", "default", False, metric="max_abs", threshold=0.5,
                               first_op="x", first_value=1.25)], backend="b", cache_stats={})
    assert "FAILED t.py::t [m, default]: first failing op x (max_abs 1.250000 > 0.5)" in lines

"""A test run again in the same session (pytest-rerunfailures' ``--reruns``, as CI runs it):
the summary and JUnit count its last attempt once, its report folder holds that attempt only,
and a baseline the first attempt wrote does not let the rerun pass (a CI trial: a fresh clone
went green on every run, its baselines never checked in)."""
from pathlib import Path

import pytest

pytest.importorskip("pytest_rerunfailures")

FLAKY = """
from pathlib import Path
from pytest_ascend_accuracy import HIGH_PRECISION, accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/overflow.onnx"


@accuracy(threshold=0.95)
def test_flaky(ascend_model, golden_dump, check_accuracy):
    marker = Path("attempted")
    mode = HIGH_PRECISION if marker.exists() else "default"  # fails first, then passes
    marker.touch()
    inputs = make_inputs(M)
    check_accuracy(ascend_model(M, mode).run(inputs), golden_dump(M, inputs))
"""


def test_a_rerun_that_passes_counts_once_as_passed(pytester, models_dir):
    pytester.makepyfile(test_flaky=FLAKY)
    result = pytester.runpytest("--reruns", "1", "--junitxml=j.xml", "--accuracy-report=reports")
    assert result.parseoutcomes() == {"passed": 1, "rerun": 1}
    result.stdout.fnmatch_lines(["1 accuracy check: 1 passed, 0 failed (1 model x 1 mode)"])
    result.stdout.no_fnmatch_line("*CAUGHT*")
    import xml.etree.ElementTree as ET

    # junitxml writes each attempt as a testcase (pytest-rerunfailures' "rerun" report first):
    # each holds its own attempt's properties, once (the rerun held both, false and true)
    cases = ET.parse(pytester.path / "j.xml").getroot().iter("testcase")
    props = [[(p.get("name"), p.get("value")) for p in case.iter("property")] for case in cases]
    assert [dict(attempt)["accuracy_passed"] for attempt in props] == ["false", "true"]
    assert all(len(attempt) == len(dict(attempt)) for attempt in props)
    folders = sorted(p.name for p in (pytester.path / "reports").iterdir() if p.is_dir())
    assert len(folders) == 1 and "pass" in (pytester.path / "reports" / folders[0] /
                                            "report.html").read_text()


BASELINE = """
from pytest_ascend_accuracy import accuracy

M = "models/passing_mlp.onnx"


@accuracy(threshold=0.95, max_drop=0.002)
def test_mlp(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
"""


def test_a_baseline_written_by_the_first_attempt_fails_the_rerun(pytester, models_dir):
    pytester.makepyfile(test_bl=BASELINE)
    rerun = pytester.runpytest("--reruns", "1")
    assert rerun.parseoutcomes() == {"failed": 1, "rerun": 1}
    rerun.stdout.fnmatch_lines(["*accuracy baseline accuracy-baselines/models/passing_mlp/"
                                "default.yaml was written by this session (by "
                                "test_bl.py::test_mlp, from its own run): comparing against it "
                                "compares the device with itself. Check it in and run the "
                                "session again.*"])
    assert Path(pytester.path / "accuracy-baselines/models/passing_mlp/default.yaml").is_file()
    pytester.runpytest().assert_outcomes(passed=1)  # the next session judges against it


def test_two_tests_of_one_baseline_on_two_workers_both_fail_the_session_that_wrote_it(
        pytester, models_dir):
    """Each xdist worker knew only the baselines it wrote: a test on the other worker passed
    against the one this session had just written (review). The session's registry is shared."""
    pytester.makepyfile(test_a=BASELINE, test_b=BASELINE.replace("test_mlp", "test_mlp_again"))
    first = pytester.runpytest("-n", "2", "-p", "no:benchmark")
    first.assert_outcomes(failed=2)
    pytester.runpytest("-n", "2", "-p", "no:benchmark").assert_outcomes(passed=2)
    assert not list((pytester.path / ".ascend-accuracy" / ".sessions").glob("*"))  # cleaned up


STORED = """
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/passing_mlp.onnx"


@accuracy(threshold=0.95)
def test_stored(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs, path="golden/mlp"))
"""

STORED_YAML = """
models:
  - name: mlp
    model: models/passing_mlp.onnx
    golden: golden/yaml_mlp
"""


@pytest.mark.parametrize("how", ["fixture", "yaml"])
def test_a_stored_golden_written_by_the_first_attempt_fails_the_rerun(pytester, models_dir, how):
    """H100: a missing stored golden was written by the first attempt (which failed), and the
    rerun compared against it and passed: a fresh clone without goldens went green. The next
    session, as the message says, compares against it."""
    if how == "fixture":
        pytester.makepyfile(test_stored=STORED)
    else:
        pytester.makefile(".yaml", accuracy_mlp=STORED_YAML)
    golden = "golden/mlp" if how == "fixture" else "golden/yaml_mlp"
    rerun = pytester.runpytest("--reruns", "1")
    assert rerun.parseoutcomes() == {"failed": 1, "rerun": 1}
    rerun.stdout.fnmatch_lines([f"*golden file {golden} was written by this session (by *"
                                f"test_stored*), not read as it was when the session started*"
                                if how == "fixture" else
                                f"*golden file {golden} was written by this session*"])
    pytester.runpytest().assert_outcomes(passed=1)  # the next session judges against it


CRASHES_ONCE = """
import os
from pathlib import Path
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_z_crashes_once(golden_dump):
    marker = Path("crashed")
    if not marker.exists():
        marker.touch()
        os._exit(3)  # as an ACL runtime's segfault ends the worker
"""


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
def test_a_crash_rerun_that_passes_leaves_no_failed_verdict_in_junit(pytester, models_dir):
    """A worker's crash that pytest-rerunfailures turns into a rerun is no verdict: its
    testcase said accuracy_passed=false beside the rerun that passed (H102)."""
    import xml.etree.ElementTree as ET

    pytester.makepyfile(test_z=CRASHES_ONCE)
    result = pytester.runpytest("-n", "1", "--reruns", "1", "-p", "no:cacheprovider",
                                "--junitxml=j.xml")
    assert result.parseoutcomes() == {"passed": 1, "rerun": 1}
    values = [p.get("value") for p in ET.parse(pytester.path / "j.xml").getroot().iter("property")
              if p.get("name") == "accuracy_passed"]
    assert "false" not in values, values


def test_registries_a_killed_session_left_go_a_week_later(pytester, models_dir):
    """A controller killed (a CI timeout) never removed its session's registries (H102); a
    later session's end removes those a week old, and leaves a recent one of another session
    (which may still run)."""
    import os
    import time

    sessions = pytester.path / ".ascend-accuracy" / ".sessions"
    sessions.mkdir(parents=True)
    old, recent = sessions / "dead.marked-gw0", sessions / "alive.written"
    old.write_text("x\n")
    recent.write_text("y\n")
    week = 7 * 24 * 3600
    os.utime(old, (time.time() - week - 60,) * 2)
    pytester.makepyfile(test_bl=BASELINE)
    pytester.runpytest("-p", "no:cacheprovider")
    assert not old.exists() and recent.exists()

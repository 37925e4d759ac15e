"""A stored golden or baseline that several tests of a session write is one file in the
summary's "N golden files ..." / "N baseline files written" lines, not one per test (CI trial:
four parametrizations sharing `golden/mlp` under --accuracy-regen-all printed "4 golden files
regenerated" and "4 baseline files written" with the same path four times)."""
import shutil

import pytest

SHARED = '''
import pytest
from pytest_ascend_accuracy import accuracy

M = "models/passing_mlp.onnx"


@pytest.mark.parametrize("k", range(3))
@accuracy(threshold=0.95, max_drop=0.002)
def test_stored(k, ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs, path="golden/mlp"))
'''


def _section(result):
    lines = result.stdout.lines
    start = next(k for k, line in enumerate(lines) if line.startswith("cache: "))
    return lines[start + 1:]


@pytest.fixture(scope="module")
def _after_three_sessions_made():
    """Where the project of ``after_three_sessions`` lies once a test of this module made it."""
    return {}


@pytest.fixture
def after_three_sessions(request, pytester, tmp_path_factory, _after_three_sessions_made):
    """The project after the three sessions that write the golden, then the baseline, then
    pass (serial, in-process): the same three sessions for each case of the test below, so they
    run once a module and each case gets a copy of the project they left (no absolute path is
    stored in it; the copy keeps the files' times)."""
    made = _after_three_sessions_made.get("project")
    if made is not None:
        shutil.copytree(made, pytester.path, symlinks=True, dirs_exist_ok=True)
        return pytester
    request.getfixturevalue("models_dir")
    pytester.makepyfile(test_shared=SHARED)
    first = pytester.runpytest("-p", "no:cacheprovider")  # (the counted run: the last one)
    first.assert_outcomes(failed=3)  # the golden did not exist: written, and no check used it
    # (the session that wrote it compares nothing against it: stored_golden_use)
    second = pytester.runpytest("-p", "no:cacheprovider")
    second.assert_outcomes(failed=3)  # then the baseline, as for the golden
    assert pytester.runpytest("-p", "no:cacheprovider").ret == 0
    copy = tmp_path_factory.mktemp("after-three-sessions") / "project"
    shutil.copytree(pytester.path, copy, symlinks=True)
    _after_three_sessions_made["project"] = copy
    return pytester


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_file_written_by_several_tests_is_listed_once(after_three_sessions, workers):
    pytester = after_three_sessions
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-regen-all", *workers)
    result.assert_outcomes(passed=3)
    tail = _section(result)
    golden = [line for line in tail if "golden/mlp" in line]
    baseline = [line for line in tail if "accuracy-baselines/" in line]
    assert golden == ["  golden/mlp: unchanged (--accuracy-regen-all: regenerated the same "
                      "bytes, left as it was) (by 3 tests)"], tail
    assert baseline == ["  accuracy-baselines/models/passing_mlp/default.yaml: baseline "
                        "rewritten (by 3 tests)"], tail
    assert "1 golden file regenerated with the bytes already there (not written):" in tail
    assert "1 baseline file written:" in tail

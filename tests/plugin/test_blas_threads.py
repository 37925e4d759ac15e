"""Each xdist worker gives numpy's OpenBLAS its share of the cores, set before the project's
conftest files run (they may import numpy); a thread count the user set is kept; a serial run
is left as it is."""
import json

import pytest

from pytest_ascend_accuracy.core.cpu_share import machine_cores
from pytest_ascend_accuracy.plugin.xdist_support import BLAS_THREADS_ENV, share_blas_threads

pytest.importorskip("xdist")

#: imports numpy as a project's conftest may; records what OpenBLAS saw when numpy loaded
CONFTEST = """
import os

import numpy  # noqa: F401

SEEN_AT_NUMPY_IMPORT = {name: os.environ.get(name) for name in
                        ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")}
"""

TEST = """
import json
import os

import pytest

from conftest import SEEN_AT_NUMPY_IMPORT


@pytest.mark.parametrize("k", [1, 2])
def test_record(k):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "serial")
    with open(f"seen-{k}.json", "w") as f:
        json.dump([worker, SEEN_AT_NUMPY_IMPORT], f)
"""


@pytest.fixture
def project(pytester, monkeypatch):
    for name in BLAS_THREADS_ENV:  # this suite's own workers set one: start as a user does
        monkeypatch.delenv(name, raising=False)
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_blas=TEST)
    return pytester


def _seen(pytester):
    """[(worker id, the thread variables at conftest's numpy import)] of both tests."""
    return [json.loads((pytester.path / f"seen-{k}.json").read_text()) for k in (1, 2)]


def test_each_worker_gives_openblas_its_share_before_conftest_imports_numpy(project):
    result = project.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    share = str(max(1, machine_cores() // 2))
    for worker, recorded in _seen(project):
        assert worker.startswith("gw") and recorded["OPENBLAS_NUM_THREADS"] == share, recorded


def test_a_thread_count_the_user_set_is_kept(project, monkeypatch):
    """One variable end to end (each of the three is decided alike: the unit test below)."""
    name = "GOTO_NUM_THREADS"
    monkeypatch.setenv(name, "3")
    result = project.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    for worker, recorded in _seen(project):
        assert worker.startswith("gw")
        assert recorded == {n: "3" if n == name else None for n in BLAS_THREADS_ENV}


def test_a_count_the_rootdir_conftest_sets_is_kept(project):
    """The controller runs the rootdir's conftest before it starts its workers, which inherit
    what it set."""
    project.makeconftest('import os\nos.environ["OMP_NUM_THREADS"] = "3"\n' + CONFTEST)
    result = project.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    for worker, recorded in _seen(project):
        assert worker.startswith("gw")
        assert recorded == {n: "3" if n == "OMP_NUM_THREADS" else None for n in BLAS_THREADS_ENV}


@pytest.mark.parametrize("plugins", [("-p", "ascend_accuracy", "-p", "xdist"),
                                     ("-p", "pytest_ascend_accuracy.plugin", "-p", "xdist.plugin")],
                         ids=["entry-points", "modules"])
def test_the_share_is_set_with_plugin_autoloading_off(project, monkeypatch, plugins):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = project.runpytest_subprocess(*plugins, "-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    share = str(max(1, machine_cores() // 2))
    for worker, recorded in _seen(project):
        assert worker.startswith("gw") and recorded["OPENBLAS_NUM_THREADS"] == share, recorded


def test_a_serial_run_is_left_as_it_is(project):
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    for worker, recorded in _seen(project):
        assert worker == "serial" and recorded == dict.fromkeys(BLAS_THREADS_ENV), recorded


@pytest.mark.parametrize("environ, modules, expected", [
    ({"PYTEST_XDIST_WORKER": "gw0", "PYTEST_XDIST_WORKER_COUNT": "2"}, {}, "share"),
    ({"PYTEST_XDIST_WORKER": "gw0", "PYTEST_XDIST_WORKER_COUNT": "1"}, {}, None),  # -n 1
    ({"PYTEST_XDIST_WORKER_COUNT": "2"}, {}, None),  # the controller
    ({"PYTEST_XDIST_WORKER": "gw0", "PYTEST_XDIST_WORKER_COUNT": "2"}, {"numpy": object()}, None),
    ({"PYTEST_XDIST_WORKER": "gw0", "PYTEST_XDIST_WORKER_COUNT": "x"}, {}, None),
    ({"PYTEST_XDIST_WORKER": "gw0", "PYTEST_XDIST_WORKER_COUNT": "2", "OMP_NUM_THREADS": "4"}, {},
     None),
    ({"PYTEST_XDIST_WORKER": "gw0", "PYTEST_XDIST_WORKER_COUNT": "2",
      "OPENBLAS_NUM_THREADS": "4"}, {}, None),
    ({"PYTEST_XDIST_WORKER": "gw0", "PYTEST_XDIST_WORKER_COUNT": "2", "GOTO_NUM_THREADS": "4"},
     {}, None),
    ({"PYTEST_XDIST_WORKER": "gw0", "PYTEST_XDIST_WORKER_COUNT": "2",
      "OPENBLAS_NUM_THREADS": " "}, {}, "share"),  # blank: not a count
], ids=["worker", "one-worker", "controller", "numpy-imported", "bad-count", "user-omp",
        "user-openblas", "user-goto", "blank"])
def test_share_blas_threads_decides_from_the_environment(environ, modules, expected):
    environ = dict(environ)
    before = dict(environ)
    got = share_blas_threads(environ, modules)
    if expected == "share":
        share = max(1, machine_cores() // 2)
        assert got == share and environ["OPENBLAS_NUM_THREADS"] == str(share)
    else:
        assert got is None and environ == before

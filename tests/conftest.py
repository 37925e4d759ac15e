"""How the suite's own processes run (never what a test checks).

* onnxruntime sessions made by the tests do not spin while they wait
  (``graph.onnx_graph.set_ort_threads``): the suite runs thousands of tiny models, and a pool
  thread that spins after every run burned four times the CPU of the work itself
  (tests/emulator/test_streaming.py: 1.2 s of CPU per test with spinning, 0.25 s without; the
  same values either way).
* Where ``PYTHONDONTWRITEBYTECODE`` is set (some containers set it), every child process of the
  suite (pytester subprocess runs, xdist workers, the fake atc) compiles and assertion-rewrites
  every module again, about 0.5 s of CPU each. The children share one bytecode cache for this run
  instead, in a temporary folder outside the source tree (``PYTHONPYCACHEPREFIX``), removed at
  the end. Nothing changes where the variable is not set. The xdist workers themselves start
  without it: a prefix hides every ``__pycache__`` (Python then reads bytecode from the prefix
  only), so a worker started with it compiled the standard library and every installed package
  again before its first test, 6-7 s of CPU each, both at once (first test at 8.9 s of the run,
  2.4 s with the packages' own caches read). Each process that runs tests hands the prefix to
  its children when its session begins (``_children_share_one_bytecode_cache``).
* The suite's temporary files (pytest's base temp, and through it ``TMPDIR``) live on
  ``/dev/shm`` where that is a memory file system with 2 GB free (``PYTEST_DEBUG_TEMPROOT``,
  which pytest reads for its temp root; a user's own value, or ``--basetemp``, wins). The tests
  write tens of thousands of small files, dumps, goldens and caches (0.57 GB in a full ``-n 2``
  run), many over an earlier version (the fuzz tests write one path per example): on this VM's
  ext4 replacing a file's content flushes it to the disk at close (0.2-2.4 ms a file by how busy
  the shared disk was), creating one walks past recently deleted inodes (README, "Cost of a
  check"), and the product's fsyncs of goldens and manifests wait for the disk. The fuzz, golden
  and cache tests took 35 s and once 113 s in /tmp, 26-28 s there (13-15 s of CPU either way).
  Files behave the same there for what the tests check (names, contents, renames, locks). A
  session that passed removes its base temp at the end (it is memory); a failed one keeps it,
  as pytest keeps its last three. A machine without such a ``/dev/shm`` (a container's 64 MB
  one, not Linux) runs in the usual temp dir.
* A ``pytester`` run in this process writes no bytecode: pytest caches a rewritten test module
  keyed by its source's mtime in whole seconds and its size, so a test that writes the same test
  file twice within a second, at the same size, ran the first version again (CI failed so once;
  tests/test_suite_harness.py).
* Under ``-n 2`` a pytester run does not inherit this worker's xdist environment variables.
* A pytest run the tests start leaves hypothesis's pytest plugin out (``PYTEST_ADDOPTS``, added
  to what the test set): its terminal summary imports all of hypothesis, 0.57 s of CPU at the
  end of every pytest process (an empty run: 0.90 s with it, 0.33 s without), and no inner run
  uses hypothesis. It loads ``inner_run_plugins/inner_runs_skip_exit_gc.py`` instead (on
  ``PYTHONPATH``): no five full garbage collections at the end of each subprocess run and xdist
  worker, as pytester's in-process runs already skip them (see that module). A test that sets
  ``PYTEST_ADDOPTS`` itself replaces both; one that sets ``PYTHONPATH`` keeps
  ``inner_run_env.INNER_RUN_PLUGINS`` on it (``inner_run_env.inner_run_pythonpath``).
* After collection this process sets aside what it holds: it opens the plugin's own
  ``core.frozen_heap`` block (``gc.freeze`` after one full collection) and keeps it open for the
  test loop. Without it every in-process pytester run of an accuracy test began with a full
  collection of this process's heap (every collected item of the suite, hypothesis, onnx): 35%
  of the suite's main-thread time in a py-spy profile of a serial run. Through the block, not a
  bare ``gc.freeze``: an inner run's block is then a nested one, which never asks
  ``gc.get_freeze_count()`` -- a walk of everything frozen, ~10 ms here, which 375 inner runs
  of tests/plugin paid (3.7 s, serially) while the suite froze by hand. Tests of the freezing
  itself run with the block closed and the heap back in the collector (``unfrozen_heap``).
* The process that runs tests imports this package whole, and what it imports only when a check
  needs it (``filelock``, ``yaml``, onnx, onnxruntime, numpy, hypothesis), once, before any
  ``pytester`` run (``_modules_imported_once``): an in-process run removes from ``sys.modules``
  what was imported during it, so every run imported them again (filelock alone 12-14 ms a run;
  504 module imports of filelock and 198 of yaml in 35 tests of tests/plugin), and numpy cannot
  be imported twice in one process. (tests/plugin and tests/aipp's conftests and three test
  files each did it for themselves; an xdist controller, which runs no test, does not.)
* pluggy's argument names of each hook function are read once per process, not at every
  registration (``hook_argnames_read_once``): an in-process pytester run registers every
  plugin again, and reading ~280 signatures was a quarter of the CPU time of a run of a
  one-line test file.
* A model a test builds with ``onnx.helper.make_model`` and no ``ir_version`` gets the lowest IR
  version its opsets need (``onnx.helper.find_min_ir_version_for``, as ``make_model_gen_version``
  does), not the installed onnx's own: onnx stamps its newest one (IR 14 in onnx 1.23), and the
  newest onnxruntime with Python 3.10 wheels (1.23.2) reads IR 11 at most ('Unsupported model IR
  version: 14, max supported IR version: 11', 79 tests on 3.10). A test's own ``ir_version``
  (given, or set on the model afterwards) wins, and the library's own calls are left as they
  are (``_test_models_get_the_ir_version_their_opsets_need``; in the processes that collect
  tests, before they do, so an xdist controller imports no onnx).
* Temporary files the code under test keeps on purpose (the log directory of a failed ATC run,
  named in its message) go to a directory of pytest's own base temp (``tempfile.tempdir`` and
  ``TMPDIR`` for child processes), which pytest prunes, not to the machine's /tmp.
"""
import os
import shutil
import sys
import tempfile

import pytest

from inner_run_env import INNER_RUN_ADDOPTS, INNER_RUN_PLUGINS
from pytest_ascend_accuracy.graph.onnx_graph import set_ort_threads

set_ort_threads(spinning=False)
sys.path.insert(0, INNER_RUN_PLUGINS)  # (pytester's in-process runs import them from here)
try:  # an in-process xdist run's workers start on the sys.path xdist's plugin saw at its import
    from xdist.plugin import _sys_path as _xdist_workers_sys_path

    _xdist_workers_sys_path.append(INNER_RUN_PLUGINS)  # (in place: workermanage holds it too)
except (ImportError, AttributeError):  # no xdist, or a private name that changed
    pass

#: a memory file system at least this free takes the suite's temporary files (see above)
SHM_TEMPROOT, SHM_FREE_AT_LEAST = "/dev/shm", 2 << 30


def _memory_temproot():
    """``SHM_TEMPROOT`` where it is a writable tmpfs with room, else None."""
    try:
        with open("/proc/self/mounts", encoding="utf-8") as mounts:
            tmpfs = any(f[1] == SHM_TEMPROOT and f[2] == "tmpfs"
                        for f in (line.split() for line in mounts) if len(f) > 2)
        if (tmpfs and os.access(SHM_TEMPROOT, os.W_OK | os.X_OK)
                and shutil.disk_usage(SHM_TEMPROOT).free >= SHM_FREE_AT_LEAST):
            return SHM_TEMPROOT
    except OSError:
        pass
    return None


_CHOSE_SHM = False
if not os.environ.get("PYTEST_DEBUG_TEMPROOT") and _memory_temproot():
    os.environ["PYTEST_DEBUG_TEMPROOT"] = SHM_TEMPROOT
    _CHOSE_SHM = True

#: the run's shared bytecode folder, made by the main process; its xdist workers inherit the name
SUITE_PYCACHE = "PYTEST_ASCEND_SUITE_PYCACHE"


def _children_compile_afresh() -> bool:
    return bool(os.environ.get("PYTHONDONTWRITEBYTECODE")
                and not os.environ.get("PYTHONPYCACHEPREFIX"))


_OWNED_PREFIX = None
if _children_compile_afresh() and not os.environ.get(SUITE_PYCACHE):
    _OWNED_PREFIX = tempfile.mkdtemp(prefix="ascend-accuracy-suite-pyc-")
    os.environ[SUITE_PYCACHE] = _OWNED_PREFIX


def _test_models_get_the_ir_version_their_opsets_need():
    """See the module's docstring: ``onnx.helper.make_model`` for the tests' calls."""
    from onnx import helper

    make_model = helper.make_model
    if getattr(make_model, "_ir_for_opsets", False):
        return

    def make_model_for_its_opsets(graph, **kwargs):
        model = make_model(graph, **kwargs)
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if "ir_version" not in kwargs and not caller.startswith("pytest_ascend_accuracy."):
            model.ir_version = helper.find_min_ir_version_for(model.opset_import,
                                                              ignore_unknown=True)
        return model

    make_model_for_its_opsets._ir_for_opsets = True
    helper.make_model = make_model_for_its_opsets


def pytest_sessionstart(session):
    if hasattr(session.config, "workerinput") or not getattr(session.config.option,
                                                             "numprocesses", None):
        _test_models_get_the_ir_version_their_opsets_need()


@pytest.fixture(scope="session", autouse=True)
def _children_share_one_bytecode_cache():
    """In the process that runs the tests (never before an xdist worker starts: see above);
    gives the shared folder, or None where ``PYTHONDONTWRITEBYTECODE`` was not set."""
    if _children_compile_afresh() and os.environ.get(SUITE_PYCACHE):
        os.environ["PYTHONPYCACHEPREFIX"] = os.environ[SUITE_PYCACHE]
        del os.environ["PYTHONDONTWRITEBYTECODE"]
    yield os.environ.get(SUITE_PYCACHE)


@pytest.fixture(scope="session", autouse=True)
def _modules_imported_once():
    """See the module's docstring (before the first test, so before any pytester snapshot)."""
    import importlib
    import pkgutil

    import filelock  # noqa: F401
    import hypothesis  # noqa: F401
    import numpy  # noqa: F401
    import onnx  # noqa: F401
    import onnxruntime  # noqa: F401
    import yaml  # noqa: F401

    import pytest_ascend_accuracy

    for info in pkgutil.walk_packages(pytest_ascend_accuracy.__path__, "pytest_ascend_accuracy."):
        if info.name.endswith("fake_atc"):  # (a command's module: run, never imported)
            continue
        try:
            importlib.import_module(info.name)
        except Exception:  # a module another helper is still writing: imported on use instead
            pass


@pytest.fixture(scope="session", autouse=True)
def _installed_metadata_read_once():
    """See ``installed_metadata_read_once`` (before the first test, so before any pytester run)."""
    from installed_metadata_read_once import read_once

    with pytest.MonkeyPatch.context() as patch:
        read_once(patch)
        yield


@pytest.fixture(scope="session", autouse=True)
def _hook_argnames_read_once():
    """See ``hook_argnames_read_once`` (before the first test, so before any pytester run)."""
    from hook_argnames_read_once import read_once

    with pytest.MonkeyPatch.context() as patch:
        read_once(patch)
        yield


@pytest.fixture(scope="session", autouse=True)
def _traceback_sources_parsed_once():
    """See ``traceback_source_parsed_once``."""
    from traceback_source_parsed_once import parse_once

    with pytest.MonkeyPatch.context() as patch:
        parse_once(patch)
        yield


@pytest.fixture(scope="session", autouse=True)
def _temp_files_stay_in_pytests_base_temp(tmp_path_factory):
    where = str(tmp_path_factory.mktemp("tmpdir"))
    saved = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir = where
    os.environ["TMPDIR"] = where
    yield
    tempfile.tempdir = saved[0]
    if saved[1] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved[1]


@pytest.fixture(autouse=True)
def _inner_runs_are_not_xdist_workers(request, monkeypatch):
    """Under ``-n 2`` this process is an xdist worker and its environment says so; a pytester run
    inherits it and would take itself for a worker too (pytest-benchmark, when installed, then
    warns that it disables itself). Inner runs see the same environment as in a serial run."""
    if "pytester" in request.fixturenames:
        for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _inner_runs_leave_hypothesis_out(request, monkeypatch):
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester")  # which removes PYTEST_ADDOPTS when it starts
    given = os.environ.get("PYTEST_ADDOPTS", "")
    monkeypatch.setenv("PYTEST_ADDOPTS", f"{given} {INNER_RUN_ADDOPTS}".strip())
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (os.environ.get("PYTHONPATH"), INNER_RUN_PLUGINS) if p))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that set ``PYTHONPATH`` without ``inner_run_env.inner_run_pythonpath`` fails in
    every inner run with pytest's 'Error importing plugin': say which helper it needs."""
    report = (yield).get_result()
    if report.failed and 'Error importing plugin "inner_runs_skip_exit_gc"' in report.longreprtext:
        report.sections.append(("suite harness", (
            "this test set PYTHONPATH without the suite's inner-run plugins: build it with "
            "inner_run_env.inner_run_pythonpath(...) (tests/conftest.py's docstring)")))


@pytest.fixture(autouse=True)
def _inner_runs_write_no_bytecode(request, monkeypatch):
    """A pytester run in this process rewrites its test files afresh each time: a cached
    ``.pyc`` of an earlier same-size version written in the same second would run instead."""
    if "pytester" in request.fixturenames:
        monkeypatch.setattr(sys, "dont_write_bytecode", True)


@pytest.fixture
def mlp_onnx_file(tmp_path):
    """``models/mlp.onnx`` (the tiny passing_mlp) under the test's temp folder."""
    import onnx

    from pytest_ascend_accuracy.testing import models as tiny_models

    path = tmp_path / "models" / "mlp.onnx"
    path.parent.mkdir()
    onnx.save(tiny_models.passing_mlp(), str(path))
    return path


_SUITE_FREEZE = []  # the open ``core.frozen_heap`` block of this process's test loop, if any


def _freeze_suite_heap() -> None:
    from pytest_ascend_accuracy.core.frozen_heap import frozen_heap

    block = frozen_heap()
    block.__enter__()
    _SUITE_FREEZE.append(block)


def _thaw_suite_heap() -> None:
    while _SUITE_FREEZE:
        _SUITE_FREEZE.pop().__exit__(None, None, None)


def pytest_collection_finish(session):
    _freeze_suite_heap()


@pytest.fixture(scope="module")
def unfrozen_heap():
    """What the suite set aside after collection back with the collector during a module's
    tests (of ``core.frozen_heap`` or of the plugin's use of it), set aside again after them
    (once a module: each set-aside begins with a full collection of the suite's heap)."""
    _thaw_suite_heap()
    try:
        yield
    finally:
        _freeze_suite_heap()


_SESSION_EXITSTATUS = []


def pytest_sessionfinish(session, exitstatus):
    _SESSION_EXITSTATUS.append(exitstatus)


def pytest_unconfigure(config):
    _thaw_suite_heap()  # closed here: a block left to interpreter shutdown ran on torn-down globals
    if hasattr(config, "workerinput"):
        return
    if _OWNED_PREFIX is not None:
        shutil.rmtree(_OWNED_PREFIX, ignore_errors=True)
    factory = getattr(config, "_tmp_path_factory", None)
    basetemp = getattr(factory, "_basetemp", None)
    if (_CHOSE_SHM and _SESSION_EXITSTATUS == [0] and basetemp is not None
            and getattr(factory, "_given_basetemp", None) is None):
        shutil.rmtree(basetemp, ignore_errors=True)  # memory: a passing run's files go with it


def write_dump_pair(folder, add_scale: float):
    """An npy golden and an Ascend dump of two ops under ``folder``: Conv_0 as the golden's
    (in float16), Add/1 the golden's times ``add_scale``; returns (actual, golden)."""
    import numpy as np

    from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
    from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter

    y = np.linspace(-1, 1, 48, dtype=np.float32).reshape(1, 3, 4, 4)
    golden, actual = folder / "golden", folder / "npu"
    with NpyDumpWriter(golden) as w:
        w.write_op("Conv_0", [], [y])
        w.write_op("Add/1", [], [y + 1])
    with AscendDumpWriter(actual) as w:
        w.write_op("Conv2D", "Conv_0", [], [y.astype(np.float16)])
        w.write_op("Add", "Add/1", [], [(add_scale * (y + 1)).astype(np.float16)])
    return actual, golden


def _emulated_run(folder, model):
    """(device dump root, om json, stored golden of op outputs only) of one emulator run of
    ``model`` on its seeded inputs, under ``folder``."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.golden.stored import store_golden
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    cache = Cache(folder / "cache")
    backend = EmulatorBackend(cache)
    converted = backend.convert(model)
    dump = backend.run(converted, make_inputs(model), dump_dir=folder / "dump")
    golden = store_golden(folder / "golden", golden_dump(model, make_inputs(model), cache=cache))
    return str(dump.root), str(converted.om_json), str(golden)


@pytest.fixture
def emulated_run():
    """``_emulated_run``, for the CLI tests that compare an emulator dump with its golden."""
    return _emulated_run


@pytest.fixture
def dump_pair(tmp_path):
    """``write_dump_pair`` under this test's temp dir."""
    return lambda add_scale: write_dump_pair(tmp_path, add_scale)


@pytest.fixture
def dumps(dump_pair):
    """The CLI tests' pair: Add/1 negated (cosine -1); a test module's own ``dumps`` fixture
    overrides it."""
    return dump_pair(-1.0)

"""Running under pytest-xdist: this process's worker id and count, and merging worker results.

The worker -> device mapping itself lives in ``backends.devices`` (no pytest there).

``XdistHooks`` holds the hooks that exist only when xdist is loaded; the plugin registers it
only then (``-p no:xdist`` must keep working).
"""
from __future__ import annotations

import os
import sys
from typing import Mapping, MutableMapping, Optional

import pytest

from .registry_text import registry_bytes


WORKEROUTPUT_KEY = "ascend_accuracy"

#: workerinput key of the controller's session key (``AccuracyState.session_key``)
SESSION_KEY = "ascend_accuracy_session"

#: workerinput key of the controller's ``--dist`` as xdist runs it (a worker's own option says
#: "no": the controller does not hand it on)
DIST_KEY = "ascend_accuracy_dist"


def session_key(config) -> str:
    """This pytest session's id: the xdist controller's on every worker, else a new one."""
    import uuid

    return (getattr(config, "workerinput", None) or {}).get(SESSION_KEY) or uuid.uuid4().hex


def get_worker_id(config) -> Optional[str]:
    """This process's xdist worker id, or None on the controller / without xdist."""
    workerinput = getattr(config, "workerinput", None)
    return workerinput.get("workerid") if workerinput else None


def get_num_workers(config) -> Optional[int]:
    workerinput = getattr(config, "workerinput", None)
    if workerinput and "workercount" in workerinput:
        return int(workerinput["workercount"])
    return None


def is_worker(config) -> bool:
    return hasattr(config, "workerinput")


#: environment override of onnxruntime's intra-op threads per session (0: onnxruntime's default)
ORT_THREADS_ENV = "ASCEND_ACCURACY_ORT_THREADS"


def share_cores(config) -> None:
    """Give this process's onnxruntime sessions and compares their share of the cores.

    Each xdist worker gets ``cores // workers`` intra-op threads (at least 1) with spinning off:
    by default every session starts one thread per core and spins while waiting, so N workers
    run N x cores busy threads on the cores and CPU time rises with -n (measured in
    benchmarks/bench_check.py). ``ASCEND_ACCURACY_ORT_THREADS=N`` sets the count everywhere
    (0 keeps onnxruntime's default)."""
    import os

    workers = get_num_workers(config)
    override = os.environ.get(ORT_THREADS_ENV, "").strip()
    if not override and not (workers and workers >= 2):
        return  # serial, or the xdist controller: nothing to share (and numpy stays unimported)
    from ..core.cpu_share import set_core_share, worker_share
    from ..graph.onnx_graph import set_ort_threads

    share = worker_share(workers) if workers and workers >= 2 else None
    if share is not None:
        set_core_share(share)  # the compare's worker processes too (compare.parallel)
    if override:
        from ..errors import ConfigError

        try:
            threads = int(override)
        except ValueError:
            raise ConfigError(ORT_THREADS_ENV, f"expected a number of threads, got {override!r}") from None
        if threads < 0:  # was taken as 0, onnxruntime's own default
            raise ConfigError(ORT_THREADS_ENV, f"expected a number of threads >= 0 (0: "
                                               f"onnxruntime's own default), got {override!r}")
        set_ort_threads(threads, spinning=threads == 0, chosen=True)
        return
    if share is not None:
        set_ort_threads(share, spinning=False)


#: where OpenBLAS (numpy's BLAS) reads its thread count from when numpy loads it, first set wins
BLAS_THREADS_ENV = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def share_blas_threads(environ: MutableMapping[str, str] = os.environ,
                       modules: Mapping[str, object] = sys.modules) -> Optional[int]:
    """In an xdist worker of ``-n 2`` or more, before anything has imported numpy (the plugin's
    ``pytest_load_initial_conftests``, ahead of the project's conftest files): set
    ``OPENBLAS_NUM_THREADS`` to the worker's share of the cores; returns it (None: nothing set).

    numpy's OpenBLAS starts one thread per core as numpy is imported, and they spin before they
    sleep: ``import numpy`` followed by a 1 s sleep took 0.185 s of CPU here, 0.086 s with
    ``OPENBLAS_NUM_THREADS=1``. In a worker that spin runs on the cores the other workers are
    checking on. xdist sets ``PYTEST_XDIST_WORKER``/``_COUNT`` before the worker's pytest
    starts. A thread count set before that (any of ``BLAS_THREADS_ENV``: in the shell, an ini
    ``env``, or the rootdir's ``conftest.py``, which the controller runs before it starts its
    workers) is kept; once numpy is imported OpenBLAS has its threads, so nothing is set then.
    What is set is the worker's environment: processes its tests start inherit it, and since
    OpenBLAS reads ``OPENBLAS_NUM_THREADS`` first, a ``GOTO_``/``OMP_NUM_THREADS`` that a test
    module or a lower conftest sets in the worker afterwards does not change OpenBLAS's count
    (setting ``OPENBLAS_NUM_THREADS`` there does)."""
    if not environ.get("PYTEST_XDIST_WORKER") or "numpy" in modules:
        return None
    if any(environ.get(name, "").strip() for name in BLAS_THREADS_ENV):
        return None
    try:
        workers = int(environ.get("PYTEST_XDIST_WORKER_COUNT", ""))
    except ValueError:
        return None
    if workers < 2:
        return None
    from ..core.cpu_share import worker_share

    share = worker_share(workers)
    environ["OPENBLAS_NUM_THREADS"] = str(share)
    return share


#: xdist's scheduling that lets an idle worker take checks not yet started from a busy one
WORKSTEAL = "worksteal"

#: ini switch of ``steal_by_default`` (default true)
WORKSTEAL_INI = "ascend_accuracy_worksteal"

#: the first pytest-xdist whose ``worksteal`` does not hang at the end of a run (3.2.1, #884)
WORKSTEAL_SINCE = (3, 2, 1)


def steal_by_default(config) -> bool:
    """Before xdist reads its options (the plugin's ``pytest_cmdline_main`` wrapper): for
    ``-n N`` without ``--dist``, schedule with xdist's ``worksteal`` instead of ``load``
    (returns whether it did). Checks take from a few hundred milliseconds (a small model's
    mode) to seconds (a large model's golden, or its high-precision run); under ``load`` each
    worker is sent its next checks ahead of time and keeps them, so one worker ran the last
    large check while the other had nothing left (8 PP-OCRv4 checks, ``-n 2``: the last
    0.3-0.4 s with one core idle). Under ``worksteal`` an idle worker takes half of a busy
    one's checks that have not started. It applies to the whole session, accuracy checks or not.

    ``option.dist`` is still ``"no"`` here unless a ``--dist`` was given, however it was given
    (command line, ``PYTEST_ADDOPTS``, ``addopts``, arguments a plugin or conftest added):
    xdist turns ``"no"`` into ``"load"`` only after this. Kept as they are: any ``--dist``
    (``--dist no`` with ``-n`` cannot be told from none: xdist runs it as ``load``), ``-d``,
    ``--maxschedchunk`` (``load``'s own tuning), ``--looponfail``, ini
    ``ascend_accuracy_worksteal = false``, an xdist worker, and an xdist without a
    ``worksteal`` that ends its runs (before 3.2.1)."""
    option = config.option
    if is_worker(config) or not getattr(option, "numprocesses", None):
        return False
    if getattr(option, "dist", None) != "no" or getattr(option, "distload", False):
        return False
    if getattr(option, "maxschedchunk", None) or getattr(option, "looponfail", False):
        return False
    from .settings_values import ini_bool

    if not ini_bool(config, WORKSTEAL_INI) or _xdist_version() < WORKSTEAL_SINCE:
        return False
    option.dist = WORKSTEAL
    return True


def _xdist_version() -> tuple:
    """pytest-xdist's version as numbers (() when unknown)."""
    from importlib.metadata import PackageNotFoundError, version

    from ..core.versions import version_numbers

    try:
        return version_numbers(version("pytest-xdist"))
    except PackageNotFoundError:
        return ()


class XdistHooks:
    """Hooks that exist only when pytest-xdist is loaded (registered by the plugin then)."""

    def __init__(self, state, worker: bool = False):
        from .worker_handoff import ControllerSide, WorkerSide

        self.state = state
        self.worker = worker
        self.side = WorkerSide(state) if worker else ControllerSide(state)

    @pytest.hookimpl(tryfirst=True)  # on a worker, before xdist sends the report
    def pytest_runtest_logreport(self, report):
        """Each test's results go to the controller with its teardown report
        (``worker_handoff``)."""
        from .worker_handoff import HANDOFF_ATTR

        if report.when != "teardown":
            return
        if self.worker:
            setattr(report, HANDOFF_ATTR, self.side.handoff(report.nodeid))
            return
        data = getattr(report, HANDOFF_ATTR, None)
        if isinstance(data, dict):
            node = getattr(getattr(report, "node", None), "gateway", None)
            worker = getattr(report, "worker_id", None) or getattr(node, "id", "?")
            self.side.take(str(worker), report.nodeid, data)

    def pytest_collection_finish(self, session):
        """(A worker) the ``@accuracy`` tests it collected, for the controller's crash reports
        (``pytest_handlecrashitem``): no report of a crashed test's own may have come (a crash
        in setup; pytest-rerunfailures logs an attempt's reports only after it, H101)."""
        if not self.worker:
            return
        marked = [i.nodeid for i in session.items if i.get_closest_marker("accuracy")]
        if not marked:  # (nothing written for a session without accuracy tests)
            return
        try:
            path = self.state.marked_registry(get_worker_id(session.config) or "gw")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(registry_bytes("".join(f"{n}\n" for n in marked)))
        except OSError:  # a read-only cache: a test's setup report still tells
            pass

    @pytest.hookimpl(trylast=True)  # after a rerun plugin's, which may make it a "rerun"
    def pytest_handlecrashitem(self, crashitem, report, sched):
        """A worker died running an ``@accuracy`` test (an ACL runtime's segfault, the OOM
        killer): xdist makes the failed report here, on the controller, where the test's mark
        is not known; the summary's section left the test out ("1 passed, 0 failed" beside
        pytest's failure, H100). Its worker's list of marked tests tells. Returns None: a rerun
        plugin's own answer stands."""
        from .terminal_report import MARKED

        if crashitem in self.state.marked_by_workers():
            setattr(report, MARKED, True)
            if report.outcome != "rerun":  # (H102: a rerun that passed kept "false")
                _junit_verdict_of_crash(getattr(sched, "config", None), report)

    @pytest.hookimpl(trylast=True)  # after the plugin's own, which fills the worker's output
    def pytest_sessionfinish(self, session):
        """A worker's output at its end holds only what no test's report carried."""
        output = getattr(session.config, "workeroutput", None)
        if self.worker and output is not None and WORKEROUTPUT_KEY in output:
            output[WORKEROUTPUT_KEY] = self.side.remainder(output[WORKEROUTPUT_KEY])

    def pytest_configure_node(self, node):
        """Every worker of the session gets the controller's session key (the baselines this
        session wrote are registered under it, ``AccuracyState.note_written``)."""
        node.workerinput[SESSION_KEY] = self.state.session_key
        node.workerinput[DIST_KEY] = getattr(node.config.option, "dist", None)

    def pytest_testnodedown(self, node, error):
        """Merge a finished worker's accuracy results and cache counters into the controller."""
        data = getattr(node, "workeroutput", {}).get(WORKEROUTPUT_KEY)
        if data:
            self.state.merge_worker(data)


def interleave_models(config, items) -> None:
    """On an xdist worker, order the checks of a YAML suite round-robin by model, in place.

    xdist's load scheduling sends each worker, in turn, the next ``chunk`` tests of the common
    collection order (``_chunk``). Suites list a model's modes together, so every worker would
    start on the same model and all but one would wait for its golden run (built once, under the
    cache's lock), or, since a check whose golden another worker is building waits for it only
    so long (``accuracy_check.EARLY_GOLDEN_WAIT_S``), run with its dump written and compare it
    once the golden is there. Taking the models in turn, ``chunk`` checks at a time, gives each
    worker its own model to start with. Under ``worksteal`` (``steal_by_default``) xdist first
    splits the collection into one run of consecutive tests per worker (``_worksteal_runs``):
    each run takes the models in turn from its own first model, the next run's from the next
    model, so the workers start on different models there too (8 PP-OCRv4 checks, ``-n 2``: both
    workers started on det, one building its golden while the other ran a det check beside it,
    dump written; benchmarks/bench_check_suite.py). Each model's checks keep their order; other
    tests keep their places.
    """
    if not is_worker(config):
        return
    slots = [k for k, item in enumerate(items) if _model_of(item) is not None]
    queues = {}
    for k in slots:
        queues.setdefault(_model_of(items[k]), []).append(items[k])
    if len(queues) < 2:
        return
    chunk = _chunk(config, len(items))
    runs = [(0, len(items))]
    if config.workerinput.get(DIST_KEY) == WORKSTEAL:
        runs = _worksteal_runs(len(items), get_num_workers(config) or 1)
    wants = [sum(1 for k in slots if start <= k < end) for start, end in runs]
    firsts = _first_models(list(queues), {m: len(q) for m, q in queues.items()}, wants)
    models, ordered = list(queues), []
    kept = dict.fromkeys(models, 0)  # checks held back for a later run to start on
    for m in firsts:
        if m is not None:  # (a run of no checks starts on none)
            kept[m] += 1
    for first, want in zip(firsts, wants):
        want += len(ordered)
        if first is not None:
            kept[first] -= 1  # (this run's own)
        at = models.index(first) if first is not None else 0
        rotation = models[at:] + models[:at]
        while len(ordered) < want:
            for model in rotation:
                take = min(chunk, want - len(ordered), len(queues[model]) - kept[model])
                if take <= 0 and all(len(queues[m]) <= kept[m] for m in models):
                    take = min(chunk, want - len(ordered))  # (never: the runs hold them all)
                ordered.extend(queues[model][:max(take, 0)])
                del queues[model][:max(take, 0)]
    for k, item in zip(slots, ordered):
        items[k] = item


def _first_models(models, counts, wants):
    """The model each run starts on: the runs take the models in turn, each one a model
    that still has a check left for it once the runs before have taken theirs (a model of few
    checks used up by the first run gave the second one the first run's model, H84); None for
    a run of no checks."""
    firsts, left, started = [], dict(counts), 0
    for want in wants:
        at = started % len(models)  # (a run of no checks takes no turn, H86)
        rotation = models[at:] + models[:at]
        first = next((m for m in rotation if left[m] > 0), None) if want else None
        if first is not None:
            left[first] -= 1
            started += 1
        firsts.append(first)
    return firsts


def _worksteal_runs(count: int, workers: int):
    """``[(start, end)]`` of the consecutive tests xdist's ``worksteal`` first sends each of
    ``workers`` idle workers (xdist 3.x: ``len(pending) // workers_left`` each, in turn)."""
    runs, start = [], 0
    for i in range(workers):
        size = (count - start) // (workers - i)
        runs.append((start, start + size))
        start += size
    return runs


def _chunk(config, count: int) -> int:
    """How many tests xdist's load scheduling first sends each worker (xdist 3.x rule)."""
    workers = get_num_workers(config) or 1
    if count < 2 * workers:
        return 1
    limit = getattr(config.option, "maxschedchunk", None) or count
    return max(min(count // workers // 4, limit), 2)


def _model_of(item):
    """The item's model file, one key however the suites spell its path (``models/m.onnx``
    and ``sub/../models/m.onnx`` were two models, H84)."""
    case = getattr(item, "case", None)
    model = getattr(case, "model", None)
    if not isinstance(model, (str, os.PathLike)):  # (another plugin's item may hold anything)
        return None
    return os.path.realpath(model)


def _junit_verdict_of_crash(config, report) -> None:
    """The JUnit properties a marked test that failed with no check gets (``accuracy_passed``
    false and the reason: ``junit_verdict.one_verdict``), for a crashed one: junitxml adds a
    report's properties only at its teardown, which a crashed test never has. Added to the
    test's testcase in junitxml's own writer; nothing where ``--junitxml`` is not given."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # (a pytest that moved it: the summary still counts the test)
        return
    xml = config.stash.get(xml_key, None) if config is not None else None
    if xml is None:
        return
    from .junit_verdict import one_verdict
    from .terminal_report import first_line

    reporter = xml.node_reporter(report)  # (the testcase the crash report then goes to)
    for name, value in one_verdict([], first_line(report.longrepr) or "worker crashed", True):
        reporter.add_property(name, str(value))

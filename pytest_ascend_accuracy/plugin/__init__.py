"""pytest glue: options, the ``accuracy`` marker, fixtures, YAML suites, reports.

Kept thin: every hook hands over to a module that works without pytest (``session``,
``marker_spec``, ``accuracy_check``, ``terminal_report``, ``golden_files``). Nothing heavy
(numpy, onnx, onnxruntime) is imported until a test needs it, so ``pytest --help`` stays fast.

Top layer (with ``cli``): the only package that imports pytest; it may import every library layer.
"""
from __future__ import annotations

import pytest

from ..backends.dump_modes import DUMP_MODES
from ..core import frozen_heap as _frozen_heap  # (imported first: its count before any conftest)
from ..errors import ConfigError
from .fixtures import (  # noqa: F401  (fixtures are registered by being names of this plugin)
    CONTEXT_KEY,
    MODE_FIXTURE,
    _ascend_accuracy_context,
    _ascend_accuracy_mode,
    accuracy_inputs,
    ascend_device,
    ascend_model,
    atc_convert,
    check_accuracy,
    check_dataset,
    check_preprocessing,
    golden_dump,
)
from .loop_heap import close_after_exit_collections, freeze_for_the_loop
from .session import STATE_ATTR, get_state

MARKER_LINE = ("accuracy(threshold=0.95, metric='cosine', per_op=None, ignore=(), modes=None, "
               "max_drop=None): "
               "accuracy test against a golden dump; modes=[...] parametrizes over conversion modes")


def pytest_addoption(parser):
    """Register the ``ascend-accuracy`` option group and ini settings."""
    group = parser.getgroup("ascend-accuracy", "accuracy tests on Ascend NPUs (pytest-ascend-accuracy)")
    group.addoption("--ascend-device", dest="ascend_device", default=None, metavar="N[,M,...]",
                    help="run on these Ascend devices; with xdist worker gwK takes device K mod "
                         "count. Without it the CPU emulator is the backend.")
    group.addoption("--accuracy-backend", dest="accuracy_backend", default="auto",
                    choices=("auto", "ascend", "emulator"),
                    help="backend: ascend, emulator, or auto (ascend when --ascend-device is "
                         "given). Default: auto.")
    group.addoption("--accuracy-threshold", dest="accuracy_threshold", default=None, type=float,
                    metavar="COS", help="default cosine threshold of @accuracy tests (ini "
                                        "ascend_accuracy_threshold; default 0.95).")
    group.addoption("--accuracy-cache-dir", dest="accuracy_cache_dir", default=None, metavar="PATH",
                    help="conversion and golden cache shared by all workers (ini "
                         "ascend_accuracy_cache_dir; default .ascend-accuracy/ under rootdir).")
    group.addoption("--accuracy-regen", dest="accuracy_regen", action="store_true", default=False,
                    help="rewrite the stored golden files and accuracy baselines of failing "
                    "tests (they still fail).")
    group.addoption("--accuracy-regen-all", dest="accuracy_regen_all", action="store_true",
                    default=False, help="rewrite every stored golden file and accuracy baseline "
                    "used (tests pass).")
    group.addoption("--accuracy-report", dest="accuracy_report", default=None, metavar="DIR",
                    help="write per-test reports (CSV, JSON, HTML with a per-op chart) to DIR.")
    group.addoption("--accuracy-diagnose", dest="accuracy_diagnose", action="store_true",
                    default=False, help="walk the precision-debugging flow for each failing "
                    "accuracy test and append its verdict (costs conversions).")
    group.addoption("--accuracy-diagnose-budget", dest="accuracy_diagnose_budget", type=int,
                    default=16, metavar="N", help="most new conversions one diagnosis may spend "
                    "(default 16; cached ones are free).")
    group.addoption("--accuracy-store-inputs", dest="accuracy_store_inputs", action="store_true",
                    default=False, help="stored golden files (golden_dump(path=...)) written in "
                    "this run keep every op's inputs as well as its outputs (default: outputs "
                    "only, what is compared); with --accuracy-regen-all for existing ones.")
    group.addoption("--accuracy-dump-mode", dest="accuracy_dump_mode", default=None,
                    choices=DUMP_MODES,
                    help="what each run dumps of every operator (acl.json dump_mode): output "
                    "(default: what is compared), input, or all (ini ascend_accuracy_dump_mode).")
    group.addoption("--accuracy-progress", dest="accuracy_progress", action="store_true",
                    default=False, help="show progress lines for long conversions and compares "
                    "(shown anyway on an interactive terminal unless -q).")
    group.addoption("--soc-version", dest="soc_version", default=None, metavar="SOC",
                    help="ATC's --soc_version, e.g. Ascend310P3; the emulator models its Cube ops.")
    group.addoption("--ascend-precision-policy", dest="ascend_precision_policy", default=None,
                    metavar="POLICY", help="how the ascend backend passes the precision mode to "
                    "ATC: auto (--precision_mode_v2 from CANN 7.0, else --precision_mode), "
                    "precision_mode or precision_mode_v2 (ini ascend_precision_policy).")
    parser.addini("ascend_accuracy_threshold", "default cosine threshold of @accuracy tests",
                  default="0.95")
    parser.addini("ascend_accuracy_cache_dir", "conversion and golden cache directory",
                  default=".ascend-accuracy")
    parser.addini("ascend_soc_version", "--soc_version passed to ATC", default="")
    parser.addini("ascend_precision_policy", "how the ascend backend passes the precision mode "
                  "to ATC: auto, precision_mode or precision_mode_v2", default="auto")
    parser.addini("ascend_accuracy_cache_size", "size bound of the cache, e.g. 2GB (least "
                  "recently used entries evicted; empty: unbounded)", default="")
    parser.addini("ascend_accuracy_dump_mode", "what each run dumps of every operator: output "
                  "(default), input or all", default="output")
    parser.addini("ascend_accuracy_max_drop", "baseline-check every accuracy test: fail when an "
                  "op's cosine drops more than this below its baseline (empty: only tests with "
                  "@accuracy(max_drop=...))", default="")
    parser.addini("ascend_accuracy_baseline_dir", "where per-operator baselines are kept",
                  default="accuracy-baselines")
    parser.addini("ascend_device_lock", "serialise device use among xdist workers sharing a "
                                        "device (true/false)", type="bool", default=False)
    parser.addini("ascend_accuracy_worksteal", "-n without --dist schedules with xdist's "
                  "worksteal (true/false)", type="bool", default=True)


#: whether ``pytest_cmdline_main`` chose xdist's ``worksteal`` (for the report header)
STEALING_KEY = pytest.StashKey[bool]()


@pytest.hookimpl(hookwrapper=True)
def pytest_cmdline_main(config):
    """``-n N`` without ``--dist``: xdist's ``worksteal`` (``xdist_support.steal_by_default``),
    decided before xdist turns an unset ``--dist`` into ``load``."""
    if any(config.pluginmanager.hasplugin(name) for name in ("xdist", "xdist.plugin")):
        from .xdist_support import steal_by_default

        try:
            config.stash[STEALING_KEY] = steal_by_default(config)
        except ConfigError as exc:
            raise pytest.UsageError(f"pytest-ascend-accuracy: {exc}") from None
    yield


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """In an xdist worker, before the project's conftest files can import numpy: OpenBLAS's
    threads get the worker's share of the cores (``xdist_support.share_blas_threads``)."""
    from .xdist_support import share_blas_threads

    share_blas_threads()


def pytest_configure(config):
    """Register the marker, validate the options and put the session state on ``config``."""
    config.addinivalue_line("markers", MARKER_LINE)
    close_after_exit_collections(config)
    from .session import AccuracyState, settings_from_config
    from ..backends.devices import check_devices_exist, check_devices_visible
    from .dump_lifetime import DumpLifetime
    from .xdist_support import (XdistHooks, get_num_workers, get_worker_id, is_worker,
                                session_key, share_cores)

    try:
        from .ini_names import check_ini_keys
        from .option_form import check_option_form

        check_option_form(config)  # (an ini file not read: its keys are not checked either)
        check_ini_keys(config)
        from ..core.compiled_modules import check_switches
        from ..core.env_names import check_env_names

        check_env_names()
        check_switches()  # ASCEND_ACCURACY_NUMPY_KERNEL / _LAYOUT
        settings = settings_from_config(config)
        if settings.backend == "ascend":
            check_devices_visible(settings.device_ids)
            if not (config.option.help or config.option.version):
                device_given = bool(config.getoption("ascend_device"))
                _require_ascend_runtime(settings, device_given)
                from ..backends.ascend.device_count import runtime_device_count

                # an id past the runtime's count is refused here, as a hidden one is: not
                # each test failing on its own, with advice about --soc-version
                check_devices_exist(settings.device_ids, runtime_device_count(),
                                    where="--ascend-device" if device_given
                                    else "--accuracy-backend")
        state = AccuracyState(settings, worker_id=get_worker_id(config),
                              num_workers=get_num_workers(config), session_key=session_key(config),
                              dump_lifetime=DumpLifetime(config))
        state.device  # noqa: B018  (this worker's device, chosen before any runtime starts)
        share_cores(config)  # onnxruntime threads: each xdist worker its share of the cores
    except ConfigError as exc:
        raise pytest.UsageError(f"pytest-ascend-accuracy: {exc}") from None
    setattr(config, STATE_ATTR, state)
    from ..core.multiprocessing_preload import preload_multiprocessing

    preload_multiprocessing()  # (never imported again by a pytester in-process run)
    from .progress import TerminalProgress

    state.progress = TerminalProgress.for_config(config, state.settings.progress)
    if state.settings.progress and getattr(config.option, "numprocesses", None) \
            and not hasattr(config, "workerinput"):  # asked for, silently absent otherwise
        config.issue_config_time_warning(pytest.PytestConfigWarning(
            "--accuracy-progress shows nothing under -n: xdist workers have no terminal to "
            "write to (run without -n to see progress lines)"), stacklevel=2)
    if state.progress is not None:  # its pytest_runtest_logreport puts result letters back
        config.pluginmanager.register(state.progress, "ascend_accuracy_progress")
    # registered as "xdist" when autoloaded or named by its entry point, as "xdist.plugin"
    # when named by module (-p xdist.plugin, e.g. with PYTEST_DISABLE_PLUGIN_AUTOLOAD=1)
    if any(config.pluginmanager.hasplugin(name) for name in ("xdist", "xdist.plugin")):
        config.pluginmanager.register(XdistHooks(state, is_worker(config)),
                                      "ascend_accuracy_xdist")


def pytest_plugin_registered(plugin, manager):
    if getattr(plugin, "__name__", None) == "_pytest.pytester":  # (core.extension_preload)
        from ..core.extension_preload import preload_extensions

        preload_extensions()


def _stealing(config) -> bool:
    """Whether this session's xdist runs ``worksteal`` because the plugin chose it (a conftest
    may have set another ``dist`` since; ``--collect-only`` starts no workers)."""
    from .xdist_support import WORKSTEAL

    return (config.stash.get(STEALING_KEY, False) and config.option.dist == WORKSTEAL
            and not config.option.collectonly)


def _require_ascend_runtime(settings, device_given: bool) -> None:
    """A usage error naming what is missing, and the option that chose the ascend backend:
    ``--ascend-device``, or ``--accuracy-backend=ascend`` alone (device 0)."""
    from ..backends import ascend_runtime_status

    ok, reason = ascend_runtime_status()
    if not ok:
        devices = ",".join(map(str, settings.device_ids))
        which, drop = (("--ascend-device", "Drop --ascend-device") if device_given else
                       ("--accuracy-backend", "Drop --accuracy-backend=ascend (or pass "
                                              "--accuracy-backend=emulator)"))
        raise ConfigError(which, f"the ascend backend (device{'s' if len(settings.device_ids) > 1 else ''} "
                                 f"{devices}) needs the Ascend runtime, which this machine lacks: "
                                 f"{reason.rstrip('.')}. {drop} to use the CPU emulator.")


def pytest_report_header(config):
    """Say which backend runs the accuracy tests (the emulator unless --ascend-device)."""
    state = getattr(config, STATE_ATTR, None)
    if state is None:
        return None
    settings = state.settings
    line = f"ascend-accuracy: {state.backend_label()}; cache {settings.show(settings.cache_dir)}"
    if _stealing(config):
        line += ("; xdist: worksteal, chosen by this plugin for -n without --dist (--dist load "
                 "or ini ascend_accuracy_worksteal = false keep xdist's default)")
    return line


def pytest_generate_tests(metafunc):
    """Validate ``@accuracy`` arguments and parametrize over its ``modes``."""
    mark = metafunc.definition.get_closest_marker("accuracy")
    if mark is None:
        return
    from .marker_spec import spec_from_marker

    state = get_state(metafunc.config)
    try:
        spec = spec_from_marker(mark, default_threshold=state.settings.threshold,
                                where=metafunc.definition.nodeid)
    except ConfigError as exc:
        raise pytest.Collector.CollectError(f"invalid @accuracy marker: {exc}") from None
    if spec.modes:
        if MODE_FIXTURE not in metafunc.fixturenames:
            metafunc.fixturenames.append(MODE_FIXTURE)
        metafunc.parametrize(MODE_FIXTURE, list(spec.modes), ids=[m.name for m in spec.modes],
                             indirect=True)


@pytest.hookimpl(tryfirst=True)  # before xdist's sends the order: of the tests that remain
def pytest_collection_finish(session):  # after -k, -m, --deselect, --lf (H84, H86)
    """Under xdist: YAML checks alternate by model, so workers start on different models."""
    from .xdist_support import interleave_models

    interleave_models(session.config, session.items)


def pytest_collect_file(file_path, parent):
    """Collect ``accuracy*.yaml`` / ``accuracy*.yml`` files as accuracy test suites."""
    if file_path.suffix in (".yaml", ".yml") and file_path.name.startswith("accuracy"):
        from .yaml_suite import AccuracyYamlFile

        return AccuracyYamlFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session):
    """A session that runs accuracy tests runs its test loop in ``core.frozen_heap``, until
    its config ends (``loop_heap``)."""
    # (an xdist controller: no ``session.items`` on pytest 7)
    items = getattr(session, "items", ())
    frozen = freeze_for_the_loop(session, bool(items) and any(map(_is_accuracy_test, items)))
    yield
    if frozen:  # one collection with the heap given back, what lives set aside again (loop_heap)
        _frozen_heap.refreeze()


def _is_accuracy_test(item) -> bool:
    return getattr(item, "ascend_accuracy_check", False) or \
        "_ascend_accuracy_context" in getattr(item, "fixturenames", ())


#: the item's call phase passed (the teardown phase looks for a test that checked nothing)
_CALL_PASSED = pytest.StashKey[bool]()

#: JUnit properties the plugin records on a test (``fixtures._junit_property_recorder``)
OWN_PROPERTIES = ("accuracy_", "dataset_", "preprocessing_")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A test run again in this session (pytest-rerunfailures): the summary and JUnit keep its
    last attempt only (its properties were there twice, true and false, and its failed first
    check counted beside the passing one)."""
    state = getattr(item.config, STATE_ATTR, None)
    if state is None:
        return
    from .report_folders import empty_report_folders, report_slug

    slug = report_slug(item.nodeid)
    if state.start_attempt(item.nodeid, slug):
        item.user_properties[:] = [p for p in item.user_properties
                                   if not str(p[0]).startswith(OWN_PROPERTIES)]
    if state.settings.report_dir is not None:  # before any of its checks writes there
        empty_report_folders(state.settings.report_dir, slug)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Rewrite stored goldens of failed tests under --accuracy-regen; show failures as a block;
    remove the dumps of passed tests; give the teardown report (JUnit's) one verdict."""
    outcome = yield
    report = outcome.get_result()
    marked = item.get_closest_marker("accuracy") is not None
    if report.failed and marked:
        # for the summary's tests without a check verdict (xdist sends a report's attributes;
        # its keywords hold every parent's name too: a folder named accuracy/ matched them)
        from .setup_checks import error_first_line
        from .terminal_report import MARKED, WHY

        setattr(report, MARKED, True)
        why = error_first_line(call.excinfo) if call.excinfo is not None else None
        if why:
            setattr(report, WHY, why[:200])
    try:
        _makereport(item, call, report)
    finally:
        if report.when == "setup" and _FAILED_WHY in item.stash:  # a rerun: its own outcome
            del item.stash[_FAILED_WHY]
        if report.failed and _FAILED_WHY not in item.stash:
            item.stash[_FAILED_WHY] = _failure_line(report)
        if report.when == "teardown":
            _one_verdict_properties(item, report, marked)
            if CONTEXT_KEY in item.stash:  # its runs' inputs are not held for the session
                item.stash[CONTEXT_KEY].runs.clear()


#: the first line of the test's first failed phase (the JUnit reason of a failure no check made)
_FAILED_WHY = pytest.StashKey[str]()


def _failure_line(report) -> str:
    from .terminal_report import WHY, first_line

    return getattr(report, WHY, None) or first_line(report.longrepr) or f"failed in {report.when}"


def _one_verdict_properties(item, report, marked: bool) -> None:
    """The test's ``accuracy_*`` JUnit properties as one verdict agreeing with its outcome
    (``junit_verdict``), written from the teardown report, which junitxml (and xdist) reads."""
    if not marked and not item.user_properties:
        return  # (most tests of a suite: nothing to rewrite)
    from .junit_verdict import one_verdict

    props = one_verdict(item.user_properties, item.stash.get(_FAILED_WHY, None), marked)
    item.user_properties[:] = props
    report.user_properties = list(props)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Reports made meanwhile are subtests' (``dump_cleanup``); an xfail gets no diagnosis."""
    from .dump_cleanup import running
    from .expected_failure import note_expected_failure

    note_expected_failure(item, getattr(item.config, STATE_ATTR, None))
    with running(item):
        yield


@pytest.hookimpl(trylast=True)  # after pytest's own teardown of the test's fixtures
def pytest_runtest_teardown(item, nextitem):
    """A marked test that passed without starting a check is warned of here, in its teardown
    phase: under ``-W error`` the warning is then that test's error, as pytest makes any
    warning raised in a test. Raised from the report hook, it was an internal error of pytest
    that stopped the session after that test (a CI trial)."""
    if item.stash.get(_CALL_PASSED, False):
        from .setup_checks import warn_if_nothing_checked

        warn_if_nothing_checked(item, item.stash.get(CONTEXT_KEY, None))
    if CONTEXT_KEY in item.stash:
        from .dataset_check import warn_marker_max_drop

        warn_marker_max_drop(item, item.stash[CONTEXT_KEY])


def _makereport(item, call, report) -> None:
    if call.when == "call" and report.passed:
        item.stash[_CALL_PASSED] = True
    if call.when in ("setup", "call"):  # a passing check leaves no dumps, a failing one keeps them
        from .dump_cleanup import settle_dumps

        settle_dumps(item, report)
    if call.when == "setup" and report.failed and call.excinfo is not None:
        from .setup_checks import setup_longrepr  # a fixture's refusal: its paragraph too
        report.longrepr = setup_longrepr(item, call.excinfo) or report.longrepr
    if call.when != "call" or not report.failed:
        return
    ctx = item.stash.get(CONTEXT_KEY, None)
    if ctx is not None and ctx.stored_goldens:
        from .accuracy_check import regen_after_failure

        notes = regen_after_failure(get_state(item.config), ctx.stored_goldens, ctx.nodeid)
        if notes:
            report.sections.append(("ascend-accuracy golden files", "\n".join(notes)))
    if call.excinfo is not None and type(call.excinfo.value).__name__ in ("AccuracyFailure",
                                                                     "DatasetFailure"):
        from .accuracy_check import failure_longrepr

        report.longrepr = failure_longrepr(item, call.excinfo) or report.longrepr
    elif call.excinfo is not None:  # a setup mistake: one paragraph, not a traceback
        from .setup_checks import setup_longrepr

        report.longrepr = setup_longrepr(item, call.excinfo) or report.longrepr
    if call.excinfo is not None:  # --tb=no/line/native: pytest's own rendering, our text
        from .crash_line import own_crash_message

        own_crash_message(report, call.excinfo, item.config.getoption("tbstyle", "auto"))


@pytest.hookimpl(tryfirst=True)
def pytest_keyboard_interrupt(excinfo):
    """Before pytest formats a Ctrl-C, give traceback entries without a line number one
    (CPython can raise KeyboardInterrupt there; pytest's formatting would crash, exit 1)."""
    from .interrupt_traceback import repair_exception

    head = repair_exception(excinfo.value)
    if head is not None:
        excinfo.traceback = type(excinfo.traceback)(head)


def pytest_sessionfinish(session, exitstatus):
    """Close the backend; on an xdist worker, hand results and cache counters to the controller.
    An interrupted session first removes the dumps of the test it interrupted."""
    workeroutput = getattr(session.config, "workeroutput", None)
    state = getattr(session.config, STATE_ATTR, None)
    if state is not None:
        if exitstatus == pytest.ExitCode.INTERRUPTED and state.unsettled_dumps:
            from .dump_cleanup import remove_unsettled

            remove_unsettled(state)
        state.close()
        from .report_folders import finish_report_dir  # the controller writes DIR/index.json

        finish_report_dir(state, index=workeroutput is None,
                          interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)
        if workeroutput is None:  # the controller (or a serial session): its registry goes
            state.forget_session_registry()
    if workeroutput is not None and state is not None:
        from .xdist_support import WORKEROUTPUT_KEY

        workeroutput[WORKEROUTPUT_KEY] = state.to_workeroutput()


def pytest_terminal_summary(terminalreporter, config):
    """Print the ``ascend-accuracy`` section (controller only)."""
    state = getattr(config, STATE_ATTR, None)
    if state is None or hasattr(config, "workerinput"):
        return
    from .terminal_report import (failed_after_checks, failed_before_check, outcomes_by_test,
                                  relative_ids, shown_ids, summary_lines)

    stats = state.summary_cache_stats()
    # a failed pre-processing check is its test's verdict; a passed one is not the accuracy's
    unchecked = failed_before_check(terminalreporter.stats, [r.nodeid for r in state.records] + [
        r["nodeid"] for r in state.dataset_records] + [
        r["nodeid"] for r in state.preprocessing_records if not r["passed"]])
    every = ([(r.nodeid, r.passed) for r in state.records]
             + [(r["nodeid"], r["passed"]) for r in state.dataset_records]
             + [(r["nodeid"], r["passed"]) for r in state.preprocessing_records])
    after = failed_after_checks(terminalreporter.stats, [n for n, ok in every if ok],  # each
                                [n for n, ok in every if not ok] + [u[0] for u in unchecked])
    if not (state.records or state.dataset_records or state.preprocessing_records
            or state.golden_writes or unchecked or any(stats.values())):
        return

    terminalreporter.section("ascend-accuracy")
    report_dir = state.settings.report_dir
    ids = shown_ids(relative_ids(config.invocation_params.dir, config.rootpath), state.records,
                    state.dataset_records, state.preprocessing_records,
                    outcomes_by_test(terminalreporter.stats), unchecked, after)
    for line in summary_lines(**ids, backend=state.backend_label(), cache_stats=stats,
                              golden_writes=state.golden_writes, run_id=state.session_key,
                              base=state.settings.invocation_dir,
                              report_dir=state.settings.show(report_dir)
                              if report_dir and (state.records or state.dataset_records)
                              else None):
        terminalreporter.write_line(line)

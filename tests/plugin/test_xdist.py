"""The same accuracy scenario without xdist, with -n 0, with -n 2, and with -p no:xdist:
identical results and summary (workers' results and cache counters merged on the controller)."""
import pytest

from conftest import ACCURACY_TESTS
from inner_run_env import INNER_RUN_ADDOPTS

pytest.importorskip("xdist")

SUMMARY = [
    r"=+ ascend-accuracy =+",
    r"backend: emulator backend .*",
    r"4 accuracy checks: 3 passed, 1 failed \(2 models x 3 modes\)",
    r"  model +default +high_precision +keep_dtype\(norm\)",
    r"  passing_mlp  passed   -               -",
    r"  overflow     FAILED   passed          passed",
    r"FAILED test_acc.py::test_overflow\[default\] \[overflow, default\]: first failing op norm "
    r"\(cosine 0\.\d+ < 0\.95\)",
    r"cache: 2 hits, 6 misses",
]


#: two workers started: "created: 2/2 workers" from pytest-xdist 3.3.0, "gw0 [4] / gw1 [4]"
#: before (3.2.1 is the xdist extra's floor)
WORKERS_STARTED = r"created: 2/2 workers|gw0 \[\d+\] / gw1 \[\d+\]"
ONE_WORKER_STARTED = r"created: 1/1 worker$|gw0 \[\d+\]$"


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark, when installed
@pytest.mark.parametrize("args", [(), ("-n", "0"), ("-n", "2"), ("-p", "no:xdist")],
                         ids=["plain", "n0", "n2", "no-xdist"])
def test_same_results_with_and_without_xdist(pytester, models_dir, args):
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.re_match_lines(SUMMARY)
    assert sum(line.startswith("=") and "ascend-accuracy" in line for line in result.outlines) == 1
    if args == ("-n", "2"):
        result.stdout.re_match_lines([WORKERS_STARTED])
        result.stdout.fnmatch_lines(["accuracy FAILED: *"])  # the failure block crosses over too


@pytest.mark.parametrize("plugins", [("-p", "pytest_ascend_accuracy.plugin", "-p", "xdist.plugin"),
                                     ("-p", "ascend_accuracy", "-p", "xdist")],
                         ids=["modules", "entry-points"])
def test_workers_results_merge_with_plugin_autoloading_off(pytester, models_dir, monkeypatch,
                                                            plugins):
    """PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 with the plugins named by -p, as module or entry point:
    xdist is then registered under the name given, and the worker's results still reach the
    controller's summary. One worker takes that path as two do (two are merged with autoloading
    on, ``test_same_results_with_and_without_xdist[n2]``); two converted the models twice."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    result = pytester.runpytest(*plugins, "-n", "1")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.re_match_lines(SUMMARY)
    result.stdout.re_match_lines([ONE_WORKER_STARTED, r"accuracy FAILED: .*"])


FAKE_CONFTEST = """
from pytest_ascend_accuracy.testing.fake_runtime import install

install(device_count=4)  # FAKE pyACL in this process (controller and every worker)
"""

DEVICE_TEST = """
import os

def test_device(ascend_device, worker_id):
    with open(os.path.join(os.environ["RECORD_DIR"], worker_id), "w") as f:
        f.write(str(ascend_device))
"""


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
def test_workers_take_device_k_mod_count(pytester, monkeypatch, tmp_path):
    from pytest_ascend_accuracy.testing.fake_atc import install_fake_toolkit

    # no atc call here (the toolkit is found on PATH by its install record): its persistent
    # interpreter is not started ahead of one (a background python importing onnx, 1-2 s of CPU)
    monkeypatch.setenv("FAKE_ATC_SERVER", "0")
    toolkit = install_fake_toolkit(tmp_path / "cann")
    monkeypatch.setenv("PATH", f"{toolkit.home / 'bin'}:{__import__('os').environ['PATH']}")
    monkeypatch.delenv("ASCEND_TOOLKIT_HOME", raising=False)
    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("RECORD_DIR", str(pytester.mkdir("record")))
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_dev=DEVICE_TEST)
    # the controller runs in this process (its fake modules go with the inner run's sys.modules);
    # three workers on two devices: the third wraps round to device 0
    result = pytester.runpytest("--ascend-device=0,1", "-n", "3", "--dist", "each",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["ascend-accuracy: ascend backend on devices 0,1 (xdist worker gwK "
                                 "takes device K mod count); cache *"])
    got = {p.name: p.read_text() for p in (pytester.path / "record").iterdir()}
    assert got == {"gw0": "0", "gw1": "1", "gw2": "0"}


TWO_TESTS = """
def test_a():
    pass

def test_b():
    pass
"""


def _needs_work_stealing():
    from pytest_ascend_accuracy.plugin.xdist_support import WORKSTEAL_SINCE, _xdist_version

    if _xdist_version() < WORKSTEAL_SINCE:
        pytest.skip("pytest-xdist before 3.2.1: the plugin keeps load (worksteal could hang)")


ADDS_DIST_LOAD = """
def pytest_load_initial_conftests(early_config, parser, args):
    args[:] = ["--dist", "load"] + args  # (the pytest docs' way of adding options)
"""


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
@pytest.mark.parametrize("args, how, scheduling", [
    (("-n", "2"), None, "WorkStealingScheduling"),
    (("-n", "1"), None, "WorkStealingScheduling"),  # so the runs below keep load with -n 1
    (("-n", "1", "--dist", "load"), None, "LoadScheduling"),
    (("-n", "1"), "env", "LoadScheduling"),
    (("-n", "1"), "addopts", "LoadScheduling"),
    (("-n", "1", "-p", "adds_dist_load"), "plugin", "LoadScheduling"),
    (("-n", "1"), "ini-off", "LoadScheduling"),
], ids=["no-dist", "no-dist-one-worker", "dist-load", "env-addopts", "ini-addopts",
        "plugin-adds-it", "ini-off"])
def test_n_without_dist_steals_work_and_a_given_dist_is_kept(pytester, monkeypatch, args, how,
                                                             scheduling):
    """``-n 2`` alone runs xdist's worksteal; a --dist load given any way keeps load: on the
    command line, in PYTEST_ADDOPTS, in the ini's addopts, added by a plugin at start-up; and
    ini ``ascend_accuracy_worksteal = false`` keeps it too. The controller chooses before any
    worker starts, whatever N is (``steal_by_default``): past the first two runs, which show
    worksteal chosen for -n 2 and for -n 1, each run starts one worker, not two (CPU of this
    test alone here: 9.9 s for six runs of two workers, 6.5 s for these seven)."""
    _needs_work_stealing()
    if how == "env":  # (the suite's inner-run options kept, tests/conftest.py's docstring:
        # without them this run's worker alone imported hypothesis, compiling it into the suite's
        # bytecode cache first: 2.2-3.9 s of CPU for this run, 0.5-0.9 s with them)
        monkeypatch.setenv("PYTEST_ADDOPTS", f"--dist load {INNER_RUN_ADDOPTS}")
    elif how == "addopts":
        pytester.makeini("[pytest]\naddopts = --dist load\n")
    elif how == "plugin":
        pytester.makepyfile(adds_dist_load=ADDS_DIST_LOAD)  # (found from the cwd in a process
        # of its own, the workers' too; in this process pytester's workers do not find it)
    elif how == "ini-off":
        pytester.makeini("[pytest]\nascend_accuracy_worksteal = false\n")
    pytester.makepyfile(test_two=TWO_TESTS)
    run = pytester.runpytest_subprocess if how == "plugin" else pytester.runpytest
    result = run(*args, "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([f"scheduling tests via {scheduling}"])
    header = [line for line in result.outlines if line.startswith("ascend-accuracy: ")]
    assert len(header) == 1
    assert ("xdist: worksteal, chosen by this plugin" in header[0]) == \
        (scheduling == "WorkStealingScheduling")


TWO_MODEL_SUITE = """
defaults:
  threshold: 0.0
  modes: [default, fusion_off, high_precision, buffer_off]
models:
  - model: models/passing_mlp.onnx
  - model: models/overflow.onnx
"""

RECORDS_FIRST_TESTS = """
import os

def pytest_runtest_logstart(nodeid, location):
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        with open(os.path.join(os.path.dirname(__file__), "ran.txt"), "a") as f:
            f.write(f"{worker} {nodeid}\\n")
"""


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
@pytest.mark.parametrize("dist", [(), ("-k", "not plain"), ("--dist", "load", "-k", "not plain")],
                         ids=["worksteal", "worksteal-k", "load-k"])
def test_under_n_2_each_worker_starts_on_a_model_of_its_own(pytester, models_dir, dist):
    """8 checks of two models: each worker's first check is of another model, under the
    plugin's worksteal (the first split xdist makes, ``xdist_support._worksteal_runs``) as
    under load; ordered for load, both worksteal workers started on the first model, the
    second one checking it beside the first one's golden build. With tests deselected
    (``-k``) too: the order was made before deselection, for runs xdist never split (H84)."""
    _needs_work_stealing()
    pytester.makefile(".yaml", accuracy_two=TWO_MODEL_SUITE)
    pytester.makeconftest(RECORDS_FIRST_TESTS)
    if "-k" in dist:
        pytester.makepyfile(test_plain="".join(f"def test_plain_{k}():\n    pass\n\n"
                                               for k in range(8)))
    result = pytester.runpytest("-n", "2", *dist, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, failed=3)  # overflow fails but under high_precision
    ran = {}
    for line in (pytester.path / "ran.txt").read_text().splitlines():
        worker, nodeid = line.split()
        ran.setdefault(worker, []).append(nodeid)
    assert sorted(ran) == ["gw0", "gw1"]
    firsts = {nodeids[0].split("::")[1].partition("[")[0] for nodeids in ran.values()}
    assert firsts == {"passing_mlp", "overflow"}, ran


CRASHES = """
import os


def test_z_worker_dies():
    os._exit(3)  # as SIGKILL or the OOM killer end a worker: no output sent at its end
"""

BASELINE_FIRST = """
from pytest_ascend_accuracy import accuracy

M = "models/passing_mlp.onnx"


@accuracy(threshold=0.95, max_drop=0.002)
def test_mlp(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
"""

CRASH_SUITE = ("defaults: {threshold: 0.95}\nmodels:\n"
               "  - model: models/passing_mlp.onnx\n"
               "    modes: [default, fusion_off]\n"
               "  - model: models/overflow.onnx\n")


@pytest.fixture(scope="module")
def _shared_runs():
    """Inner runs that several tests of this module check, each its own way."""
    return {}


@pytest.fixture
def crashed_worker_run(request, pytester, _shared_runs):
    """One ``-n 1`` session whose worker dies (a plain test, ``CRASHES``) after it finished the
    checks of a YAML suite and a test that wrote a baseline; shared by the tests of what such a
    worker's finished tests keep (one session of two worker starts and their imports, not two).
    The first test to ask runs it in its own pytester project; a test run alone runs it too."""
    if "crash" not in _shared_runs:
        request.getfixturevalue("models_dir")
        pytester.makefile(".yaml", accuracy_one=CRASH_SUITE)
        pytester.makepyfile(test_a=BASELINE_FIRST, test_z_crash=CRASHES)
        _shared_runs["crash"] = pytester.runpytest("-n", "1", "--max-worker-restart=1",
                                                   "-p", "no:cacheprovider")
    return _shared_runs["crash"]


#: the shared crash run's outcomes: overflow[default], test_mlp (its baseline missing) and the
#: crash failed
CRASH_OUTCOMES = {"passed": 2, "failed": 3}


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
def test_a_crashed_workers_finished_checks_keep_their_verdicts(crashed_worker_run):
    """The checks a worker finished before it died reach the summary: they came to the
    controller only in the worker's output at its end, which a killed worker never sends, and
    read "@accuracy test failed without a check verdict" (H84)."""
    result = crashed_worker_run
    result.assert_outcomes(**CRASH_OUTCOMES)
    result.stdout.fnmatch_lines(["*4 accuracy checks: 2 passed, 2 failed (2 models x 2 modes)*"])
    text = result.stdout.str()
    assert "worker 'gw0' crashed while running 'test_z_crash.py::test_z_worker_dies'" in text
    assert "without a check verdict" not in text


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
def test_a_crashed_workers_written_baselines_and_cache_counts_are_said(crashed_worker_run):
    """The baseline a test wrote before its worker died is listed to check in, and the cache
    line counts its lookups: both came only in the worker's output at its end (H86)."""
    result = crashed_worker_run
    result.assert_outcomes(**CRASH_OUTCOMES)  # the baseline missing, and the crash among them
    result.stdout.fnmatch_lines(["1 baseline file written:",
                                 "  accuracy-baselines/models/passing_mlp/default.yaml: *"])
    cache = [line for line in result.outlines if line.startswith("cache: ")]
    assert cache and cache[0] != "cache: 0 hits, 0 misses", cache


MARKED_CRASHES = """
import os

from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_z_marked_dies(golden_dump):
    os._exit(3)  # as an ACL runtime's segfault ends a worker in a device run
"""


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
def test_an_accuracy_test_whose_worker_crashed_is_a_failure_of_the_section(pytester, models_dir):
    """xdist makes a crashed test's report on the controller, which did not know the test was
    an ``@accuracy`` one: the section said "1 accuracy check: 1 passed, 0 failed" beside
    pytest's failure of it (H100). Its worker's setup report says it is one."""
    pytester.makefile(".yaml", accuracy_one="defaults: {threshold: 0.95}\nmodels:\n"
                                            "  - model: models/passing_mlp.onnx\n")
    pytester.makepyfile(test_z_crash=MARKED_CRASHES)
    result = pytester.runpytest("-n", "1", "--max-worker-restart=1", "-p", "no:cacheprovider",
                                "--junitxml=j.xml")
    result.assert_outcomes(passed=1, failed=1)
    import xml.etree.ElementTree as ET

    case = next(c for c in ET.parse(pytester.path / "j.xml").getroot().iter("testcase")
                if c.get("name") == "test_z_marked_dies")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["accuracy_passed"] == "false"  # (it had no properties at all, H100)
    assert props["accuracy_first_failing_reason"].startswith(
        "no check verdict: worker 'gw0' crashed while running")
    result.stdout.fnmatch_lines([
        "1 accuracy check: 1 passed, 0 failed (1 model x 1 mode); 1 @accuracy test failed "
        "without a check verdict",
        "*FAILED test_z_crash.py::test_z_marked_dies: no check verdict: worker 'gw0' crashed "
        "while running*"], consecutive=False)
    # a crash in setup, and under pytest-rerunfailures (which logs an attempt's setup report
    # only after the attempt): no setup report reaches the controller (H101)
    pytester.makepyfile(conftest="import os, pytest\n\n@pytest.fixture\n"
                                 "def dies():\n    os._exit(3)\n")
    pytester.makepyfile(test_z_crash=MARKED_CRASHES.replace("(golden_dump)", "(dies)"))
    (pytester.path / "accuracy_one.yaml").unlink()  # (the first run's check, which this one
    # ran again before its crash: its worker imported numpy, onnx and onnxruntime for it alone)
    result = pytester.runpytest("-n", "1", "--max-worker-restart=1", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*1 @accuracy test failed without a check verdict"])
    assert not list((pytester.path / ".ascend-accuracy" / ".sessions").glob("*"))


EACH = """
import os

from pytest_ascend_accuracy import accuracy

FAILS = os.environ.get("PYTEST_XDIST_WORKER") == "gw0"  # (as on two devices that differ)


@accuracy(threshold=0.95 if FAILS else 0.0, scale_tolerance=2.0 if FAILS else None)
def test_overflow(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/overflow.onnx", seed=0)
    actual = ascend_model("models/overflow.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/overflow.onnx", inputs))
"""


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
def test_dist_each_counts_every_workers_verdict(pytester, models_dir):
    """Under --dist each every worker runs every test: the summary counts both verdicts (the
    first per-test handoff kept the one whose report came last, H86)."""
    pytester.makepyfile(test_each=EACH)
    result = pytester.runpytest("-n", "2", "--dist", "each", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["2 accuracy checks: 1 passed, 1 failed (1 model x 1 mode)"])


LAST_FAILED = """
defaults:
  threshold: 0.95
models:
  - model: models/overflow.onnx
    modes: [default, fusion_off, high_precision]
  - model: models/passing_mlp.onnx
    modes: [default, fusion_off, high_precision]
    threshold: {default: 1.0}
"""


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
def test_lf_with_a_path_keeps_each_worker_on_a_model_of_its_own(pytester, models_dir):
    """``--lf accuracy_lf.yaml`` selects the last failures after every plugin's
    pytest_collection_modifyitems: the order made there gave both workers overflow (H86).
    On pytest 9.2 --lf reran every check of a YAML suite: an item's id held its mode in its
    name, never equal to the stored id, whose brackets pytest parses as parameters."""
    _needs_work_stealing()
    pytester.makefile(".yaml", accuracy_lf=LAST_FAILED)
    pytester.runpytest().assert_outcomes(passed=3, failed=3)  # (serial: the last failures)
    pytester.makeconftest(RECORDS_FIRST_TESTS)
    result = pytester.runpytest("-n", "2", "--lf", "accuracy_lf.yaml")
    result.assert_outcomes(failed=3)
    ran = {}
    for line in (pytester.path / "ran.txt").read_text().splitlines():
        worker, nodeid = line.split()
        ran.setdefault(worker, []).append(nodeid.split("::")[1].partition("[")[0])
    assert {models[0] for models in ran.values()} == {"overflow", "passing_mlp"}, ran

"""8 checks (PP-OCRv4 det and cls x 4 modes, a YAML suite) run by pytest serially and with
``-n 2`` as a user's project runs them (issue 17's ``-n 2`` goal; ``bench_check.py`` runs it after
the per-model figures): pytest with this plugin and pytest-xdist only
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` and ``-p`` for the two packages' entry points, whatever else
is installed here), reading compiled bytecode even where ``PYTHONDONTWRITEBYTECODE`` is set
(``bytecode_environment``); wall time, CPU time of the whole run, the cores busy on the machine
over the run (``/proc/stat`` every 0.1 s: start-up, checks, exit), each model's checks serially
and side by side (their call phases, from pytest's ``--durations=0``) and how much of each run's
wall time its processes spent inside checks, the share of the CPU time
spent in the kernel, a session that runs no check (what pytest and xdist cost around the
checks), the same -n 2 run with ``--dist load`` (xdist's own default; without ``--dist`` the
plugin picks ``worksteal``: ``plugin.xdist_support.steal_by_default``), the same -n 2 run with
onnxruntime's default threading (``ASCEND_ACCURACY_ORT_THREADS=0``) to show where the CPU time
goes when two workers each start one spinning thread per core, and the same two runs with every
pytest plugin this environment holds (this repository's test dependencies: what they add to
each process, the controller and every worker, is printed and named). Before each timed run
about as much memory as the run uses is touched and freed, off the clock
(``bench_check.preheat``, as ``bench_check``'s steps; ``--no-preheat`` skips it): on this VM
two det checks started side by side on memory the host had taken back took 2.6-3.4 s each,
1.6 s after pre-heating.
"""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ocr_models import files_and_bytes, mb, ocr_model

MODES = ["default", "fusion_off", "high_precision", "buffer_off"]

SUITE = """defaults:
  threshold: 0.0
  inputs: {{seed: 0}}
  modes: [{modes}]
models:
  - name: det
    model: {det}
    input_shape: {{x: [1, 3, {size}, {size}]}}
    # on random inputs the probability map's values are float16 subnormals, flushed to zero
    # under fusion_off: cosine NaN, which fails any threshold (a real finding, not a cost)
    ignore: [p2o.Sigmoid.0]
  - name: cls
    model: {cls}
    input_shape: {{x: [1, 3, 48, 192]}}
"""


#: the distributions whose pytest plugins a user's project loads for these checks
USER_PLUGINS = ("pytest-ascend-accuracy", "pytest-xdist")


def plugin_entry_points():
    """``{entry point name: (module, distribution)}`` of every pytest plugin installed here."""
    from importlib.metadata import entry_points

    return {ep.name: (ep.value, ep.dist.name if ep.dist else "?")
            for ep in entry_points(group="pytest11")}


def _is_user_plugin(dist: str) -> bool:
    return dist.replace("_", "-").lower() in {d.lower() for d in USER_PLUGINS}


def user_environment():
    """(pytest args, environment) that load only ``USER_PLUGINS``' plugins, as a project whose
    environment holds pytest, pytest-xdist and this plugin runs: autoloading off, each of their
    entry points named with ``-p`` (xdist's workers inherit both)."""
    args = []
    for name, (_, dist) in plugin_entry_points().items():
        if _is_user_plugin(dist):
            args += ["-p", name]  # the entry point's name: registered as autoloading would
    return args, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def bytecode_environment(root: Path) -> dict:
    """Environment entries (None: removed) under which every pytest process of the suite runs
    reads compiled bytecode, as on a user's machine. Where ``PYTHONDONTWRITEBYTECODE`` is set
    (this container sets it) each process -- serial's one, -n 2's controller and both workers --
    would compile this package from source again, 0.1-0.2 s of CPU each: three times under -n 2,
    once serial. The runs share a bytecode cache in the benchmark's temp dir instead
    (``PYTHONPYCACHEPREFIX``). Such a prefix stands for every ``__pycache__``, the standard
    library's and site-packages' too, so ``warm_bytecode`` fills it with an untimed run before
    the timed ones. Empty where bytecode is written anyway."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return {}
    return {"PYTHONDONTWRITEBYTECODE": None, "PYTHONPYCACHEPREFIX": str(root / "pycache")}


def warm_bytecode(project: Path, byte_env: dict) -> None:
    """Fill ``bytecode_environment``'s cache, off the clock: one ``-n 2`` run of the suite with
    every plugin installed here (what any timed run imports, controller and workers alike)."""
    if byte_env:
        pytest_run(project, ["-n", "2"], byte_env)


def _environ(extra) -> dict:
    """``os.environ`` with ``extra`` applied (a None value removes the variable)."""
    env = dict(os.environ, **extra)
    return {k: v for k, v in env.items() if v is not None}


def other_plugins_cost(project: Path, user, user_env, byte_env) -> str:
    """The pytest plugins installed here beyond ``USER_PLUGINS``, and what they add to one pytest
    process: ``pytest --collect-only`` of the suite with every plugin against with the user's
    only, median of 3 each (hypothesis's plugin, for one, imports the whole hypothesis package
    in its terminal summary, in every pytest process, whether or not a test used it)."""
    others = sorted(f"{name} ({dist} {_version(dist)})"
                    for name, (_, dist) in plugin_entry_points().items() if not _is_user_plugin(dist))
    if not others:
        return "no other plugins"

    def collect(extra, env_extra) -> float:
        walls = []
        for _ in range(3):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "--collect-only", *extra], cwd=project, capture_output=True,
                           env=_environ(env_extra))
            walls.append(time.perf_counter() - t)
        return sorted(walls)[1]

    every, own = collect([], byte_env), collect(user, user_env)
    return (f"{', '.join(others)}: one pytest process collecting this suite takes {every:.2f} s with "
            f"them, {own:.2f} s without")


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


def suite_preheat_bytes(det_size: int) -> int:
    """What each timed run touches and frees first (``bench_check.preheat``): about what a run
    of the suite allocates and writes at once (det 736: a 925 MB golden, 379 MB dumps per det
    check, two workers' processes)."""
    return max(256 << 20, int(3.0e9 * (det_size / 736) ** 2))


def pytest_run(project: Path, extra, env_extra, preheat_bytes: int = 0) -> dict:
    shutil.rmtree(project / "cache", ignore_errors=True)
    basetemp = project / "basetemp"
    shutil.rmtree(basetemp, ignore_errors=True)
    env = _environ(env_extra)
    from bench_check import preheat

    preheat(preheat_bytes)  # last before the clock: reported pages go back within seconds
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    sampler = CoreSampler()
    t0 = time.perf_counter()
    with sampler:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "--accuracy-cache-dir", str(project / "cache"),
                               f"--basetemp={basetemp}", "--durations=0", "--durations-min=0",
                               *extra],
                              cwd=project, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    last = (proc.stdout.strip().splitlines() or ["?"])[-1]
    if proc.returncode != 0:  # threshold 0: every check passes unless something is broken
        sys.exit(f"pytest {' '.join(extra)} failed:\n{proc.stdout[-5000:]}\n{proc.stderr[-2000:]}")
    left = files_and_bytes(basetemp) if basetemp.exists() else [0, 0]
    return {"wall_s": wall, "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "sys_s": after.ru_stime - before.ru_stime,
            "summary": last, "left": left, "cache": files_and_bytes(project / "cache"),
            "busy": sampler.samples, "calls": check_calls(proc.stdout)}


def check_calls(stdout: str) -> dict:
    """``{test id: seconds}`` of each check's call phase, from pytest's ``--durations=0``
    lines (``0.84s call     accuracy_bench.yaml::det[default]``)."""
    import re

    calls = {}
    for line in stdout.splitlines():
        m = re.match(r"\s*(\d+(?:\.\d+)?)s call\s+(\S+)", line)
        if m:
            calls[m.group(2)] = float(m.group(1))
    return calls


def _model_of_test(test_id: str) -> str:
    """``det`` of ``accuracy_bench.yaml::det[default]``."""
    return test_id.rpartition("::")[2].partition("[")[0]


def calls_side_by_side(serial: dict, par: dict) -> str:
    """Each model's checks (call phase) in the serial run and in the -n 2 run (``pytest_run``
    results), and how much of each run's wall time went inside checks: where -n 2 loses is
    whether its checks run slower side by side or its workers sit outside them."""
    parts, models = [], {}
    for test_id in serial["calls"]:
        models.setdefault(_model_of_test(test_id), []).append(test_id)
    for model, ids in sorted(models.items()):
        s = sum(serial["calls"][t] for t in ids)
        n = sum(par["calls"].get(t, float("nan")) for t in ids)
        ratio = f"{n / s:.2f} x" if s > 0 else "serial 0 s"
        parts.append(f"{model} {len(ids)} checks {s:.2f} s -> {n:.2f} s ({ratio})")
    busy = sum(par["calls"].values())
    return (f"{'; '.join(parts) or 'no call phases read'}; the -n 2 workers were inside "
            f"checks {busy:.2f} s of "
            f"2 x {par['wall_s']:.2f} s wall ({busy / (2 * par['wall_s']):.0%}), serial "
            f"{sum(serial['calls'].values()):.2f} s of {serial['wall_s']:.2f} s")


class CoreSampler:
    """Cores busy on the whole machine, from /proc/stat every 0.1 s while a run lasts (Linux; no
    samples elsewhere): shows when a run leaves cores idle (start-up, exit) and when it does not.
    Busy is user + nice + system + irq + softirq time over all of it with idle, iowait and steal
    (a VM's time the host gave to others); guest time is already inside user. Anything else
    running on the machine counts as busy too: measure on an otherwise idle machine."""

    STEP = 0.1

    def __init__(self):
        import threading

        self.samples = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _read():
        """(CPUs, busy ticks, all ticks) of the machine's aggregate ``cpu`` line."""
        with open("/proc/stat") as f:
            lines = f.read().splitlines()
        user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in lines[0].split()[1:9])
        cpus = sum(1 for line in lines[1:] if line.startswith("cpu") and line[3:4].isdigit())
        busy = user + nice + system + irq + softirq
        return cpus, busy, busy + idle + iowait + steal

    def _run(self):
        try:
            _, busy, total = self._read()
            while not self._stop.wait(self.STEP):
                cpus, b, t = self._read()
                if t > total:
                    self.samples.append(cpus * (b - busy) / (t - total))
                busy, total = b, t
        except (OSError, ValueError, IndexError):  # no /proc/stat (not Linux), or another layout
            return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def no_check_walls(project: Path, user, user_env, runs: int = 3) -> dict:
    """Wall time of a session that runs no check (``-k`` matching none: pytest starts, workers
    start and collect, everything exits), serial and ``-n 2``, median of ``runs`` each, taken
    in turn: what each pays around its checks however many there are. xdist's controller
    starts its workers only once it has started itself, and waits for them to exit. The runs
    get ``--basetemp`` as the timed ones do: without it xdist's controller takes a numbered
    directory under pytest's own temp root whether a test runs or not (serial takes one only
    for a test that asks), and pytest then deletes the oldest there beyond three, whatever
    ran before this benchmark: an earlier test-suite run's directory took -n 2's median to
    5.09 s against serial's 0.33 s."""
    import statistics

    walls = {"serial": [], "-n 2": []}
    basetemp = project / "basetemp"
    for _ in range(runs):
        for label, extra in (("serial", []), ("-n 2", ["-n", "2"])):
            shutil.rmtree(basetemp, ignore_errors=True)  # off the clock, as pytest_run's
            t = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                   f"--basetemp={basetemp}", "-k", "no_check_has_this_name",
                                   *user, *extra], cwd=project,
                                  capture_output=True, text=True, env=_environ(user_env))
            walls[label].append(time.perf_counter() - t)
            if proc.returncode not in (0, 5):  # 5: no test ran
                sys.exit(f"pytest -k (none) {' '.join(extra)} failed:\n{proc.stdout[-2000:]}")
    return {label: statistics.median(w) for label, w in walls.items()}


def _busy_profile(samples, edge: float = 0.6) -> str:
    """Mean cores busy over the first and last ``edge`` seconds of a run and in between."""
    k = max(1, int(round(edge / CoreSampler.STEP)))
    if len(samples) < 2 * k + 1:
        return "too short to sample"
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    return (f"first {edge:.1f} s {mean(samples[:k]):.2f}, between {mean(samples[k:-k]):.2f}, "
            f"last {edge:.1f} s {mean(samples[-k:]):.2f}")


def bench_xdist(root: Path, det_size: int, repeat: int, preheat: bool = True) -> bool:
    project = root / "xdist"
    project.mkdir(parents=True, exist_ok=True)
    (project / "accuracy_bench.yaml").write_text(SUITE.format(
        modes=", ".join(MODES), det=ocr_model("det"), cls=ocr_model("cls"), size=det_size))
    (project / "pytest.ini").write_text("[pytest]\n")
    imp = subprocess.run([sys.executable, "-X", "importtime", "-c", "import pytest_ascend_accuracy.plugin, "
                          "onnx, onnxruntime, ml_dtypes; print(ml_dtypes.__version__)"],
                         capture_output=True, text=True)
    cumulative = {line.split("|")[2].strip(): int(line.split("|")[1]) for line in imp.stderr.splitlines()
                  if line.startswith("import time:") and line.split("|")[1].strip().isdigit()}
    import_us = sum(cumulative.get(m, 0) for m in ("pytest_ascend_accuracy.plugin", "onnx", "onnxruntime"))
    ml_dtypes_us = cumulative.get("ml_dtypes", 0)  # inside onnx's figure: 0.7.0 alone took ~0.5 s
    ml_dtypes_version = imp.stdout.strip() or "?"
    user, user_env = user_environment()
    byte_env = bytecode_environment(root)
    warm_bytecode(project, byte_env)
    user_env = dict(user_env, **byte_env)
    runs = {"serial": (user, user_env), "-n 2": (user + ["-n", "2"], user_env),
            "-n 2 --dist load (xdist's own default)": (user + ["-n", "2", "--dist", "load"],
                                                       user_env),
            "-n 2, onnxruntime default threads": (user + ["-n", "2"],
                                                  dict(user_env, ASCEND_ACCURACY_ORT_THREADS="0")),
            "serial, every plugin here": ([], byte_env),
            "-n 2, every plugin here": (["-n", "2"], byte_env)}
    from bench_check import _create_cost, file_system

    create_before = _create_cost(project)  # what earlier deletions left (see _create_cost)
    best, walls = {}, {label: [] for label in runs}
    heat = suite_preheat_bytes(det_size) if preheat else 0
    for _ in range(repeat):  # interleaved: each kind sees the same load
        for label, (extra, env) in runs.items():
            r = pytest_run(project, extra, env, heat)
            walls[label].append(r["wall_s"])
            if label not in best or r["wall_s"] < best[label]["wall_s"]:
                best[label] = r
    print(f"\n== 8 checks (det {det_size}x{det_size} and cls x {', '.join(MODES)}), pytest, cold cache, "
          f"best of {repeat}; pytest loads this plugin and pytest-xdist only ({' '.join(user)}, "
          f"autoloading off), except in the rows 'every plugin here'" +
          ("; PYTHONDONTWRITEBYTECODE is set here: the runs read compiled bytecode from a cache "
           "(PYTHONPYCACHEPREFIX) an untimed run filled first, as a user's pytest reads its "
           "__pycache__, instead of compiling this package again in every process"
           if byte_env else "")
          + (f"; before each run {mb(heat)} touched and freed, off the clock (pre-heating, as "
             f"bench_check's steps; --no-preheat skips it)" if heat else
             "; no pre-heating (--no-preheat)"))
    for label, r in best.items():
        print(f"   {label:40s} wall {r['wall_s']:6.2f} s   CPU {r['cpu_s']:6.2f} s   "
              f"{r['summary']}")
    serial, par, dflt = best["serial"], best["-n 2"], best["-n 2, onnxruntime default threads"]
    print(f"   where the CPU goes under -n 2: {par['cpu_s'] - serial['cpu_s']:+.2f} s CPU against serial with "
          f"threads shared out, {dflt['cpu_s'] - serial['cpu_s']:+.2f} s with onnxruntime's default "
          f"(one spinning thread per core in each worker); imports per worker "
          f"{import_us / 1e6:.2f} s (pytest_ascend_accuracy.plugin + onnx + onnxruntime; of it ml_dtypes "
          f"{ml_dtypes_version}, which onnx imports, {ml_dtypes_us / 1e6:.2f} s)")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"   cores busy (CPU / wall): serial {serial['cpu_s'] / serial['wall_s']:.2f}, -n 2 "
          f"{par['cpu_s'] / par['wall_s']:.2f}, of {cores}: serial already runs onnxruntime beside "
          f"the thread comparing its tensors with the golden as they come (the suite's YAML "
          f"entries make their goldens first: plugin.compared_runs), so -n 2 gains only what "
          f"serial leaves idle")
    print(f"   the checks themselves (pytest --durations, call phase; each model's golden is "
          f"built in its first check): {calls_side_by_side(serial, par)}")
    print(f"   cores busy, the whole machine sampled every {CoreSampler.STEP} s: serial "
          f"{_busy_profile(serial['busy'])}; -n 2 {_busy_profile(par['busy'])} (start-up and exit "
          f"are at the edges)")
    kernel = ", ".join(f"{label} {best[label]['sys_s']:.2f} s of {best[label]['cpu_s']:.2f} s"
                       for label in ("serial", "-n 2"))
    print(f"   of the CPU time, in the kernel (writing dumps and goldens into the page cache, "
          f"creating and removing files, faulting in memory): {kernel}; the kernel's own "
          f"threads writing that data back to disk run beside them and are in neither figure")
    create_after = _create_cost(project)
    print(f"   creating a file in the suite's project folder ({file_system(project)}), median of "
          f"200: {create_before * 1e3:.2f} ms before the runs, {create_after * 1e3:.2f} ms after "
          f"(see bench_check._create_cost: on ext4 without a journal each create scans past the "
          f"inodes deleted in the last minutes, the model rounds' and the runs' own dumps)")
    empty = no_check_walls(project, user, user_env)
    checks_only = (serial["wall_s"] - empty["serial"]) / (par["wall_s"] - empty["-n 2"])
    print(f"   a session that runs no check (-k matching none, median of 3): serial "
          f"{empty['serial']:.2f} s, -n 2 {empty['-n 2']:.2f} s (the controller starts, then its "
          f"workers start and collect; all exit); the walls less these: -n 2 / serial "
          f"{checks_only:.2f}")
    print(f"   bounds on the speed-up: -n 2's own CPU time spread perfectly over {cores} cores "
          f"-> {serial['wall_s'] / (par['cpu_s'] / cores):.2f}; serial's CPU time with no "
          f"per-process cost at all -> {cores * serial['wall_s'] / serial['cpu_s']:.2f}")
    every = best["serial, every plugin here"]["wall_s"] / best["-n 2, every plugin here"]["wall_s"]
    others = other_plugins_cost(project, user, user_env, byte_env)
    print(f"   with every pytest plugin installed here loaded as well ({others}): -n 2 / "
          f"serial {every:.2f}; serial pays such a per-process cost once, -n 2 in its controller "
          f"after the workers' own, twice on its wall clock")
    load = best["-n 2 --dist load (xdist's own default)"]
    print(f"   scheduling: -n 2 without --dist runs xdist's worksteal (the plugin's choice: an "
          f"idle worker takes checks a busy one has not started); with --dist load, each worker "
          f"keeps the checks it was sent: -n 2 / serial {serial['wall_s'] / load['wall_s']:.2f} "
          f"against {serial['wall_s'] / par['wall_s']:.2f}")
    speedup = serial["wall_s"] / par["wall_s"]
    met = speedup >= 1.3
    paired = sorted(a / b for a, b in zip(walls["serial"], walls["-n 2"]))  # same repeat: same load
    import statistics

    print("   speed-up (serial / -n 2) within each repeat, the two run one after the other: "
          + ", ".join(f"{x:.2f}" for x in paired) + f"; median {statistics.median(paired):.2f}"
          + "; in run order, serial / -n 2 walls: " + ", ".join(
              f"{a:.2f} / {b:.2f}" for a, b in zip(walls["serial"], walls["-n 2"])))
    print(f"   {'-n 2 speed-up over serial (best of each)':40s} {speedup:5.2f}  (goal >= 1.3)  "
          f"{'met' if met else 'NOT MET'}")
    # every check passes (threshold 0): what stays on disk outside the cache is pytest's temp dir
    left = max((r["left"] for r in best.values()), key=lambda f: f[1])
    cache = best["serial"]["cache"]
    disk_met = left[1] == 0
    print(f"   disk: left in pytest's temp dir after 8 passing checks (most of any run): "
          f"{left[1]} bytes in {left[0]} files (goal 0: {'met' if disk_met else 'NOT MET'}); "
          f"the cache holds {mb(cache[1])} in {cache[0]} files")
    return met and disk_met

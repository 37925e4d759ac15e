"""The plugin's per-session state: settings, the shared cache, the backend, and what happened.

One ``AccuracyState`` lives on ``config`` (``config._ascend_accuracy``). It builds the cache and
backend lazily (so ``pytest --help`` and collection stay cheap), records one ``CheckRecord`` per
accuracy check and every golden file written, and moves those plus the cache counters from xdist
workers to the controller (``to_workeroutput`` / ``merge_worker``). No pytest import here.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ..backends import BackendKind
from ..core.locations import DEFAULT_CACHE_DIR, path_under
from ..core.regen import Regen
from ..errors import ConfigError
from .registry_text import append_line, registry_text
from .settings_values import (ini_bool, read_cache_dir, cache_size_setting, dump_mode_setting,
                              max_drop_setting, read_positive, precision_policy_setting)


@dataclass(frozen=True)
class Settings:
    """The plugin's options, resolved and validated once at start-up."""

    backend: BackendKind = BackendKind.EMULATOR  # auto already resolved
    device_ids: Tuple[int, ...] = ()
    threshold: float = 0.95
    cache_dir: Path = Path(DEFAULT_CACHE_DIR)
    regen: Regen = Regen.NONE  # --accuracy-regen / --accuracy-regen-all, one value
    report_dir: Optional[Path] = None
    soc_version: Optional[str] = None
    device_lock: bool = False
    rootdir: Path = Path(".")
    #: where pytest ran: paths the plugin prints are relative to it, so they paste as shown
    invocation_dir: Path = Path(".")
    diagnose: bool = False
    diagnose_budget: int = 16
    max_drop: Optional[float] = None  # ini default for every test; None: marker only
    baseline_dir: Path = Path("accuracy-baselines")
    cache_size: Optional[int] = None  # bytes (ini ascend_accuracy_cache_size); None: unbounded
    ini_file: str = ""  # the ini file pytest read (config.inipath), "" for none
    store_inputs: bool = False  # --accuracy-store-inputs: stored goldens keep op inputs too
    progress: bool = False  # --accuracy-progress: progress lines for long conversions/compares
    #: --accuracy-dump-mode / ini ascend_accuracy_dump_mode: what each run dumps of every op
    #: (acl.json dump_mode); "output" is what a check compares
    dump_mode: str = "output"
    #: --ascend-precision-policy / ini ascend_precision_policy: how the ascend backend spells
    #: the precision mode for ATC (auto: --precision_mode_v2 from CANN 7.0)
    precision_policy: str = "auto"

    def show(self, path) -> str:
        """``path`` as printed: relative to where pytest ran (``core.locations.shown``)."""
        from ..core.locations import shown

        return shown(path, self.invocation_dir)


@dataclass(frozen=True)
class CheckRecord:
    """The outcome of one accuracy check, as the summary and reports need it."""

    nodeid: str
    model: str
    mode: str
    passed: bool
    metric: str = "cosine"
    threshold: float = 0.95
    first_op: Optional[str] = None
    first_value: Optional[float] = None
    coverage: Optional[float] = None
    report: Optional[str] = None
    #: why a check that passed its threshold still failed (its per-operator baseline)
    note: Optional[str] = None
    #: the input shape it ran at, as ATC's --input_shape spells it (``img:1,3,64,64``; None:
    #: not known): named where one test checked several (``report.checked_shapes``)
    input_shape: Optional[str] = None
    #: the model file it converted, its real path: two files of one name are two models (a
    #: review), one file reached by two paths (a link) is one
    model_file: Optional[str] = None
    #: that file as its test gave it, made absolute (links not followed): its label is made of
    #: it (``model_labels``; a link's target names folders the test never named)
    model_as_given: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(data: Dict[str, Any]) -> "CheckRecord":
        return CheckRecord(**data)


@dataclass(frozen=True)
class GoldenWrite:
    """A stored golden file written this session, and why (missing, regen, regen-all)."""

    path: str
    reason: str
    nodeid: str = ""


def settings_from_config(config) -> Settings:
    """Read and validate the ``ascend-accuracy`` options and ini values of a pytest config."""
    from ..backends import resolve_backend_kind
    from .marker_spec import validate_threshold
    from ..backends.devices import parse_device_list

    device_text = config.getoption("ascend_device")
    if device_text is not None and not device_text.strip():  # --ascend-device=$UNSET_VARIABLE
        raise ConfigError("--ascend-device", "given with an empty value (an unset variable, as in "
                                             "--ascend-device=$NPU_ID?); give device ids, e.g. "
                                             "--ascend-device=0, or leave the option out to run "
                                             "on the CPU emulator")
    device_ids = parse_device_list(device_text) if device_text is not None else ()
    kind = resolve_backend_kind(config.getoption("accuracy_backend"), device_ids)
    if kind is BackendKind.ASCEND and not device_ids:
        device_ids = (0,)
    threshold = config.getoption("accuracy_threshold")
    where = "--accuracy-threshold"
    if threshold is None:
        threshold, where = config.getini("ascend_accuracy_threshold"), "ascend_accuracy_threshold"
    try:
        threshold = float(threshold)
    except (TypeError, ValueError):
        raise ConfigError(where, f"must be a number within [0, 1], got {threshold!r}") from None
    threshold = validate_threshold(threshold, where)
    rootdir = Path(config.rootpath)
    invocation_dir = Path(config.invocation_params.dir)
    cache_dir = read_cache_dir(config.getoption("accuracy_cache_dir"),
                               config.getini("ascend_accuracy_cache_dir"), rootdir, invocation_dir)
    report_dir = config.getoption("accuracy_report")
    if report_dir:
        report_dir = Path(report_dir).expanduser()
        report_dir = report_dir if report_dir.is_absolute() else Path.cwd() / report_dir
    soc = config.getoption("soc_version") or config.getini("ascend_soc_version") or None
    if soc and kind is not BackendKind.ASCEND:  # the emulator's cube kernels (rounding.py)
        from ..backends.emulator.rounding import cube_fp32_kernels

        cube_fp32_kernels(soc, "--soc-version" if config.getoption("soc_version")
                          else "ascend_soc_version")
    # the emulator runs no ATC: nothing spells a precision mode for it (make_backend gives the
    # policy to the ascend backend alone; a diagnosis's fix is spelled by the mode there)
    if config.getoption("ascend_precision_policy", None) and kind is not BackendKind.ASCEND:
        raise ConfigError("--ascend-precision-policy", "given with the emulator backend, where "
                                                       "it changes nothing: it says how the "
                                                       "ascend backend (--ascend-device=N) "
                                                       "passes the precision mode to ATC")
    ini_bool(config, "ascend_accuracy_worksteal")  # read under -n only: a typo refused in any run
    return Settings(
        backend=kind, device_ids=device_ids, threshold=threshold, cache_dir=cache_dir,
        regen=Regen.from_flags(bool(config.getoption("accuracy_regen")),
                               bool(config.getoption("accuracy_regen_all"))),
        report_dir=report_dir or None, soc_version=soc,
        device_lock=ini_bool(config, "ascend_device_lock"), rootdir=rootdir,
        invocation_dir=invocation_dir,
        max_drop=max_drop_setting(config),
        baseline_dir=path_under(rootdir, config.getini("ascend_accuracy_baseline_dir")
                                or "accuracy-baselines"),
        diagnose=bool(config.getoption("accuracy_diagnose")),
        diagnose_budget=read_positive(config.getoption("accuracy_diagnose_budget"),
                                      "--accuracy-diagnose-budget"),
        cache_size=cache_size_setting(config), ini_file=str(config.inipath or ""),
        store_inputs=bool(config.getoption("accuracy_store_inputs", False)),
        progress=bool(config.getoption("accuracy_progress", False)),
        dump_mode=dump_mode_setting(config.getoption("accuracy_dump_mode", None), config),
        precision_policy=precision_policy_setting(config.getoption("ascend_precision_policy", None),
                                                  config),
    )


def _utc_now() -> str:
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


@dataclass
class AccuracyState:
    """Session state: one object on ``config``. Cache and backend are built on first use."""

    settings: Settings
    worker_id: Optional[str] = None
    num_workers: Optional[int] = None
    records: List[CheckRecord] = field(default_factory=list)
    golden_writes: List[GoldenWrite] = field(default_factory=list)
    #: dataset checks as plain dicts (``dataset.result.to_record``)
    dataset_records: List[Dict[str, Any]] = field(default_factory=list)
    #: pre-processing (AIPP) checks as plain dicts (``aipp_check.record_preprocessing``)
    preprocessing_records: List[Dict[str, Any]] = field(default_factory=list)
    worker_cache_stats: Dict[str, int] = field(default_factory=dict)
    workers_merged: int = 0
    report_slugs: Dict[str, int] = field(default_factory=dict)
    #: the page of the diagnosis just written for a test (``check_flow.diagnosis_lines``),
    #: taken by the report of the failure it diagnosed, which links it
    diagnosed: Dict[str, Path] = field(default_factory=dict)
    #: the running test where pytest expects it to fail (``expected_failure``: no diagnosis)
    expected_failure: Optional[object] = None
    #: baselines and stored goldens this process wrote from its own run: {absolute path: test
    #: id} (every xdist worker's are in the session's registry, ``written_by``)
    files_written: Dict[str, str] = field(default_factory=dict)
    #: this pytest session's id, the xdist controller's on every worker (``session_registry``;
    #: the run id of every compare.json and of DIR/index.json, ``plugin.report_folders``)
    session_key: str = ""
    #: when this process's session started (UTC, ISO 8601): in compare.json and index.json
    started: str = field(default_factory=_utc_now)
    #: how long pytest keeps a failing test's dumps (``dump_lifetime.DumpLifetime``), said after
    #: ``dump kept: DIR``; None: not said
    dump_lifetime: Optional[Any] = None
    #: tests that started in this session (``start_attempt``)
    attempted: set = field(default_factory=set)
    #: tests told their baseline does not judge their metric (``BaselineMetricWarning``, once)
    baseline_metric_warned: set = field(default_factory=set)
    #: dump directories of passing tests, removed when they ended -> the test that made them
    removed_dumps: Dict[Path, str] = field(default_factory=dict)
    #: dump directories of tests whose call phase has not ended (``plugin.dump_cleanup``)
    unsettled_dumps: Dict[Path, str] = field(default_factory=dict)
    #: runs compared as they ran, not written, by the dump directory they would write into:
    #: what writes each (``compared_runs``; a test that fails writes them, ``dump_cleanup``)
    unwritten_runs: Dict[Path, list] = field(default_factory=dict)
    #: the progress reporter (``plugin.progress.TerminalProgress``), None when not shown
    progress: Any = None
    _cache: Any = None
    _backend: Any = None
    _removal: Any = None

    # -- lazily built collaborators ------------------------------------------------------------
    @property
    def cache(self):
        if self._cache is None:
            from ..core.cache import Cache

            self._cache = Cache(self.settings.cache_dir, max_bytes=self.settings.cache_size,
                                on_build=self.progress.building if self.progress else None)
        return self._cache

    @property
    def removal(self):
        """Removes passing tests' dumps in threads (``core.background_removal``)."""
        if self._removal is None:
            from ..core.background_removal import BackgroundRemoval

            self._removal = BackgroundRemoval()
        return self._removal

    @property
    def backend(self):
        if self._backend is None:
            from ..backends import make_backend

            s = self.settings
            self._backend = make_backend(s.backend, self.cache, device_ids=s.device_ids,
                                         worker_id=self.worker_id, soc_version=s.soc_version,
                                         num_workers=self.num_workers, dump_mode=s.dump_mode,
                                         precision_policy=s.precision_policy)
        return self._backend

    @property
    def device(self):
        """This worker's ``DeviceAssignment``, or None on the emulator."""
        if self.settings.backend is not BackendKind.ASCEND:
            return None
        from ..backends.devices import assign_device

        return assign_device(self.settings.device_ids, self.worker_id,
                             num_workers=self.num_workers)

    def close(self) -> None:
        """Release the backend (the Ascend backend closes its device) once the passing tests'
        dumps are removed; safe to call twice."""
        if self._removal is not None:
            self._removal.wait()
        backend, self._backend = self._backend, None
        close = getattr(backend, "close", None)
        if close is not None:
            close()
        if self._cache is not None:  # this session's entries may be evicted from now on
            self._cache.release()

    def device_lock(self):
        """A context manager that serialises device use among workers sharing a device
        (only with ini ``ascend_device_lock = true`` on the ascend backend; else a no-op)."""
        import contextlib

        device = self.device
        if device is None or not self.settings.device_lock:
            return contextlib.nullcontext()
        from ..backends.devices import DeviceLock

        return DeviceLock(self.settings.cache_dir, device.device_id)

    def backend_label(self) -> str:
        """Which backend runs the tests, for the header and the summary."""
        s = self.settings
        if s.backend != "ascend":
            return ("emulator backend (CPU stand-in for ATC + NPU numerics, no Ascend device; "
                    "--ascend-device=N runs on an NPU)"
                    + (f"; soc {s.soc_version}: kept Cube ops compute as on that chip"
                       if s.soc_version else "")
                    + (f"; ini ascend_precision_policy {s.precision_policy} applies on the "
                       "ascend backend only" if s.precision_policy != "auto" else ""))
        ids = ",".join(map(str, s.device_ids))
        text = f"ascend backend on device{'s' if len(s.device_ids) > 1 else ''} {ids}"
        if len(s.device_ids) > 1:
            text += " (xdist worker gwK takes device K mod count)"
        if s.soc_version:
            text += f", soc {s.soc_version}"
        return text

    def remove_dumps(self, directory: Path, nodeid: str) -> None:
        """Remove a passing test's dump directory (``removal``), remembering whose it was."""
        self.removed_dumps[Path(directory)] = nodeid
        self.removal.remove(directory)

    def check_not_removed(self, dump, nodeid: str) -> None:
        """A ``ConfigError`` when ``dump`` (a dump's root directory) was removed with the dumps
        of a test that passed: compared, its missing files read as every tensor failing, and the
        hint blamed fusion or buffer reuse."""
        if not isinstance(dump, (str, os.PathLike)) or not self.removed_dumps:
            return
        path = Path(dump)
        for directory in (path, *path.parents):  # not every removed dump: a check each test
            owner = self.removed_dumps.get(directory)
            if owner is not None:
                raise ConfigError(nodeid, f"the dump {self.settings.show(path)} was made in "
                                          f"{owner}, which passed, and its files were removed "
                                          f"when that test ended (a passing test leaves no "
                                          f"dumps). Run the model in the test that checks it "
                                          f"(ascend_model(...).run(inputs)), or check it in "
                                          f"{owner} itself")

    # -- recording -----------------------------------------------------------------------------
    def record(self, record: CheckRecord) -> None:
        self.records.append(record)

    # -- baselines and stored goldens written by this session (every worker's) -----------------
    @property
    def session_registry(self) -> Path:
        """``<cache dir>/.sessions/<session key>.written``: one line per baseline or stored
        golden a process of this session wrote from its own run (a file: xdist workers share no
        memory)."""
        return self.settings.cache_dir / ".sessions" / f"{self.session_key}.written"

    def note_written(self, path: str, nodeid: str) -> None:
        """``path`` (absolute) was written by ``nodeid``'s run: no check of this session may
        pass against it (``written_by``)."""
        self.files_written[path] = nodeid
        try:
            append_line(self.session_registry, f"{path}\t{nodeid}\n")
        except OSError:  # a read-only cache: this process still knows its own
            pass

    def written_by(self, path: str) -> Optional[str]:
        """The test whose run wrote ``path`` in this session, on any worker; None if none."""
        if path in self.files_written:
            return self.files_written[path]
        try:
            text = registry_text(self.session_registry.read_bytes())
        except OSError:
            return None
        for line in text.splitlines():
            written, _, nodeid = line.partition("\t")
            if written == path:
                return nodeid
        return None

    def marked_registry(self, worker: str) -> Path:
        """``<cache dir>/.sessions/<session key>.marked-<worker>``: the @accuracy tests a worker
        collected (``xdist_support.XdistHooks.pytest_collection_finish``)."""
        return self.session_registry.with_name(f"{self.session_key}.marked-{worker}")

    def marked_by_workers(self) -> set:
        found = set()
        for path in self.session_registry.parent.glob(f"{self.session_key}.marked-*"):
            try:
                found.update(registry_text(path.read_bytes()).split("\n"))
            except OSError:
                pass
        return found - {""}

    def forget_session_registry(self) -> None:
        """At the session's end (the controller): the registries go, their folder if empty;
        so do those of sessions ended a week ago or more without removing theirs (a killed
        controller's: a CI timeout, H102)."""
        import time

        week_ago = time.time() - 7 * 24 * 3600
        for path in self.session_registry.parent.glob("*"):
            try:
                if path.name.startswith(f"{self.session_key}.") or \
                        path.stat().st_mtime < week_ago:
                    path.unlink()
            except OSError:
                pass
        try:
            self.session_registry.parent.rmdir()
        except OSError:
            pass

    def start_attempt(self, nodeid: str, slug: str) -> bool:
        """A test starts (again: a rerun plugin runs a failed test once more in the same
        session): drop what an earlier attempt recorded, so the summary counts the last one
        (a rerun passed counted as "caught" beside its failure), and let its report go to the
        same folder (``slug``, ``accuracy_check.report_slug``). Whether there was an earlier
        attempt."""
        if nodeid not in self.attempted:
            self.attempted.add(nodeid)
            return False
        self.records[:] = [r for r in self.records if r.nodeid != nodeid]
        self.dataset_records[:] = [r for r in self.dataset_records if r.get("nodeid") != nodeid]
        self.preprocessing_records[:] = [r for r in self.preprocessing_records
                                         if r.get("nodeid") != nodeid]
        for key in [k for k in self.report_slugs if k == slug or k.startswith(f"{slug}/")]:
            del self.report_slugs[key]  # its accuracy and dataset reports: numbered from 1 again
        return True

    def mark_failed(self, nodeid: str, note: str) -> None:
        """The last check of ``nodeid`` failed after all (e.g. against its baseline)."""
        from dataclasses import replace

        for k in range(len(self.records) - 1, -1, -1):
            if self.records[k].nodeid == nodeid:
                self.records[k] = replace(self.records[k], passed=False, note=note)
                return

    def record_golden_write(self, path, reason: str, nodeid: str = "") -> None:
        self.golden_writes.append(GoldenWrite(str(path), reason, nodeid))

    def golden_policy(self, nodeid: str = ""):
        """The stored-golden policy of this session; repairs of killed writers' leftovers are
        recorded as golden writes of ``nodeid`` (shown in the summary)."""
        from ..golden.stored import GoldenPolicy

        def recovered(path, note: str) -> None:
            self.record_golden_write(self.settings.show(path), note, nodeid)

        return GoldenPolicy(self.settings.regen, on_recovery=recovered,
                            store_inputs=self.settings.store_inputs, show=self.settings.show,
                            on_missing_written=lambda p: self.note_written(os.path.abspath(p),
                                                                           nodeid))

    def cache_stats(self) -> Dict[str, int]:
        """This process's cache counters plus every merged worker's."""
        totals = {"hits": 0, "misses": 0, "rebuilt": 0}
        if self._cache is not None:
            for k, v in self._cache.stats.as_dict().items():
                totals[k] = totals.get(k, 0) + v
        for k, v in self.worker_cache_stats.items():
            totals[k] = totals.get(k, 0) + v
        return totals

    def summary_cache_stats(self) -> Dict[str, Any]:
        """``cache_stats`` and, where this session added entries to an unbounded cache that
        now holds more than ``UNBOUNDED_NOTE_BYTES``, ``held`` (bytes) and ``cache_dir`` (as
        printed): the summary says so, with the bound to set."""
        totals: Dict[str, Any] = dict(self.cache_stats())
        if self.settings.cache_size is None and totals.get("misses"):
            from ..core.cache_size import UNBOUNDED_NOTE_BYTES, held_bytes

            held = held_bytes(self.settings.cache_dir)
            if held > UNBOUNDED_NOTE_BYTES:
                totals.update(held=held, cache_dir=os.path.abspath(self.settings.cache_dir),
                              ini_file=self.settings.ini_file)
        return totals

    # -- xdist transport (plain JSON-able data only) -----------------------------------------
    def to_workeroutput(self) -> Dict[str, Any]:
        return {
            "records": [r.to_dict() for r in self.records],
            "golden_writes": [asdict(g) for g in self.golden_writes],
            "dataset_records": list(self.dataset_records),
            "preprocessing_records": list(self.preprocessing_records),
            "cache": self.cache_stats(),
        }

    def merge_worker(self, data: Dict[str, Any]) -> None:
        self.records.extend(CheckRecord.from_dict(r) for r in data.get("records", ()))
        self.golden_writes.extend(GoldenWrite(**g) for g in data.get("golden_writes", ()))
        self.dataset_records.extend(data.get("dataset_records", ()))
        self.preprocessing_records.extend(data.get("preprocessing_records", ()))
        for k, v in data.get("cache", {}).items():
            self.worker_cache_stats[k] = self.worker_cache_stats.get(k, 0) + int(v)
        self.workers_merged += 1


STATE_ATTR = "_ascend_accuracy"


def get_state(config) -> AccuracyState:
    """The session's ``AccuracyState`` (set up by the plugin's ``pytest_configure``)."""
    state = getattr(config, STATE_ATTR, None)
    if state is None:
        raise ConfigError("pytest-ascend-accuracy", "the plugin is not active in this session "
                                                    "(was it disabled with -p no:ascend_accuracy?)")
    return state

"""A check's report folder holds its whole set or nothing.

``compare.csv``, ``compare.json``, ``report.html`` (and a failure's ``tensors/``) are written
into a hidden sibling folder, ``.<name>.partial-<pid>-<token>`` (``ReportSet.begin``), and
renamed into place as one (``ReportSet.write``). A Ctrl-C, or a check refused after its
compare (no verdict), leaves no folder and no temp leftover (``ReportSet.discard``): a trial
found folders holding compare.csv alone, its rows reading FAILED for a test JUnit never listed,
or reading all-passing for a test that failed "no check verdict".

Every ``compare.json`` names the run that wrote it (``"run"``: id, times, test id, outcome),
so ``report.run_index`` can list one run's folders among older ones.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

#: the middle of a staging folder's name: ``.<final name>.partial-<pid>-<token>``
PARTIAL = ".partial-"
#: the order in which a set's entries join a folder that exists already (its page last)
_ORDER = ("compare.csv", "tensors", "compare.json", "report.html")


@contextlib.contextmanager
def interrupts_held():
    """SIGINT and SIGTERM wait while the block runs (main thread, POSIX; elsewhere a no-op):
    a few renames are not cut in half by a Ctrl-C, which is raised right after."""
    import signal
    import threading

    if not hasattr(signal, "pthread_sigmask") \
            or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@dataclass
class ReportSet:
    """One check's report files: written under ``staging``, moved to ``final`` when complete."""

    final: Path
    staging: Path
    settled: bool = False

    @classmethod
    def begin(cls, final) -> "ReportSet":
        final = Path(final)
        token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        staging = final.parent / f".{final.name}{PARTIAL}{token}"
        staging.mkdir(parents=True)
        return cls(final, staging)

    @property
    def csv_path(self) -> Path:
        """Where ``assert_accuracy`` writes the CSV (the staging folder)."""
        return self.staging / "compare.csv"

    def write(self, result, verdict, *, title: str, hint=None, links=None,
              baseline: Optional[Mapping[str, object]] = None,
              run: Optional[Mapping[str, object]] = None) -> Path:
        """``compare.json`` (with ``run``, completed by the outcome) and ``report.html`` beside
        the CSV, then the whole set into place; on any error or interrupt, nothing."""
        from .html_report import write_html
        from .json_report import write_json

        try:
            run = None if run is None else run_block(run, verdict, baseline)
            write_json(result, self.staging / "compare.json", verdict, baseline=baseline, run=run)
            files = [n for n in ("compare.csv", "compare.json") if (self.staging / n).is_file()]
            write_html(result, self.staging / "report.html", verdict, title=title, hint=hint,
                       links=links, files=files, baseline=baseline)
            return self.settle()
        except BaseException:
            self.discard()
            raise

    def settle(self) -> Path:
        """Rename the staging folder to ``final``; where ``final`` holds other files of the
        test already (a dataset page, a corrected AIPP copy), move the set's entries in, the
        page last, with interrupts held."""
        with interrupts_held():
            try:
                os.rename(self.staging, self.final)
            except OSError:
                if not self.final.is_dir():
                    raise
                entries = sorted(self.staging.iterdir(), key=lambda p: (
                    _ORDER.index(p.name) if p.name in _ORDER else -1, p.name))
                for entry in entries:
                    target = self.final / entry.name
                    if entry.is_dir() and target.is_dir():
                        shutil.rmtree(target, ignore_errors=True)
                    os.replace(entry, target)
                self.staging.rmdir()
            self.settled = True
        return self.final

    def discard(self) -> None:
        """Remove the staging folder (nothing of this set reaches ``final``)."""
        if not self.settled:
            with interrupts_held():
                shutil.rmtree(self.staging, ignore_errors=True)


def run_block(run: Mapping[str, object], verdict, baseline=None) -> dict:
    """``compare.json``'s ``"run"``: what names the run (``id``, ``started``, ``nodeid``,
    ``check``...) plus when this file was written and the check's outcome as the terminal
    states it (``passed``: the threshold verdict and, where judged, the baseline;
    ``first_failing_op``)."""
    import datetime

    first = verdict.first
    passed = bool(verdict.passed) and (baseline is None or bool(baseline.get("passed")))
    return {**run, "written": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"),
            "passed": passed, "first_failing_op": first.row.label if first else None,
            "baseline": (f"{baseline.get('status')}: {baseline.get('line')}"
                         if baseline is not None else None)}


def remove_partials(root: Path, name: str) -> None:
    """Staging folders of ``name`` and its ``name-N`` siblings left by a writer that was killed
    (SIGKILL: no ``discard``), removed when the test runs again."""
    pattern = re.compile(rf"\.{re.escape(name)}(-\d+)?{re.escape(PARTIAL)}\d+-[0-9a-f]+")
    try:
        entries = list(Path(root).iterdir())
    except OSError:
        return
    for entry in entries:
        if pattern.fullmatch(entry.name):
            shutil.rmtree(entry, ignore_errors=True)


def remove_own_partials(root: Path) -> None:
    """At the session's end: staging folders of this process never settled (a deferred set
    whose writer never came)."""
    mark = f"{PARTIAL}{os.getpid()}-"
    try:
        entries = list(Path(root).iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") and mark in entry.name:
            shutil.rmtree(entry, ignore_errors=True)

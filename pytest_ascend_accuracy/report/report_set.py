"""A check's report folder holds its whole set or nothing.

``compare.csv``, ``compare.json``, ``report.html`` (and a failure's ``tensors/``) are written
into a hidden sibling folder, ``.<name>.partial-<pid>-<machine>-<token>`` (``ReportSet.begin``), and
renamed into place as one (``ReportSet.write``). A Ctrl-C, or a check refused after its
compare (no verdict), leaves no folder and no temp leftover (``ReportSet.discard``): a trial
found folders holding compare.csv alone, its rows reading FAILED for a test JUnit never listed,
or reading all-passing for a test that failed "no check verdict".

Every ``compare.json`` names the run that wrote it (``"run"``: id, times, test id, outcome),
so ``report.run_index`` can list one run's folders among older ones.
"""
from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

#: the middle of a staging folder's name: ``.<final name>.partial-<pid>-<machine>-<token>``
PARTIAL = ".partial-"


@functools.lru_cache(maxsize=None)
def _machine() -> str:
    """Who can see the writer's pid: this host and pid namespace, as 8 hex digits. A writer
    of another container or host sharing the folder has a pid that means nothing here (a
    review: a session's end removed a live writer's staging folder of another container)."""
    import hashlib
    import socket

    try:
        ns = str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        ns = ""
    return hashlib.sha1(f"{socket.gethostname()}/{ns}".encode()).hexdigest()[:8]


#: the order in which a set's entries join a folder that exists already (its page last)
_ORDER = ("compare.csv", "tensors", "compare.json", "report.html")


@contextlib.contextmanager
def interrupts_held():
    """SIGINT and SIGTERM wait while the block runs (main thread; elsewhere a no-op): a few
    renames are not cut in half by a Ctrl-C, which is delivered right after to the handler in
    place. The handlers are swapped for one that only notes the signal: a signal mask holds it
    in this thread alone, and the kernel hands a Ctrl-C to any thread that does not block it
    (numpy's BLAS threads, onnxruntime's), so Python raised KeyboardInterrupt inside the block
    (a review: a folder left with compare.csv alone)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            old = signal.getsignal(signum)
            if old is None:  # set outside Python: it could not be put back
                continue
            previous[signum] = signal.signal(signum, lambda n, frame: caught.append(n))
        except (ValueError, OSError):  # not a signal this platform lets Python handle
            continue
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
        # as they came, to the handlers in place now; a SIGTERM first, and each one raised
        # whatever the one before raised (a Ctrl-C's KeyboardInterrupt lost a SIGTERM after
        # it: a CI cancel left the process running)
        _deliver(sorted(dict.fromkeys(caught), key=lambda n: n != signal.SIGTERM))


def _deliver(signals) -> None:
    import signal

    if signals:
        try:
            signal.raise_signal(signals[0])
        finally:
            _deliver(signals[1:])


@dataclass
class ReportSet:
    """One check's report files: written under ``staging``, moved to ``final`` when complete."""

    final: Path
    staging: Path
    settled: bool = False
    #: what ``write`` rendered the set's pages from (``link_diagnosis`` renders them again)
    written: Optional[dict] = None

    @classmethod
    def begin(cls, final, *, at=None) -> "ReportSet":
        """A set to settle into ``final``, staged beside it, or in ``at`` (a folder above it,
        the report directory, whose staging folders of dead writers the session's end removes:
        ``<test>/dataset-tensors`` is staged as ``.<test>--dataset-tensors.partial-...`` in DIR,
        and nothing of it, not even ``<test>/``, exists until it settles)."""
        final = Path(final)
        token = f"{os.getpid()}-{_machine()}-{uuid.uuid4().hex[:8]}"
        name = final.name if at is None else "--".join(final.relative_to(at).parts)
        staging = (final.parent if at is None else Path(at)) / f".{name}{PARTIAL}{token}"
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
        self.written = dict(result=result, verdict=verdict, title=title, hint=hint, links=links,
                            baseline=baseline, run=run)
        try:
            self._pages(self.staging, None)
            return self.settle()
        except BaseException:
            self.discard()
            raise

    def link_diagnosis(self, diagnosis: Optional[str], hint=None) -> None:
        """Once the failure's ``--accuracy-diagnose`` page is written (``diagnosis``, relative
        to ``final``; None: it did not run): ``compare.json`` names it and ``report.html``
        links it (``hint``: the hint as it reads now, where given), each file replaced whole.
        The set was in place while the diagnosis ran (its conversions take minutes on a
        device): a job cancelled then keeps the check's reports."""
        if self.settled and self.written is not None:
            if hint is not None:
                self.written["hint"] = hint
            with interrupts_held():
                self._pages(self.final, diagnosis)

    def _pages(self, folder: Path, diagnosis: Optional[str]) -> None:
        from .html_report import write_html
        from .json_report import write_json

        w = self.written
        run = None if w["run"] is None else run_block(w["run"], w["verdict"], w["baseline"],
                                                      diagnosis)
        write_json(w["result"], folder / "compare.json", w["verdict"], baseline=w["baseline"],
                   run=run)
        files = [n for n in ("compare.csv", "compare.json") if (folder / n).is_file()]
        write_html(w["result"], folder / "report.html", w["verdict"], title=w["title"],
                   hint=w["hint"], links=w["links"], files=files, baseline=w["baseline"],
                   diagnosis=diagnosis, actual_note=(w["run"] or {}).get("actual_dump"))

    def settle(self) -> Path:
        """Rename the staging folder to ``final``; where ``final`` holds other files of the
        test already (a dataset page, a corrected AIPP copy), move the set's entries in, the
        page last, with interrupts held. A set's own kinds of entry (``_ORDER``) that this set
        lacks go first: another session's set of the same test, settled there meanwhile (two
        sessions writing one report directory), left its failure's ``tensors/`` beside this
        passing page."""
        with interrupts_held():
            try:
                os.rename(self.staging, self.final)
            except OSError:
                if not self.final.is_dir():
                    raise
                for name in _ORDER:
                    stale = self.final / name
                    if not os.path.lexists(self.staging / name) and os.path.lexists(stale):
                        if stale.is_dir() and not stale.is_symlink():
                            shutil.rmtree(stale, ignore_errors=True)
                        else:
                            stale.unlink()
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


def run_block(run: Mapping[str, object], verdict, baseline=None,
              diagnosis: Optional[str] = None) -> dict:
    """``compare.json``'s ``"run"``: what names the run (``id``, ``started``, ``nodeid``,
    ``check``...) plus when this file was written and the check's outcome as the terminal
    states it (``passed``: the threshold verdict and, where judged, the baseline;
    ``first_failing_op``; ``diagnosis``: its ``--accuracy-diagnose`` page, relative to the
    folder, or None)."""
    import datetime

    first = verdict.first
    passed = bool(verdict.passed) and (baseline is None or bool(baseline.get("passed")))
    return {**run, "written": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"),
            "passed": passed, "first_failing_op": first.row.label if first else None,
            "baseline": (f"{baseline.get('status')}: {baseline.get('line')}"
                         if baseline is not None else None), "diagnosis": diagnosis}


def remove_partials(root: Path, name: str) -> None:
    """Staging folders of ``name`` and its ``name-N`` siblings left by a writer that was killed
    (SIGKILL: no ``discard``), removed when the test runs again. Only a dead writer's: another
    test's slug may read as this one's plus ``-N`` (its digest all digits), and its set being
    written by a live worker was removed (a review: its CSV and tensors lost)."""
    pattern = re.compile(rf"\.{re.escape(name)}(-\d+)?{re.escape(PARTIAL)}(\d+)-([0-9a-f]+)-"
                         rf"[0-9a-f]+")
    for entry in _entries(root):
        match = pattern.fullmatch(entry.name)
        if match and _dead(int(match.group(2)), match.group(3)):
            shutil.rmtree(entry, ignore_errors=True)


def remove_own_partials(root: Path) -> None:
    """At the session's end: staging folders of this process never settled (a deferred set
    whose writer never came), and any whose writer is dead (a worker killed while writing:
    xdist does not run its test again, so no setup would remove it)."""
    pattern = re.compile(rf"\..+{re.escape(PARTIAL)}(\d+)-([0-9a-f]+)-[0-9a-f]+")
    for entry in _entries(root):
        match = pattern.fullmatch(entry.name)
        if match and (match.group(2) == _machine() and int(match.group(1)) == os.getpid()
                      or _dead(int(match.group(1)), match.group(2))):
            shutil.rmtree(entry, ignore_errors=True)


def _entries(root: Path):
    try:
        return list(Path(root).iterdir())
    except OSError:
        return []


def _dead(pid: int, machine: str) -> bool:
    """Whether the writer ``pid`` of ``machine`` is known to have ended: only a process of this
    host and pid namespace can be looked at (another's counts as running), and only on POSIX
    (on Windows ``os.kill(pid, 0)`` sends a Ctrl-C event: a review)."""
    if machine != _machine() or os.name != "posix" or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process, or a pid this call may not signal
        return False
    return False

"""Progress lines for long conversions, golden runs and compares, through pytest's terminal
reporter (never raw prints).

Shown on an interactive terminal unless ``-q``; silent in CI logs (not a terminal) unless
``--accuracy-progress`` asks for them. Never under xdist (``-n``): a worker's terminal output
goes nowhere, whatever is asked (the README says so). Only real work is shown: a conversion or
golden run when the cache builds it (a hit costs nothing and says nothing), and a build or a
compare only once it has run for ``delay`` seconds (0 with ``--accuracy-progress``). On a
terminal one line is updated in place; elsewhere a line is written at most every
``log_interval`` seconds. Output capture is suspended while a line is written, the way pytest's
live logging does, and pytest's next result starts on a fresh line.
"""
from __future__ import annotations

import contextlib
import threading
import time
from typing import Optional

import pytest

#: what a build in each cache namespace is, for the line
_BUILDS = {"emulator": "converting (emulator)", "ascend-om": "converting (ATC)",
           "golden": "golden run (onnxruntime fp32)"}
PREFIX = "ascend-accuracy: "


class TerminalProgress:
    """Draws the plugin's progress lines on pytest's terminal reporter (registered as a plugin
    of the session for its ``pytest_runtest_logreport``)."""

    def __init__(self, config, *, forced: bool, delay: float = 1.0, interval: float = 0.2,
                 log_interval: float = 5.0):
        self.config, self.forced = config, forced
        self.delay = 0.0 if forced else delay
        self._interval, self._log_interval = interval, log_interval
        self._tty: Optional[bool] = None  # decided on first use (the reporter registers late)
        self._open = False  # the cursor is at the end of a line of ours
        self.lines = 0  # lines drawn (for tests)

    @staticmethod
    def for_config(config, forced: bool) -> Optional["TerminalProgress"]:
        """The progress reporter of a session, or None when progress is never shown (an xdist
        worker, whose terminal is nobody's; ``-q`` without ``--accuracy-progress``)."""
        if hasattr(config, "workerinput"):
            return None
        if not forced and config.getoption("verbose", 0) < 0:
            return None
        return TerminalProgress(config, forced=forced)

    def _reporter(self):
        return self.config.pluginmanager.getplugin("terminalreporter")

    @property
    def tty(self) -> bool:
        if self._tty is None:
            tr = self._reporter()
            isatty = getattr(tr, "isatty", False)  # a method from pytest 8.4.1, a bool before
            self._tty = bool(isatty() if callable(isatty) else isatty)
        return self._tty

    @property
    def active(self) -> bool:
        """Lines are drawn: on a terminal, or anywhere with ``--accuracy-progress``."""
        return self._reporter() is not None and (self.forced or self.tty)

    @property
    def interval(self) -> float:
        return self._interval if self.tty else self._log_interval

    # -- drawing ---------------------------------------------------------------------------
    def _draw(self, text: str, *, first: bool) -> None:
        tr = self._reporter()
        if tr is None or not self.active:
            return
        capman = self.config.pluginmanager.getplugin("capturemanager")
        guard = (capman.global_and_fixture_disabled() if capman is not None
                 else contextlib.nullcontext())
        with guard:
            if first:
                if self._open and tr.currentfspath is None:  # our own line is the last one
                    tr.write("\n")
                else:
                    tr.ensure_newline()
                tr.write(PREFIX + text)
            elif self.tty:
                tr.rewrite(PREFIX + text, erase=True)
            else:
                tr.write("\n" + PREFIX + text)
            tr._tw.flush()
            tr.currentfspath = None  # pytest's next result starts its own line
        self._open = True
        self.lines += 1

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report) -> None:
        """Before the terminal reporter's: after our lines, put back the file prefix that the
        result letter of the default output follows (verbose output re-prints its own)."""
        if not self._open:
            return
        self._open = False
        tr = self._reporter()
        if tr is not None and self.config.getoption("verbose", 0) <= 0 and tr.currentfspath is None:
            tr.write_fspath_result(report.nodeid, "")

    # -- builds (cache misses) ---------------------------------------------------------------
    @contextlib.contextmanager
    def building(self, namespace: str, key: str):
        """``Cache(on_build=...)``: one line while a conversion or golden run is built, once it
        has run for ``delay`` seconds (0 with ``--accuracy-progress``): every quick build of a
        small model drew two lines and broke the result letters' line (review helper). The
        build runs in this thread, so a timer draws the first line; the build itself writes
        nothing to the terminal meanwhile (a conversion's tool output is piped)."""
        what = _BUILDS.get(namespace, f"building {namespace}")
        start = time.monotonic()
        shown = threading.Event()

        def announce():
            self._draw(f"{what} ...", first=True)
            shown.set()

        timer = None
        if self.delay <= 0:
            announce()
        elif self.active:
            timer = threading.Timer(self.delay, announce)
            timer.daemon = True
            timer.start()
        ok = False
        try:
            yield
            ok = True
        finally:
            if timer is not None:
                timer.cancel()
                timer.join()  # a line it began drawing is whole before the last one
            if shown.is_set():
                took = time.monotonic() - start
                self._draw(f"{what} {'done' if ok else 'failed'} in {took:.1f} s", first=False)

    # -- compares ----------------------------------------------------------------------------
    def compare(self, label: str = "") -> "CompareLine":
        """A ``progress`` callback for ``compare_dumps`` (``close()`` it when done)."""
        return CompareLine(self, label)


class CompareLine:
    """One compare's line: drawn after the reporter's delay, throttled, the last one always."""

    def __init__(self, owner: TerminalProgress, label: str):
        from ..compare.progress_line import ProgressThrottle

        self.owner, self.label = owner, label
        self.throttle = ProgressThrottle(owner.delay, owner.interval)
        self.drawn = False

    def __call__(self, p) -> None:
        from ..compare.progress_line import compare_progress_text

        if not self.throttle.ready(p.done == p.total):
            return
        self.owner._draw(compare_progress_text(p, self.throttle.elapsed), first=not self.drawn)
        self.drawn = True

    def close(self) -> None:
        """Nothing to do: the last update was drawn by the last call."""

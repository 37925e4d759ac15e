"""Subprocess helpers for the crash and concurrency tests: each worker is a fresh Python
interpreter (like an xdist worker), started from a small script, synchronised through files.
Every wait is bounded so a broken case fails instead of hanging the suite."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

WAIT_S = 60.0  # upper bound of any wait; reached only when something is broken


def start(script: str, *args, cwd=None, env=None) -> subprocess.Popen:
    """Run ``script`` (dedented Python source) in a fresh interpreter with ``args`` in sys.argv;
    ``env`` adds variables to this process's environment.

    Where a bytecode folder is set (``PYTHONPYCACHEPREFIX``: the suite's own, a temporary folder
    outside the source tree, tests/conftest.py) the worker writes its bytecode there, as the
    suite's other child processes do; with ``PYTHONDONTWRITEBYTECODE`` as well it read that
    folder and never filled it, so every worker compiled the standard library, pytest, numpy
    and this package afresh (1.9 s of CPU for ``import pytest`` and the cache module, 0.45 s
    from a filled folder; the five test files of the fuzz, interrupt, golden race, writer lock
    and cache race tests run alone: 38-46 s of CPU, 27-31 s now, 3 runs each alternating).
    Without one, bytecode stays unwritten (no ``__pycache__`` in the tree from a worker)."""
    env = dict(os.environ, **(env or {}))
    if not env.get("PYTHONPYCACHEPREFIX"):
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), *map(str, args)],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, preexec_fn=_default_sigint)


def _default_sigint() -> None:
    """A child of a shell without job control (a ``cmd &`` job, some CI runners) inherits SIGINT
    as ignored, and Python then never raises KeyboardInterrupt: give the worker the default, as
    an interactive Ctrl-C would find it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def stop(proc: subprocess.Popen) -> None:
    """Kill a worker that is still running (a failed test must not leave it behind)."""
    if proc.poll() is None:
        proc.kill()
        proc.communicate(timeout=WAIT_S)


def wait_for(path: Path, proc: subprocess.Popen = None) -> None:
    """Wait until ``path`` exists (the worker's "I am in the middle of it" signal)."""
    deadline = time.monotonic() + WAIT_S
    while not Path(path).exists():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"worker exited ({proc.returncode}) before {path} appeared:\n"
                                 + proc.stdout.read())
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} did not appear within {WAIT_S:.0f}s")
        time.sleep(0.02)


def finish(proc: subprocess.Popen) -> str:
    """Wait for a worker (bounded) and return its output."""
    out, _ = proc.communicate(timeout=WAIT_S)
    return out


def lock_is_free(lock_file: Path) -> bool:
    """Whether a filelock on ``lock_file`` can be taken right now (no waiting)."""
    from filelock import FileLock, Timeout

    try:
        with FileLock(str(lock_file)).acquire(timeout=0):
            return True
    except Timeout:
        return False


#: prefix for worker scripts: a build callback that signals and then blocks (to be killed)
HANG = """
import os, sys, time
from pathlib import Path
def signal_and_hang(flag):
    Path(flag).write_text(str(os.getpid()))
    time.sleep(600)
"""

"""The files of a dump created ahead of their writes, in a thread of their own.

A run's dump writer knows every file name of its run before the run starts (an emulated run's
names are its plan's ops, task ids and timestamps), and on some file systems creating a file
costs far more than writing a small one: on an ext4 without a journal (this project's
development VM) a deleted inode is not reused for 60-360 s, and every file created scans past
those that recent runs deleted, 0.5-0.9 ms a file after a few checks (see
``benchmarks/bench_check.py``). The writer is the slower side of a run (``graph.streamed_run``),
so ``CreatedAhead`` moves the creates off it: a thread creates the next files (exclusively, as
the writer would) at most ``ahead`` files before the one being written, and the writer takes
each file's descriptor instead of creating it. Creating releases the GIL, so this runs beside
the writer and onnxruntime.

A name the writer asks for before the thread reached it is left to the writer (the thread
skips it), one the thread is creating at that moment is waited for: a file is never created
twice. ``close`` stops the thread and removes every file it created that was not taken: a run
that fails or stops leaves only the files it wrote. An error creating a file stops the thread
there (any error: the thread only saves time); the writer then creates the rest itself and
reports any error as it always did.
"""
from __future__ import annotations

import os
import threading
from typing import Dict, Iterable, Optional, Set

#: files created and not yet written, at most: their descriptors stay open until taken
AHEAD = 32

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


class CreatedAhead:
    """Creates ``names`` in ``directory``, in order, in a background thread; ``take(name)`` is
    the open descriptor of a file it created (the caller owns it from then on), or None for the
    caller to create the file itself."""

    def __init__(self, directory, names: Iterable[str], *, ahead: int = AHEAD):
        self._dir = os.fspath(directory)
        self._names = list(dict.fromkeys(names))
        self._ahead = max(1, int(ahead))
        self._cond = threading.Condition()
        self._fds: Dict[str, int] = {}  # created, not taken
        self._skip: Set[str] = set()  # asked for before they were created: the caller's
        self._creating: Optional[str] = None
        self._stopping = False
        self.created = 0  # files this thread created (taken or not)
        self._thread = threading.Thread(target=self._loop, name="ascend-accuracy-create",
                                        daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        for name in self._names:
            with self._cond:
                while len(self._fds) >= self._ahead and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                if name in self._skip:
                    continue
                self._creating = name
            fd = None
            try:
                fd = os.open(os.path.join(self._dir, name), _FLAGS, 0o666)
            except Exception:  # (OSError, or anything else: this thread only saves time)
                pass  # the writer creates this one and the rest, and reports the error
            finally:  # (whatever stops this thread, a take never waits for it)
                with self._cond:
                    self._creating = None
                    if fd is not None:
                        self._fds[name] = fd
                        self.created += 1
                    else:
                        self._stopping = True
                    self._cond.notify_all()
            if fd is None:
                return

    def take(self, name: str) -> Optional[int]:
        """The descriptor of ``name``, created by the thread (opened for writing, empty), or
        None: the caller creates it (the thread will not)."""
        with self._cond:
            while self._creating == name and self._thread.is_alive():
                self._cond.wait(0.1)
            fd = self._fds.pop(name, None)
            if fd is None:
                self._skip.add(name)
            self._cond.notify_all()
            return fd

    def close(self) -> None:
        """Stop the thread; remove the files it created that were never taken."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join()
        with self._cond:
            left, self._fds = self._fds, {}
        for name, fd in left.items():
            os.close(fd)
            try:
                os.unlink(os.path.join(self._dir, name))
            except FileNotFoundError:
                pass


__all__ = ["AHEAD", "CreatedAhead"]

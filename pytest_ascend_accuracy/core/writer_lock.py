"""A writer's lock on its hidden temp files and folders: "this write still runs" as a lock the
writer's kernel holds, not a process id, so that cleaning up after killed writers never removes
a live one's work.

A writer names its temp entries ``<head><kind>-<token>`` or ``<head><token><suffix>`` (``head``
is ``.<final name>.``; the token ``<pid>-...`` is unique to one write and the same for every
entry of it: a stored golden's ``.tmp-``, ``.new-`` and ``.del-``). Before it creates any of
them it holds an exclusive ``flock`` on ``<head>writer-<token>.lock`` beside them
(``holding``), until the last of them is renamed into place or removed; then it removes the
lock file. A cleaner (``Leftovers``) takes that lock without waiting before it touches an
entry: taken, the writer is gone (killed: the kernel released its lock, however it died; or
done), and the cleaner holds it while it restores or removes the entries, then removes the lock
file; not taken, the writer runs, and its entries are left alone. A lock file a writer has
created but not yet locked may be taken and removed by a cleaner: the writer then finds its
lock file replaced and takes the new one before it creates anything.

Process ids judged nothing across PID namespaces: two CI containers writing into one volume
(a repository, a cache) each saw the other's writer as dead and removed its temp folder
mid-write (its rename then failed), and a container's pid 1 looked alive on the host forever.
The pid in the names is for people only. ``flock`` holds across PID namespaces and containers
of one host (see ``core.cache_lease`` for NFS); where a file system refuses ``flock``
(``ENOLCK``, ``EOPNOTSUPP``) or there is no ``fcntl`` (Windows), the pid decides as before
(``pid_alive``). An entry without a lock file (left by a version before these locks) is a
killed writer's.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set

from .lock_files import BUSY, same_file, unlink_quiet

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: pids decide
    fcntl = None

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: what ``Leftovers.gone`` holds for a writer judged by its pid (no lock possible)
_NO_LOCK = -1
#: ``Leftovers._claim``: a live writer holds the lock
_HELD = -2


def lock_name(head: str, token: str) -> str:
    """``<head>writer-<token>.lock``: the lock file of one write."""
    return f"{head}writer-{token}.lock"


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists in this PID namespace (only where no lock can be
    taken: across namespaces it means nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    return True


@contextlib.contextmanager
def holding(directory, head: str, token: str) -> Iterator[None]:
    """Hold this write's lock in ``directory`` while the block creates, renames and removes the
    entries named with ``token``; the lock file is removed at the end. Where no lock can be
    taken (no ``fcntl``, a file system without ``flock``) the write goes on unlocked."""
    path = Path(directory) / lock_name(head, token)
    fd = _hold(path)
    try:
        yield
    finally:
        if fd is not None:
            unlink_quiet(path)  # still ours: a cleaner removes it only holding its lock
            os.close(fd)


def _hold(path: Path) -> Optional[int]:
    if fcntl is None:  # pragma: no cover
        return None
    for _ in range(100):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | _CLOEXEC, 0o666)
        except OSError:
            return None  # the write itself fails next, saying why
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # a cleaner may hold it a moment: it then removes it
        except OSError:  # a file system refusing flock: the file would only pile up
            os.close(fd)
            unlink_quiet(path)
            return None
        if same_file(fd, path):
            return fd
        os.close(fd)  # a cleaner removed it while we waited: lock the new one
    return None  # pragma: no cover


def _pid_of(token: str) -> Optional[int]:
    pid = token.split("-", 1)[0]
    return int(pid) if pid.isdigit() else None


class Leftovers:
    """Entries in ``directory`` of writers that are gone, each writer's lock held from when it
    is found until ``close`` (``with Leftovers(directory, head) as gone:``): restore or remove
    them inside the block. ``close`` also removes lock files of gone writers that no entry
    names any more (a writer killed before its first entry or after its last)."""

    def __init__(self, directory, head: str):
        self.directory, self.head = Path(directory), head
        self._claimed: Dict[str, int] = {}
        self._alive: Set[str] = set()
        #: the folder's names at the first ``find``: ``close`` looks there for lock files of
        #: gone writers (one a writer creates later is a live writer's), not in a second listing
        self._listed: Optional[List[str]] = None

    def __enter__(self) -> "Leftovers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def find(self, prefix: str, suffix: str = "", *, pid_named: bool = True) -> List[Path]:
        """Entries ``<prefix><token><suffix>`` (``pid_named``: only tokens ``<pid>-...``, so a
        user's own file of a similar name is never taken for one) whose writer is gone."""
        try:
            names = sorted(os.listdir(self.directory))
        except OSError:
            return []
        if self._listed is None:
            self._listed = names
        out = []
        for name in names:
            if (not name.startswith(prefix) or not name.endswith(suffix)
                    or len(name) <= len(prefix) + len(suffix) or self._is_lock(name)):
                continue
            token = name[len(prefix):len(name) - len(suffix)]
            if pid_named and _pid_of(token) is None:
                continue
            path = self.directory / name
            if self.gone(token) and os.path.lexists(path):  # (a finished writer's: gone now)
                out.append(path)
        return out

    def gone(self, token: str) -> bool:
        """Whether the writer of ``token`` is gone; if so its lock is held from now on."""
        if token in self._claimed:
            return True
        if token in self._alive:
            return False
        fd = self._claim(self.directory / lock_name(self.head, token))
        if fd is None:  # no lock possible here: the pid decides, as before these locks
            pid = _pid_of(token)
            fd = _NO_LOCK if pid is None or not pid_alive(pid) else _HELD
        if fd == _HELD:
            self._alive.add(token)
            return False
        self._claimed[token] = fd
        return True

    @staticmethod
    def _claim(path: Path) -> Optional[int]:
        """The lock of ``path`` taken without waiting (created if missing: a writer that comes
        after the cleaner waits for it); ``_HELD`` while a live writer holds it; None where no
        lock can be taken (no ``fcntl``, a file system without ``flock``)."""
        if fcntl is None:  # pragma: no cover
            return None
        for _ in range(8):
            created = not os.path.lexists(path)
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | _CLOEXEC, 0o666)
            except OSError:
                try:  # a read-only folder: its leftovers cannot be removed anyway
                    fd = os.open(path, os.O_RDONLY | _CLOEXEC)
                except OSError:
                    return None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in BUSY:
                    return _HELD
                if created:  # flock refused: the file created here would only pile up
                    unlink_quiet(path)
                return None
            if same_file(fd, path):
                return fd
            os.close(fd)  # its writer finished and removed it: look again
        return _HELD  # pragma: no cover - replaced eight times: writers keep finishing

    def _is_lock(self, name: str) -> bool:
        return name.startswith(f"{self.head}writer-") and name.endswith(".lock")

    def close(self) -> None:
        names = self._listed
        if names is None:
            try:
                names = os.listdir(self.directory)
            except OSError:
                names = []
        lock_head = f"{self.head}writer-"
        for name in names:  # lock files of gone writers that no entry named
            if self._is_lock(name):
                self.gone(name[len(lock_head):-len(".lock")])  # (where no lock: by its pid)
        for token, fd in self._claimed.items():
            unlink_quiet(self.directory / lock_name(self.head, token))
            if fd != _NO_LOCK:  # (where no lock: the pid said gone, nothing is held)
                os.close(fd)
        self._claimed.clear()
        self._alive.clear()
        self._listed = None


__all__ = ["Leftovers", "holding", "lock_name", "pid_alive"]

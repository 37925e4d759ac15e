"""One cross-process lock per file-system path a user keeps in the repository (a stored golden,
an accuracy baseline), so xdist workers and separate pytest runs that read and rewrite the same
one take turns.

The lock files live in a per-user directory in the system temp dir, keyed by the path's
absolute, resolved spelling: every process on this machine agrees on the lock of a path
whatever its cache directory or working directory, and nothing is written next to the user's
files. ``core.cache`` locks its keys the same way (``filelock``), inside the cache.
"""
from __future__ import annotations

import errno
import hashlib
import os
import tempfile
from pathlib import Path

from ..errors import ConfigError

#: how long a process waits for another's hold on the same path (the holder may be computing a
#: large model's golden, as the cache's builders wait)
LOCK_TIMEOUT_S = 3600.0


def default_lock_dir() -> Path:
    """Per-user lock directory in the system temp dir."""
    uid = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"pytest-ascend-accuracy-{uid}-locks"


def _resolved(path: Path) -> Path:
    """``path`` resolved; raises where a symbolic link loop is on it. A plain ``resolve()``
    raised RuntimeError on a loop up to Python 3.12; from 3.13 it gives the loop's own path
    back (only ``strict=True`` still raises, OSError ELOOP), so two spellings of one looping
    path took different locks and the loop was never named."""
    try:
        return path.resolve(strict=True)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise
    return path.resolve()  # not there yet (a file still to write): where it will be


def path_lock(path, kind: str, lock_dir=None):
    """The ``filelock.FileLock`` of one ``kind`` of file at ``path`` (``golden``, ``baseline``)."""
    from filelock import FileLock

    directory = Path(lock_dir) if lock_dir is not None else default_lock_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(str(path), f"cannot create the {kind} lock directory {directory}: "
                                     f"{exc.strerror or exc}") from None
    try:
        resolved = _resolved(Path(path))
    except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError up to Python 3.12)
        raise ConfigError(str(path), f"cannot resolve the {kind}'s path: it is a symbolic link "
                                     f"loop ({exc}); remove the link (or point it at a real "
                                     f"file) and run again") from None
    key = hashlib.sha256(os.fspath(resolved).encode("utf-8", "surrogateescape"))
    return FileLock(str(directory / f"{kind}-{key.hexdigest()[:32]}.lock"))


class PathLocked:
    """``with PathLocked(path, kind):`` holds the path's lock, or fails naming the path and the
    lock file when another process held it for ``timeout`` seconds."""

    def __init__(self, path, kind: str, lock_dir=None, timeout: float = LOCK_TIMEOUT_S):
        self.path, self.kind, self.timeout = Path(path), kind, timeout
        self.lock = path_lock(path, kind, lock_dir)

    def __enter__(self):
        from filelock import Timeout

        try:
            self.lock.acquire(timeout=self.timeout)
        except Timeout:
            raise ConfigError(str(self.path), f"another process has held the {self.kind}'s lock "
                                              f"{self.lock.lock_file} for {self.timeout:.0f}s") from None
        return self

    def __exit__(self, *exc) -> None:
        self.lock.release()


__all__ = ["LOCK_TIMEOUT_S", "PathLocked", "default_lock_dir", "path_lock"]

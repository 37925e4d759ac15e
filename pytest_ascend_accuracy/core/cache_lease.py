"""Leases on cache entries: "a session uses this entry" as a lock its kernel holds, not a pid.

A session that uses an entry holds a shared ``flock`` on the entry's lease file
(``.locks/<namespace>-<key>.lease``, one file per entry, shared by every session) from before
it looks at the entry until it ends (``Cache.release``); the kernel drops it when the process
dies, however it dies. A pruner takes the same file's lock exclusively without waiting: if it
cannot, a session uses the entry; if it can, no session does, and none can take a lease (a
session waits for the shared lock) until the pruner has removed the entry and the lease file.

Process ids judged nothing across PID namespaces (two CI containers sharing a cache volume: a
session in the other one looked dead and its entry was evicted mid-test; pytest as pid 1 of a
container looked alive on the host forever). ``flock`` locks belong to the open file, on the
one kernel that holds them: they hold across PID namespaces and containers of one host on a
local file system (and on a bind-mounted or overlay volume). They do not hold between hosts:
on NFS, Linux emulates ``flock`` with NFS byte-range locks (since 2.6.12), which work between
clients only where the server and clients run lock support (NLM/lockd for NFSv3, built into
NFSv4); a mount with ``nolock`` or ``local_lock=flock``/``all`` keeps them on each client, so
sessions on two machines sharing such a mount do not see each other's leases (nor each other's
build locks, which are ``flock`` as well). Without ``fcntl`` (Windows), or where the file
system refuses ``flock`` (``ENOLCK``, ``EOPNOTSUPP``), no lease is taken, and a prune cannot
tell a used entry from an unused one: it keeps every entry and says why (``REFUSED``).

Bounded file descriptors: one open file per leased entry, up to ``max_fds()`` (a quarter of
the soft ``RLIMIT_NOFILE``, at most 1024). A session that uses more entries at once takes a
shared lock on ``.locks/all.lease`` instead, one more file, which every prune takes exclusively
first: while such a session runs, prunes evict nothing (its entries are not recorded one by
one, so none could be told apart), and its own end (``release``) prunes to the bound.

The lease file records ``pid <n> on <host>`` of the sessions that took it since it was last
free (the first taker empties it), for people only (``ascend-accuracy cache`` names them): a
pid from another PID namespace means nothing here, and a session that overlapped with one
still running stays named after it ended.
"""
from __future__ import annotations

import errno
import os
import socket
import time
from pathlib import Path
from typing import List, Optional

from .lock_files import BUSY, same_file, unlink_quiet

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no shared locks, no leases
    fcntl = None

#: ``.locks/<namespace>-<key>.lease``
SUFFIX = ".lease"
#: the lease of every entry at once, for a session past its file-descriptor budget
ALL = "all.lease"
#: errnos of a file system (or platform) that refuses ``flock`` altogether
REFUSING = (errno.ENOLCK, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP),
            errno.ENOSYS, errno.EINVAL)
#: why a prune keeps an entry where no lock can be taken
REFUSED = ("cannot tell whether a session uses it: this file system refuses file locks "
           "(flock)")
#: a lease file is truncated before a line is added once it holds this many bytes
_RECORD_MAX = 4096


def max_fds() -> int:
    """How many entries' lease files one process keeps open (a quarter of the soft limit on
    open files, 16 to 1024: 256 under the common default of 1024)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft == resource.RLIM_INFINITY:
            soft = 4096
    except (ImportError, OSError, ValueError):  # pragma: no cover
        soft = 1024
    return max(16, min(1024, soft // 4))


def _open(path: Path, create: bool) -> Optional[int]:
    flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0)
    try:
        return os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        if exc.errno == errno.ENOENT and not create:
            return None
    try:  # a read-only cache: a shared lock needs no write access
        return os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None


def take(path: Path, timeout: float) -> Optional[int]:
    """Hold a shared lease on ``path``: its open file, or None where none can be taken (a
    read-only cache nothing can prune, no ``fcntl``). Waits while a pruner holds it (it is
    removing the entry: the caller then finds none and builds it); ``TimeoutError`` after
    ``timeout`` seconds."""
    if fcntl is None:  # pragma: no cover
        return None
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        fd = _open(path, create=True)
        if fd is None:
            return None
        alone = False
        try:
            try:  # no one else holds it: the lines of ended sessions go (then shared)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                alone = True
                _truncate(fd)
            except OSError:
                pass
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in BUSY:
                return None  # a file system without locks: nothing can prune under it either
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path}: held exclusively for {timeout:.0f}s") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.1)
            continue
        # (exclusive to shared is not atomic: a pruner may have removed the file in between)
        if same_file(fd, path):
            _record(fd, alone)
            return fd
        os.close(fd)  # a pruner removed the file while we waited: lease the new one


def _truncate(fd: int) -> None:
    try:
        os.ftruncate(fd, 0)
    except OSError:
        pass


def _record(fd: int, alone: bool) -> None:
    try:
        if not alone and os.fstat(fd).st_size >= _RECORD_MAX:
            os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode())
    except OSError:  # read-only: the lease holds all the same, unnamed
        pass


def release(fd: Optional[int]) -> None:
    if fd is not None:
        try:
            os.close(fd)  # the lock goes with the last descriptor of the open file
        except OSError:
            pass


def try_exclusive(path: Path) -> Optional[int]:
    """The lease file's exclusive lock, taken without waiting (the file is created when
    missing, so a session that comes after waits for it): its open file, or None while any
    session holds a lease. ``OSError`` where the file cannot be opened or locked at all."""
    if fcntl is None:  # pragma: no cover
        raise OSError(errno.ENOLCK, "no fcntl on this platform (Windows)")
    for _ in range(8):
        fd = _open(path, create=True)
        if fd is None:
            raise OSError(errno.EACCES, f"cannot open {path}")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in BUSY:
                return None
            raise
        if same_file(fd, path):
            return fd
        os.close(fd)
    return None  # pragma: no cover - another pruner kept replacing it


def remove_locked(path: Path, fd: int) -> None:
    """Unlink the lease file while holding its exclusive lock, then let go: sessions waiting
    on the old file see it gone and lease a new one."""
    unlink_quiet(path)
    release(fd)


def held(path: Path) -> bool:
    """Whether any session holds a lease on ``path`` now (a probe: nothing is created)."""
    if fcntl is None:  # pragma: no cover
        return False
    fd = _open(path, create=False)
    if fd is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in BUSY
    finally:
        os.close(fd)
    return False


def recorded(path: Path, n: int = 3) -> List[str]:
    """The last ``n`` distinct ``pid <n> on <host>`` lines of a lease file, newest last (who
    took it: for people; some may have ended)."""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    out: List[str] = []
    for line in reversed(lines):
        if line.startswith("pid ") and line not in out:
            out.append(line)
        if len(out) == n:
            break
    return out[::-1]


__all__ = ["ALL", "REFUSED", "REFUSING", "SUFFIX", "held", "max_fds", "recorded", "release",
           "remove_locked", "take", "try_exclusive"]

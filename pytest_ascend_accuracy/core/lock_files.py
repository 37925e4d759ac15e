"""What the cache leases (``cache_lease``) and the writers' locks (``writer_lock``) share about
lock files: which ``flock`` errnos mean another open file holds the lock, whether a locked file
is still the one at its path (the other side unlinks it while holding its lock), and removing a
lock file that may be gone already."""
from __future__ import annotations

import errno
import os
from pathlib import Path

#: errnos of a lock another open file holds
BUSY = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)


def same_file(fd: int, path: Path) -> bool:
    """The file open as ``fd`` is still the one at ``path`` (same inode on the same device):
    false where ``path`` was unlinked, or replaced, after ``fd`` was opened. ``os.stat(fd)``,
    not ``os.fstat``: a test patches ``os.fstat`` process-wide."""
    try:
        st = os.stat(fd)
        now = os.stat(path)
    except OSError:
        return False
    return (st.st_ino, st.st_dev) == (now.st_ino, now.st_dev)


def unlink_quiet(path: Path) -> None:
    """Remove ``path``; one already gone (or not removable) is no error."""
    try:
        os.unlink(path)
    except OSError:
        pass

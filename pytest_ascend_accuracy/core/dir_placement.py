"""Asking the file system to place a directory's subdirectories apart from each other.

A run writes one dump file per operator into a fresh directory, and a passing check deletes
them again. On ext4 mounted without a journal (common in VM sandboxes and CI runners; the
kernel says ``mounted filesystem ... without journal``) a deleted inode is not reused for 60 to
360 s (``recently_deleted`` in fs/ext4/ialloc.c), and every file created walks the block group's
inode bitmap past all of those. A new directory lands in its parent's block group, so each run's
files were created past the inodes that the runs before it deleted: measured here 0.16-0.8 ms
per file after a few passing checks, against 0.025 ms on a fresh group (233 files per
PP-OCRv4 det run: up to 0.19 s of it).

``spread_subdirectories(folder)`` sets the directory's ``FS_TOPDIR_FL`` (``chattr +T``): ext4's
Orlov allocator then treats each new subdirectory as the top of its own hierarchy and puts it in
a block group with more free inodes than average, away from its siblings, so a run's files are
created where no run just deleted any (``benchmarks/bench_check.py`` prints both costs). The
flag is only a placement hint; where the file system or the platform has no such flag
(tmpfs, overlayfs, macOS, Windows) or refuses it, nothing changes and nothing is reported.
"""
from __future__ import annotations

import os
import struct

#: ``FS_IOC_GETFLAGS`` / ``FS_IOC_SETFLAGS`` (linux/fs.h, 64-bit ``_IOR``/``_IOW('f', 1|2, long)``;
#: the kernel reads and writes an int) and ``FS_TOPDIR_FL``
FS_IOC_GETFLAGS = 0x80086601
FS_IOC_SETFLAGS = 0x40086602
FS_TOPDIR_FL = 0x00020000


def spread_subdirectories(folder) -> bool:
    """Set ``FS_TOPDIR_FL`` on ``folder`` (see the module docstring); True when the flag is set
    now, False where the platform or file system has no such flag or refused to set it."""
    return _with_flags(folder, set_topdir=True)


def spreads_subdirectories(folder) -> bool:
    """Whether ``folder`` has ``FS_TOPDIR_FL`` set (False where flags cannot be read)."""
    return _with_flags(folder, set_topdir=False)


def _with_flags(folder, *, set_topdir: bool) -> bool:
    try:
        import fcntl
    except ImportError:  # not a POSIX platform
        return False
    try:
        fd = os.open(os.fspath(folder), os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return False
    try:
        flags = struct.unpack("i", fcntl.ioctl(fd, FS_IOC_GETFLAGS, struct.pack("i", 0)))[0]
        if flags & FS_TOPDIR_FL or not set_topdir:
            return bool(flags & FS_TOPDIR_FL)
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("i", flags | FS_TOPDIR_FL))
        return True
    except OSError:  # ENOTTY / EOPNOTSUPP / EINVAL (no such flags here), EPERM (not the owner)
        return False
    finally:
        os.close(fd)


__all__ = ["spread_subdirectories", "spreads_subdirectories", "FS_TOPDIR_FL"]

"""Writing a file or directory so that no reader ever sees half of it, and cleaning up after
writers that were killed (SIGKILL, power loss) before they could rename their work into place.

Temp names carry the writer's process id (``.{name}.{pid}-{token}.tmp``, for people), and the
writer holds an exclusive lock on ``.{name}.writer-{pid}-{token}.lock`` until its rename
(``core.writer_lock``); a later writer removes the temp files whose lock it takes without
waiting (their writer was killed), and leaves live writers' files alone, in this PID namespace
or another container's.
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import List, Optional

from ..errors import AscendAccuracyError
from . import writer_lock


class FileWriteError(AscendAccuracyError, OSError):
    """A file could not be written: names the file and the problem. Nothing half-written is
    left behind."""

    def __init__(self, path, problem: str, errno: Optional[int] = None):
        self.path = os.fspath(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")
        self.errno = errno  # the failed write's (ENOSPC, EROFS...), as an OSError carries it


class BaselineWriteError(FileWriteError):
    """A baseline (or its stored inputs) could not be written."""


class GoldenWriteError(FileWriteError):
    """A stored golden (``golden_dump(path=...)``) could not be written; the golden in place,
    if any, is left as it was."""


def dead_writer_leftovers(directory: Path, prefix: str, suffix: str = "") -> List[Path]:
    """Remove the hidden ``{prefix}{pid}-{token}{suffix}`` entries in ``directory`` whose writer
    is gone (killed mid-write: its lock, ``core.writer_lock``, is free), with their lock files;
    live writers' entries are left alone. Returns what was removed. ``prefix`` is the head
    the writer's lock is named after (``.{name}.``)."""
    out = []
    with writer_lock.Leftovers(directory, prefix) as gone:
        for stale in gone.find(prefix, suffix):
            try:
                stale.unlink()
            except IsADirectoryError:
                continue
            except FileNotFoundError:
                pass
            out.append(stale)
    return out


def atomic_write_text(path, text: str, *, what: str = "file",
                      error: type = FileWriteError, errors: str = "strict") -> Path:
    """Write ``text`` to ``path`` through a hidden temp file in the same directory, fsynced and
    renamed into place: readers see the old file or the new one, never a part. Temp files of
    writers that were killed before renaming are removed. An ``OSError`` becomes ``error``
    ("cannot write {what}: ..."), naming the path. The one atomic text writer of the package:
    reports (CSV, JSON, HTML), baselines, triage's fix files. UTF-8, newlines as given;
    ``errors``: how text that UTF-8 cannot hold is written (a report passes
    ``backslashreplace``: a model file named from undecodable bytes, ``m\\udcff``, failed a
    passing check with UnicodeEncodeError under --accuracy-report, a review)."""
    return atomic_write_bytes(path, text.encode("utf-8", errors), what=what, error=error)


def atomic_write_bytes(path, data: bytes, *, what: str = "file",
                       error: type = FileWriteError) -> Path:
    """``atomic_write_text`` of bytes written as they are: a user's file copied byte for byte
    (an AIPP file with GBK comments into a diagnosis's fix folder)."""
    path = Path(path)
    head, token = f".{path.name[:180]}.", f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp = path.parent / f"{head}{token}.tmp"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        dead_writer_leftovers(path.parent, head, ".tmp")
        with writer_lock.holding(path.parent, head, token):  # until the rename: not a leftover
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
    except BaseException as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, AscendAccuracyError):
            raise error(path, f"cannot write {what}: {exc.strerror or exc}", exc.errno) from exc
        raise
    return path


__all__ = ["BaselineWriteError", "FileWriteError", "GoldenWriteError", "atomic_write_bytes",
           "atomic_write_text", "dead_writer_leftovers"]

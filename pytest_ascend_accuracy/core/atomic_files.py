"""Writing a file or directory so that no reader ever sees half of it, and cleaning up after
writers that were killed (SIGKILL, power loss) before they could rename their work into place.

Temp names carry the writer's process id (``.{name}.{pid}-{token}.tmp``); a later writer removes
the ones whose process no longer runs, and leaves live writers' files alone.
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import List, Optional

from ..errors import AscendAccuracyError


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


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    return True


def dead_writer_leftovers(directory: Path, prefix: str, suffix: str = "") -> List[Path]:
    """Hidden ``{prefix}{pid}-{token}{suffix}`` entries in ``directory`` whose writing process
    no longer runs (it was killed mid-write); live writers' entries are left alone."""
    out = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return out
    for p in entries:
        name = p.name
        if not name.startswith(prefix) or not name.endswith(suffix):
            continue
        pid = name[len(prefix):len(name) - len(suffix)].split("-", 1)[0]
        if pid.isdigit() and not pid_alive(int(pid)):
            out.append(p)
    return out


def atomic_write_text(path, text: str, *, what: str = "file",
                      error: type = FileWriteError) -> Path:
    """Write ``text`` to ``path`` through a hidden temp file in the same directory, fsynced and
    renamed into place: readers see the old file or the new one, never a part. Temp files of
    writers that were killed before renaming are removed. An ``OSError`` becomes ``error``
    ("cannot write {what}: ..."), naming the path. The one atomic text writer of the package:
    reports (CSV, JSON, HTML), baselines, triage's fix files. UTF-8, newlines as given."""
    return atomic_write_bytes(path, text.encode("utf-8"), what=what, error=error)


def atomic_write_bytes(path, data: bytes, *, what: str = "file",
                       error: type = FileWriteError) -> Path:
    """``atomic_write_text`` of bytes written as they are: a user's file copied byte for byte
    (an AIPP file with GBK comments into a diagnosis's fix folder)."""
    path = Path(path)
    tmp = path.parent / f".{path.name[:180]}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in dead_writer_leftovers(path.parent, f".{path.name[:180]}.", ".tmp"):
            stale.unlink()
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
           "atomic_write_text", "dead_writer_leftovers", "pid_alive"]

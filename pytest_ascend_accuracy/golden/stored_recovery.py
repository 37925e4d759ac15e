"""Recovery of a stored golden after a writer was killed (``golden.stored``'s module doc has the
replace protocol): which leftover next to the golden wins, which are removed, and the note
that reports it. The caller holds the golden's lock."""
from __future__ import annotations

import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from ..errors import DumpFormatError
from . import stored_record as record

_TMP, _NEW, _OLD, _DEL = "tmp", "new", "old", "del"


@dataclass
class Recovery:
    """What ``recover_interrupted`` found and did: ``installed`` names the leftover put in place
    (a complete new golden, or a complete old one when the golden itself was gone), ``removed``
    every leftover deleted, ``discarded`` ({name: why}) the old copies among them that were not
    restored although the golden was gone."""

    path: Path
    installed: Optional[str] = None
    removed: List[str] = field(default_factory=list)
    discarded: Dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.installed or self.removed)

    def note(self) -> str:
        """One line for the session summary (empty when nothing was left over)."""
        parts = []
        if self.installed:
            kind = ("the complete new golden of an interrupted rewrite"
                    if f".{_NEW}-" in self.installed
                    else "the previous golden (the golden itself was missing)")
            parts.append(f"recovered {kind} from {self.installed}")
        others = sorted(n for n in self.removed if n not in self.discarded)
        if others:
            parts.append(f"removed {len(others)} leftover{'s' if len(others) != 1 else ''} of "
                         f"interrupted writes ({', '.join(others)})")
        for name, why in sorted(self.discarded.items()):
            parts.append(f"removed {name} without restoring it ({why})")
        return "; ".join(parts)


def _leftovers(gone, path: Path, kind: str) -> List[Path]:
    """``.<name>.<kind>-<pid>-...`` entries next to ``path`` left by writers that are gone
    (``gone``: a ``core.writer_lock.Leftovers``, which holds their locks): an entry of a live
    writer (one that locks elsewhere: another container's golden lock is in its own /tmp) is
    left alone, whatever its pid says here."""
    return gone.find(f".{path.name}.{kind}-", pid_named=False)


def _written_ns(leftover: Path) -> Tuple[int, str]:
    """Sort key: the nanosecond time in ``.<name>.<kind>-<pid>-<ns>-<id>`` (0 for old names)."""
    parts = leftover.name.rsplit(".", 1)[-1].split("-")
    ns = int(parts[2]) if len(parts) >= 4 and parts[2].isdigit() else 0
    return ns, leftover.name


def _not_restorable(old: Path) -> Optional[str]:
    """Why the old copy ``old`` may not become the golden again (None: it is known complete).
    Only the layout without write times renamed a golden to ``.old-*`` whole and left it there
    alone (killed before the new golden was in place); the layout with them left one alone
    only while deleting it, after a newer golden was in place. A ``golden.json`` it holds must
    list no file it lacks."""
    if _written_ns(old)[0]:
        return ("an older golden a rewrite had replaced, left while it was being deleted: "
                "maybe half deleted, and stale either way")
    try:
        rec = record.read_record(old)
    except DumpFormatError:
        return f"its {record.RECORD_FILE} cannot be read"
    if rec is not None and record.missing_files(rec, old):
        return f"incomplete: files its {record.RECORD_FILE} lists are missing"
    return None


def _recover(path: Path) -> Recovery:
    from ..core import writer_lock

    with writer_lock.Leftovers(path.parent, f".{path.name}.") as gone:  # their locks held
        out = Recovery(path)
        news = sorted(_leftovers(gone, path, _NEW), key=_written_ns)
        olds = sorted(_leftovers(gone, path, _OLD), key=_written_ns)
        doomed = _leftovers(gone, path, _DEL) + _leftovers(gone, path, _TMP)
        if news:
            _install(path, news.pop(), out)
        _settle(path, out, news, olds, doomed)
    return out


def _install(path: Path, winner: Path, out: Recovery) -> None:
    """Put a killed writer's complete new golden in place; the golden there (if any) goes
    aside under a ``.del-`` this process holds the writer lock of until it is removed."""
    from ..core import writer_lock

    token = _token()
    with writer_lock.holding(path.parent, f".{path.name}.", token):
        aside = None
        if os.path.lexists(path):
            aside = path.parent / f".{path.name}.{_DEL}-{token}"
            os.rename(path, aside)
        os.rename(winner, path)
        out.installed = winner.name
        if aside is not None:
            out.removed.append(aside.name)
            _fsync_dir(path.parent)
            _remove(aside)


def _settle(path: Path, out: Recovery, news: List[Path], olds: List[Path],
            doomed: List[Path]) -> None:
    """Restore a known-complete old golden where none is in place and none was installed;
    remove every other leftover found."""
    if out.installed is None and not os.path.lexists(path):
        for old in reversed(olds):  # the newest known-complete one
            why = _not_restorable(old)
            if why is None:
                olds.remove(old)
                os.rename(old, path)
                out.installed = old.name
                break
            out.discarded[old.name] = why
    for stale in news + olds + doomed:
        out.removed.append(stale.name)
        _remove(stale)
    if out:
        _fsync_dir(path.parent)


def _token() -> str:
    return f"{os.getpid()}-{time.time_ns()}-{uuid.uuid4().hex[:8]}"


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        try:
            p.unlink()
        except OSError:
            pass

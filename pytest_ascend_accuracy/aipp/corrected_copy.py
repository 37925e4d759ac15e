"""Where a wrong AIPP file's corrected copy goes: beside the file, where it lasts.

A copy in a temporary or report folder was printed for pasting and then went (pytest keeps
its last three temp dirs; a report folder is emptied when its test runs again), and the pasted
path read "file not found". So the copy is ``<name>.corrected.cfg`` beside the original, which
is never overwritten, nor is an existing copy with other content (a hand edit, another
correction): that one is kept, the copy goes to ``<name>.corrected-2.cfg`` (``-3``, ...) and
the note says so. A correction of a corrected copy joins the same series.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

#: names tried beside the file: ``.corrected``, ``.corrected-2`` ... ``.corrected-{MAX_COPIES}``
MAX_COPIES = 20


@dataclass(frozen=True)
class CorrectedCopy:
    """The copy's path, and a note when it is not the first name or not beside the file."""

    path: str
    note: str = ""


def write_corrected_beside(result, *, fallback_dir=None,
                           show: Callable[[str], str] = os.fspath) -> Optional[CorrectedCopy]:
    """Write ``result``'s (``check.PreprocessingCheck``) corrected AIPP file beside its file;
    None when there is nothing to correct. A folder that cannot be written (a read-only
    checkout) gets the copy in ``fallback_dir`` (a folder, or a function giving one: asked
    only then) instead, with a note (``OSError`` without one). ``show`` spells the paths of
    the note."""
    text = result.corrected_text()
    if text is None:
        return None
    original = Path(result.config.path)
    base = re.sub(r"\.corrected(-\d+)?$", "", original.stem) or original.stem
    suffix = original.suffix or ".cfg"
    kept = None
    for k in range(1, MAX_COPIES + 1):
        path = original.with_name(f"{base}.corrected{'' if k == 1 else f'-{k}'}{suffix}")
        if _same_file(path, original):
            continue
        existing = _read(path)
        if existing == text:
            return CorrectedCopy(str(path), _kept_note(kept, show))
        if existing is None:
            try:
                result.write_corrected(path)
            except OSError as exc:
                return _elsewhere(result, fallback_dir, original, exc, show)
            return CorrectedCopy(str(path), _kept_note(kept, show))
        kept = kept or path
    why = OSError(f"{show(str(kept))} to -{MAX_COPIES} all hold other corrections")
    return _elsewhere(result, fallback_dir, original, why, show)


def _same_file(path: Path, original: Path) -> bool:
    try:
        return path.exists() and os.path.samefile(path, original)
    except OSError:
        return False


def _read(path: Path) -> Optional[str]:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return ""  # there, unreadable: other content, kept


def _kept_note(kept: Optional[Path], show) -> str:
    return f"{show(str(kept))} holds other content and was kept" if kept else ""


def _elsewhere(result, fallback_dir, original: Path, exc: OSError, show) -> CorrectedCopy:
    if fallback_dir is None:
        raise exc
    if callable(fallback_dir):
        fallback_dir = fallback_dir()
    path = Path(fallback_dir) / f"{original.stem}.corrected{original.suffix or '.cfg'}"
    result.write_corrected(path)
    why = getattr(exc, "strerror", None) or str(exc)
    return CorrectedCopy(str(path), f"not written beside {show(str(original))}: {why}")

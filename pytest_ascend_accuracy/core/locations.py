"""Where a file named by a test lives, and the old place it may still be found.

A relative path a test names (``golden_dump(..., path="goldens/mlp")``) is relative to the
directory of the test file that names it, so ``team_a/test_x.py`` and ``team_b/test_x.py`` each
get their own ``goldens/mlp``. Before, such paths were relative to the pytest rootdir: a file
found only there is still read, with a ``MovedFileWarning`` that says where to move it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import ConfigError


class MovedFileWarning(UserWarning):
    """A golden or baseline file was read from its old location; the message says where it
    belongs now and the command that moves it."""


@dataclass(frozen=True)
class Located:
    """A resolved path (the one to read and write). ``belongs`` is set when it was found at its
    old location only: where it should be moved to."""

    path: Path
    belongs: Optional[Path] = None

    def message(self, what: str, rootdir=None, *,
                why: str = "relative paths now resolve against the test file's directory") -> str:
        """The warning text for a file read from its old location (empty when it was not)."""
        if self.belongs is None:
            return ""
        old, new = shown(self.path, rootdir), shown(self.belongs, rootdir)
        return (f"{what} {old} was found at its old location only; it belongs at {new} ({why}). "
                f"It is read and rewritten where it is until you move it: git mv {old} {new}")


def resolve_near_test(path, test_dir, *, legacy_dir=None, what: str = "path") -> Located:
    """``path`` made absolute against ``test_dir``; when nothing is there yet but something is at
    ``legacy_dir / path`` (the old rule), that one is returned, with ``belongs`` set."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ConfigError(what, f"expected a file system path, got {path!r}")
    p = Path(path).expanduser()
    if p.is_absolute():
        return Located(p)
    here = Path(test_dir) / p
    if legacy_dir is not None and not os.path.lexists(here):
        old = Path(legacy_dir) / p
        if old != here and old.exists():
            return Located(old, belongs=here)
    return Located(here)


def shown(path, rootdir=None) -> str:
    """``path`` relative to ``rootdir`` when it is under it, else as is."""
    if rootdir is not None:
        try:
            return Path(path).relative_to(Path(rootdir)).as_posix()
        except ValueError:
            pass
    return os.fspath(path)


__all__ = ["Located", "MovedFileWarning", "resolve_near_test", "shown"]

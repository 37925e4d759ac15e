"""Where a file named by a test lives, and the old place it may still be found.

A relative path a test names (``golden_dump(..., path="goldens/mlp")``) is relative to the
directory of the test file that names it, so ``team_a/test_x.py`` and ``team_b/test_x.py`` each
get their own ``goldens/mlp``. Before, such paths were relative to the pytest rootdir: a file
found only there is still read, with a ``MovedFileWarning`` that says where to move it.
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import ConfigError


#: the cache directory under pytest's rootdir unless ini ascend_accuracy_cache_dir says otherwise
DEFAULT_CACHE_DIR = ".ascend-accuracy"


class MovedFileWarning(UserWarning):
    """A golden or baseline file was read from its old location; the message says where it
    belongs now and the command that moves it."""


@dataclass(frozen=True)
class Located:
    """A resolved path (the one to read and write). ``belongs`` is set when it was found at its
    old location only: where it should be moved to."""

    path: Path
    belongs: Optional[Path] = None

    def message(self, what: str, base=None, *,
                why: str = "relative paths now resolve against the test file's directory") -> str:
        """The warning text for a file read from its old location (empty when it was not), its
        paths and the command that moves it as ``shown`` from ``base`` (where pytest ran). The
        command makes the new parent folder first (``git mv`` into a missing folder fails) and
        uses ``mv``, which works whether or not git tracks the file yet."""
        if self.belongs is None:
            return ""
        old, new = shown(self.path, base), shown(self.belongs, base)
        parent = shown(self.belongs.parent, base)
        if self.path.is_dir() and self.belongs.is_dir():
            # a folder already at the new place (another mode recorded there): mv would put
            # the old folder inside it; its files go in instead, none overwritten
            move = (f"mv -n {shlex.quote(old)}/* {shlex.quote(new)}/ && "
                    f"rmdir {shlex.quote(old)}")
        else:
            move = f"mkdir -p {shlex.quote(parent)} && mv {shlex.quote(old)} {shlex.quote(new)}"
        return (f"{what} {old} was found at its old location only; it belongs at {new} ({why}). "
                f"It is read and rewritten where it is until you move it: {move}")


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


#: a path further up from where pytest ran than this many ``..`` is shown absolute
_MAX_UP = 2


def path_under(root: Path, path) -> Path:
    """``path`` (``~`` expanded) where absolute, else below ``root``: how a setting's folder is
    taken relative to the rootdir or to where pytest ran (the plugin and ``ascend-accuracy
    cache`` alike)."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else Path(root) / p


def shown(path, base=None) -> str:
    """``path`` as a user can paste it in the directory ``base`` (pytest's invocation
    directory): relative to it (``accuracy-baselines/m/default.yaml``, ``../goldens/mlp``),
    or absolute when that would climb more than two levels or cannot be spelled (another
    drive). Without ``base``, as given."""
    if base is None:
        return os.fspath(path)
    try:
        rel = os.path.relpath(os.path.abspath(os.fspath(path)), os.path.abspath(os.fspath(base)))
    except ValueError:
        return os.path.abspath(os.fspath(path))
    if Path(rel).parts[:_MAX_UP + 1].count(os.pardir) > _MAX_UP:
        return os.path.abspath(os.fspath(path))
    return Path(rel).as_posix()


__all__ = ["DEFAULT_CACHE_DIR", "Located", "MovedFileWarning", "resolve_near_test", "shown"]

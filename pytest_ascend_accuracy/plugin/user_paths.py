"""Where a test's model and files are found: a relative path is tried against pytest's rootdir,
then the test file's folder, then the working directory; one not found is an error naming the
places tried and the closest files there."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ..errors import ConfigError


def resolve_model(model, bases: Sequence[Path], where: str = "model"):
    """A path (relative ones tried against each of ``bases`` in turn, then the working
    directory) or an in-memory model (``onnx.ModelProto``/bytes) passed through."""
    if not isinstance(model, (str, os.PathLike)):
        return model
    p = Path(model).expanduser()
    if p.is_absolute():
        candidates = [p]
    else:
        candidates = [Path(b) / p for b in bases] + [Path.cwd() / p]
    for c in candidates:
        if c.is_file():
            return c
    raise ConfigError(where, f"ONNX model {os.fspath(model)!r} not found (looked for "
                             f"{_tried(candidates)}){_closest(candidates, model)}")


def _closest(candidates: Sequence[Path], given) -> str:
    """The nearest files to a misspelled one in the first folder looked at that has any,
    spelled as the test spelled it (``core.closest_paths``)."""
    from ..core.closest_paths import closest_in_folder

    suffix = Path(given).suffix
    for c in candidates:
        near = closest_in_folder(c, False, os.fspath(given), (suffix,) if suffix else None)
        if near:
            return near
    return ""


def _tried(candidates: Sequence[Path]) -> str:
    """The places looked at, relative to where pytest runs (README: printed paths are
    relative; a CI trial found these absolute); where they are one place, the folder it is in
    (pytest run in tests/ of a project without an ini file takes tests/ for its rootdir, and
    "looked for models/m.onnx" said nothing of where that was: H112)."""
    def shown(c: Path) -> str:
        try:
            return os.path.relpath(c)
        except ValueError:  # another drive
            return str(c)

    places = list(dict.fromkeys(shown(c) for c in candidates))
    if len(places) == 1 < len(candidates):
        return (f"{places[0]} in {os.getcwd()}, which is pytest's rootdir, the test file's "
                f"folder and the working directory")
    return ", ".join(places)


def resolve_file(path, bases: Sequence[Path], where: str, what: str) -> Path:
    """A user file (``aipp=``): absolute, or relative to each of ``bases``, then the cwd."""
    p = Path(path).expanduser()
    candidates = [p] if p.is_absolute() else [Path(b) / p for b in bases] + [Path.cwd() / p]
    for c in candidates:
        if c.is_file():
            return c
    raise ConfigError(where, f"{what} {os.fspath(path)!r} not found (looked for "
                             f"{_tried(candidates)}){_closest(candidates, path)}")

"""Finding the dump directory of one run in the real ACL layout (docs/formats.md §1).

ACL writes model dumps to ``{dump_path}/{YYYYMMDDHHMMSS}/{device_id}/{model_name}/{model_id}/{step}/``.
The runtime gives every run its own ``dump_path``, so after the run exactly one leaf (step)
directory of the model must exist there. A ``dump_path`` that already holds dumps before the run
is refused: files of several runs in one tree cannot be told apart reliably (timestamps are per
second, model ids restart per process), and comparing the wrong run is worse than failing.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

from ...errors import BackendError, DumpFormatError


@dataclass(frozen=True)
class DumpLeaf:
    """One ``{timestamp}/{device}/{model}/{model_id}/{step}`` directory."""

    path: Path
    timestamp: str
    device_id: int
    model_name: str
    model_id: int
    step: int

    def describe(self, root: Path) -> str:
        try:
            return os.fspath(self.path.relative_to(root))
        except ValueError:
            return os.fspath(self.path)


def dump_leaves(root: "str | os.PathLike[str]") -> List[DumpLeaf]:
    """Every step directory under ``root`` that holds at least one file, in path order."""
    root = Path(root)
    found: List[DumpLeaf] = []
    for ts in _digit_dirs(root):
        for dev in _digit_dirs(ts):
            for model in sorted(p for p in dev.iterdir() if p.is_dir()):
                for mid in _digit_dirs(model):
                    for step in _digit_dirs(mid):
                        if any(p.is_file() for p in step.iterdir()):
                            found.append(DumpLeaf(step, ts.name, int(dev.name), model.name,
                                                  int(mid.name), int(step.name)))
    return found


def check_empty_dump_path(dump_path: "str | os.PathLike[str]") -> None:
    """Refuse a dump directory that already holds dumps (DumpFormatError naming them)."""
    leaves = dump_leaves(dump_path)
    if leaves:
        root = Path(dump_path)
        runs = ", ".join(leaf.describe(root) for leaf in leaves[:5]) + (" ..." if len(leaves) > 5 else "")
        raise DumpFormatError(dump_path, f"already holds dumps of {len(leaves)} earlier run(s) ({runs}); "
                                         "each run needs its own empty dump directory, so that its "
                                         "files cannot be mixed with another run's")


def find_run_dump(dump_path: "str | os.PathLike[str]", *, model_name: str, device_id: int,
                  hint: Optional[str] = None) -> DumpLeaf:
    """The single leaf this run wrote for ``model_name``; a clear error for none or several."""
    root = Path(dump_path)
    leaves = dump_leaves(root)
    mine = [leaf for leaf in leaves if leaf.model_name == model_name]
    if not mine:
        seen = ", ".join(leaf.describe(root) for leaf in leaves) or "nothing"
        message = (f"no dump of model {model_name!r} was written under {root} (found: {seen}). "
                   f"ACL writes dumps only for model names listed in acl.json's dump_list.")
        if hint:
            message += " " + hint
        raise BackendError(message)
    if len(mine) > 1:
        runs = ", ".join(leaf.describe(root) for leaf in mine)
        raise DumpFormatError(root, f"holds dumps of model {model_name!r} from {len(mine)} runs "
                                    f"({runs}); expected exactly one for this run")
    leaf = mine[0]
    if leaf.device_id != device_id:
        raise DumpFormatError(leaf.path, f"dump was written for device {leaf.device_id}, "
                                         f"but the model ran on device {device_id}")
    return leaf


def _digit_dirs(path: Path) -> List[Path]:
    try:
        return sorted((p for p in path.iterdir() if p.is_dir() and p.name.isdigit()),
                      key=lambda p: (len(p.name), p.name))
    except OSError:
        return []

"""Golden dumps stored in the user's repository (``golden_dump(..., path=...)``) and when they
may be rewritten.

A stored golden is a directory of ``.npy`` files in the ONNX golden naming (the same layout
``msaccucmp`` reads), written through ``dump.npy_dir.NpyDumpWriter`` and read back with
``dump.loader.load_dump``. The policy (``GoldenPolicy``) is the only code that writes one:

* missing            -> written; the caller fails the test naming the file it wrote
                        (with ``--accuracy-regen-all`` the test goes on instead);
* present            -> used as is;
* ``--accuracy-regen``     -> rewritten only after the test failed (the test still fails);
* ``--accuracy-regen-all`` -> rewritten before use (the tests then pass against the new files).

Writes go to a hidden sibling directory that is renamed into place, so an interrupted write
never leaves a half-written golden; the replaced copy is kept as ``.<name>.old-*`` until the
new one is in place and restored if the process died in between.
"""
from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Tuple

from ..errors import ConfigError

#: outcomes of ``GoldenPolicy.obtain``
USED, WRITTEN_MISSING, REWRITTEN_ALL = "used", "written (missing)", "rewritten (--accuracy-regen-all)"
REWRITTEN_FAILED = "rewritten (--accuracy-regen, test failed)"
#: fixed 16-digit timestamps: the same golden always gets the same file names (clean diffs)
GOLDEN_TS0 = 1_000_000_000_000_000


def resolve_golden_path(path, base_dir) -> Path:
    """Absolute path of a stored golden: relative paths are relative to ``base_dir``
    (the pytest rootdir, or the YAML suite's directory)."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ConfigError("golden_dump(path=...)", f"expected a file system path, got {path!r}")
    p = Path(path).expanduser()
    return p if p.is_absolute() else Path(base_dir) / p


def store_golden(path, dump) -> Path:
    """Write ``dump`` (a DumpSet) as an npy golden directory at ``path``, atomically."""
    from ..dump.npy_dir import NpyDumpWriter

    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ConfigError(str(path), "a stored golden is a directory, but a file is in the way")
    path.parent.mkdir(parents=True, exist_ok=True)
    from ..core.atomic_files import dead_writer_leftovers

    for stale in dead_writer_leftovers(path.parent, f".{path.name}.tmp-"):
        shutil.rmtree(stale, ignore_errors=True)  # a writer killed mid-write left it behind
    token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp = path.parent / f".{path.name}.tmp-{token}"
    try:
        with NpyDumpWriter(tmp) as writer:
            for i, op in enumerate(dump.ops):
                writer.write_op(op.name, [t.load() for t in op.inputs],
                                [t.load() for t in op.outputs], timestamp_us=GOLDEN_TS0 + i)
        if path.exists():
            old = path.parent / f".{path.name}.old-{token}"
            os.rename(path, old)
            os.rename(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def recover_interrupted(path) -> bool:
    """If a replace was interrupted between its two renames, put the old golden back."""
    path = Path(path)
    if path.exists():
        return False
    olds = sorted(path.parent.glob(f".{path.name}.old-*"), key=lambda p: p.stat().st_mtime)
    if not olds:
        return False
    os.rename(olds[-1], path)
    return True


def read_golden(path):
    """The stored golden as a DumpSet."""
    from ..dump.loader import load_dump

    return load_dump(Path(path))


@dataclass(frozen=True)
class GoldenPolicy:
    """When stored goldens are written: built from ``--accuracy-regen``/``--accuracy-regen-all``."""

    regen: bool = False
    regen_all: bool = False

    def obtain(self, path, compute: Callable[[], object]) -> Tuple[object, str]:
        """The golden to compare against and what happened (``USED``, ``WRITTEN_MISSING``,
        ``REWRITTEN_ALL``). ``compute()`` makes a fresh golden DumpSet from the model."""
        path = Path(path)
        recover_interrupted(path)
        if not path.exists():
            store_golden(path, compute())
            return read_golden(path), WRITTEN_MISSING
        if self.regen_all:
            store_golden(path, compute())
            return read_golden(path), REWRITTEN_ALL
        return read_golden(path), USED

    def after_failure(self, path, compute: Callable[[], object]) -> Optional[str]:
        """Called when a test that used ``path`` failed: rewrite it under ``--accuracy-regen``."""
        if not self.regen or self.regen_all:
            return None
        store_golden(path, compute())
        return REWRITTEN_FAILED


def missing_message(path, model) -> str:
    """The failure text when a stored golden did not exist yet."""
    return (f"golden file {path} did not exist: wrote it from {model} (onnxruntime fp32).\n"
            f"Check it in and run the test again to compare against it.")

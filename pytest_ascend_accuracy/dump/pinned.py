"""A DumpSet held to the files it was read from: a tensor read after its file was replaced is an
error, never another file's values.

A dump read from files loads each tensor when it is compared, by its path. A stored golden is
checked (its record, its tensors' dtypes and digests) under its lock, and compared after the
lock is released, after the test's conversion and device run: minutes on a device. Another
pytest session rewriting that golden in between (``--accuracy-regen``: a new folder renamed into
place, the same file names holding other bytes) had the test compared against tensors it never
checked: a false failure naming an op and advice for it (H100). ``pinned`` records each file's
identity (device, inode, size, modification time) when the dump is read, and every later read
checks it: the compare's direct read into its buffer (``file_span.FileSpan``) on the file it
opened, a memory map by the file's identity before and after it is made. Holding every file open
instead (a memory map keeps a descriptor) ran a golden of PP-OCRv4 det with its inputs, 1,393
files, out of the usual 1,024 descriptors (H101).
"""
from __future__ import annotations

import dataclasses
import os
from typing import Dict, Optional, Tuple

from ..errors import FileReplacedError
from .file_span import FileSpan, SpanLoader, span_of
from .model import DumpSet, TensorRef

Identity = Tuple[int, int, int, int]

#: what a read of a replaced file says (the error's file is the one replaced)
REPLACED = ("changed on disk since this golden was checked (rewritten or touched while this "
            "test ran: another pytest session's --accuracy-regen or --accuracy-regen-all, a git "
            "checkout or pull, a copy), so its values are not the ones checked; run the test "
            "again to compare against the golden as it is now")


def _identity(st: os.stat_result) -> Identity:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _check(path: str, identity: Identity, st: Optional[os.stat_result] = None) -> None:
    try:
        now = _identity(st if st is not None else os.stat(path))
    except OSError:
        now = None
    if now != identity:
        raise FileReplacedError(path, REPLACED)


@dataclasses.dataclass(frozen=True)
class HeldSpan(FileSpan):
    """A ``FileSpan`` read only from the file it was recorded on."""

    identity: Optional[Identity] = None

    def opened(self, f) -> None:
        _check(self.path, self.identity, os.fstat(f.fileno()))


class _HeldLoader(SpanLoader):
    __slots__ = ("_path", "_identity")

    def __init__(self, load, span, path: str, identity: Identity):
        super().__init__(load, span)
        self._path, self._identity = path, identity

    def __call__(self):
        _check(self._path, self._identity)
        values = self._load()  # (a memory map of the file as it is: checked again after)
        _check(self._path, self._identity)
        return values


def _held(ref: TensorRef, identities: Dict[str, Identity]) -> TensorRef:
    span = span_of(ref.loader)
    path = span.path if span is not None else (ref.source or "").split("#", 1)[0]
    if not path:
        return ref  # (a tensor in memory: nothing to hold)
    if path not in identities:
        identities[path] = _identity(os.stat(path))
    identity = identities[path]
    held_span = None if span is None else \
        HeldSpan(span.path, span.offset, span.dtype, span.count, identity)
    return dataclasses.replace(ref, loader=_HeldLoader(ref.loader, held_span, path, identity))


def pinned(dump: DumpSet) -> DumpSet:
    """``dump`` held to its files as they are now (see the module docstring)."""
    identities: Dict[str, Identity] = {}
    ops = [dataclasses.replace(op, inputs=tuple(_held(t, identities) for t in op.inputs),
                               outputs=tuple(_held(t, identities) for t in op.outputs))
           for op in dump.ops]
    return DumpSet(ops, kind=dump.kind, root=dump.root, model_name=dump.model_name,
                   meta=dict(dump.meta))


__all__ = ["HeldSpan", "REPLACED", "pinned"]

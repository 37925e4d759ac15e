"""A DumpSet whose tensors are the bytes its files hold now, whatever happens to the files later.

A dump read from files loads each tensor when it is compared, by its path. A stored golden is
checked (its record, its tensors' dtypes and digests) under its lock, and compared after the
lock is released, after the test's conversion and device run: minutes on a device. Another
pytest session rewriting that golden in between (``--accuracy-regen``: a new folder renamed into
place, the same file names holding other bytes) had the test compared against tensors it never
checked: a false failure naming an op and advice for it (H100). ``pinned`` memory-maps every
tensor at once (``np.load(mmap_mode="r")`` and the pack's ``np.memmap`` read no values): a
mapping keeps the file's bytes it was made on, renamed or removed after, and values are read
only as the compare reads them, as before. The compare's direct reads into its own buffer by
path (``file_span.FileSpan``) are given up for these tensors: they would open the path again.
"""
from __future__ import annotations

import dataclasses

from .file_span import SpanLoader
from .model import DumpSet, OpRecord, TensorRef


def _held(ref: TensorRef) -> TensorRef:
    values = ref.loader()  # memory-mapped now (a DumpFormatError for a file that cannot be)

    def load():
        return values

    return dataclasses.replace(ref, loader=SpanLoader(load, None))


def pinned(dump: DumpSet) -> DumpSet:
    """``dump`` with every tensor held as its files are now (see the module docstring)."""
    ops = [OpRecord(**{**{f.name: getattr(op, f.name) for f in dataclasses.fields(op)},
                       "inputs": tuple(_held(t) for t in op.inputs),
                       "outputs": tuple(_held(t) for t in op.outputs)})
           for op in dump.ops]
    return DumpSet(ops, kind=dump.kind, root=dump.root, model_name=dump.model_name,
                   meta=dict(dump.meta))


__all__ = ["pinned"]

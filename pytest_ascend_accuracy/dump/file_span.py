"""Where a tensor's values lie in a file, for readers that stream many tensors.

A dump reader knows, from the headers it parses when a dump is listed, the file, byte offset,
dtype and element count of every tensor stored as plain contiguous values (an ``.npy`` file in
C order, an Ascend dump tensor in ND layout that is not bf16). It gives such a tensor's
``TensorRef`` a ``SpanLoader``: called, it loads the tensor as before (a read-only memory map);
its ``span`` says where the bytes are.

The compare engine uses the span to copy the values into a buffer it reuses for every tensor
(one positioned read, no header parsing). Memory-mapping instead costs, per tensor, an mmap,
a page fault per touched page and an munmap with its TLB flush: about as much as the metrics of
a 100k-element tensor. Loaders without a span (device layouts, bf16, Fortran-order ``.npy``,
in-memory tensors) are loaded through ``TensorRef.load()`` as before.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np


@dataclass(frozen=True)
class FileSpan:
    """``count`` values of ``dtype`` stored contiguously from byte ``offset`` of ``path``, which
    are the tensor's logical values in C order."""

    path: str
    offset: int
    dtype: np.dtype
    count: int

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize

    def read_into(self, buffer: np.ndarray) -> Optional[np.ndarray]:
        """Read the values into the start of ``buffer`` (a writable uint8 array of at least
        ``nbytes``); returns them as a flat array viewing ``buffer``, or None when the file
        ends before the last value (the caller then loads the tensor the ordinary way, which
        reports the problem). ``OSError`` propagates."""
        n = self.nbytes
        view = memoryview(buffer)[:n]
        done = 0
        with open(self.path, "rb", buffering=0) as f:  # unbuffered: straight into ``buffer``
            self.opened(f)
            f.seek(self.offset)
            while done < n:  # a read may return less than asked; loop until the end of file
                got = f.readinto(view[done:])
                if not got:
                    return None
                done += got
        return buffer[:n].view(self.dtype)

    def opened(self, f) -> None:
        """Called with the file opened for ``read_into``, before reading (``dump.pinned``
        checks it is the file it recorded)."""


class SpanLoader:
    """A ``TensorRef`` loader: ``loader()`` loads the tensor (``load``); ``span`` is its
    ``FileSpan`` when its stored bytes are its logical values, else None."""

    __slots__ = ("_load", "span")

    def __init__(self, load: Callable[[], np.ndarray], span: Optional[FileSpan]):
        self._load = load
        self.span = span

    def __call__(self) -> np.ndarray:
        return self._load()


def span_of(loader) -> Optional[FileSpan]:
    """The ``FileSpan`` a tensor's loader declares, if any."""
    return getattr(loader, "span", None)


__all__ = ["FileSpan", "SpanLoader", "span_of"]

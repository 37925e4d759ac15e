"""How the compare engine gets a tensor's values into memory.

A tensor whose reader declared a ``FileSpan`` (plain values at a known offset, see
``dump.file_span``) and that is at most ``READ_LIMIT`` bytes is read with one positioned read
into a buffer that this ``TensorReader`` keeps and reuses for every tensor of the same side.
For a small tensor this saves the mmap/munmap system calls and a page fault per touched page
of memory-mapping it (``TensorRef.load()``), and parsing the ``.npy`` header again.

Above ``READ_LIMIT`` the copy costs more than mapping: a read copies every byte out of the page
cache, a memory map shares the page cache's own pages (the kernel maps 16 of them per fault).
Measured here (``np.memmap`` + sum against ``readinto`` + sum, page cache warm): 256 KiB 0.061
against 0.049 ms, 1 MiB 0.154 against 0.199 ms, 4 MiB 0.26 against 0.80 ms, 17 MiB 1.27 against
4.42 ms; on the PP-OCRv4 det check (golden tensors up to 17 MB) the warm compare took 0.19-0.22 s
and 0.37-0.41 s of CPU with everything mapped, against 0.21-0.27 s and 0.40-0.52 s with the
32 MiB limit this had before; bench_compare's ~1 MB tensors measured the same either way.

Every other tensor -- no span (device layouts, bf16, in-memory tensors), larger than the
limit, or a read that comes up short -- goes through ``TensorRef.load()``, so errors carry the
reader's own messages. Memory stays bounded: one buffer per side per thread, each at most
``READ_LIMIT`` bytes, freed with the reader (one per ``compare_dumps`` call).
"""
from __future__ import annotations

import threading

import numpy as np

from ..dump.file_span import span_of
from ..dump.model import TensorRef

#: largest tensor (bytes) read into a reused buffer; larger ones are memory-mapped (module doc)
READ_LIMIT = 512 << 10
_GRAIN = 64 << 10  # buffers grow in 64 KiB steps, so a run of similar sizes reallocates rarely


class TensorReader:
    """Reads tensors for one comparison: ``load(t, side)`` returns the values of ``t`` (flat
    when read into a buffer); the array is valid until the next ``load`` of the same side on
    the same thread."""

    def __init__(self, limit: int = READ_LIMIT):
        self.limit = limit
        self._local = threading.local()

    def _buffer(self, side: int, nbytes: int) -> np.ndarray:
        buffers = self._local.__dict__.setdefault("buffers", {})
        buf = buffers.get(side)
        if buf is None or buf.nbytes < nbytes:
            buffers[side] = None  # free the old one before allocating the larger one
            size = min(-(-nbytes // _GRAIN) * _GRAIN, max(self.limit, nbytes))
            buf = buffers[side] = np.empty(size, np.uint8)
        return buf

    def load(self, t: TensorRef, side: int) -> np.ndarray:
        """The values of ``t``; ``side`` (0 actual, 1 golden) picks the buffer."""
        span = span_of(t.loader)
        if span is not None and span.count == t.size and 0 < span.nbytes <= self.limit:
            try:
                values = span.read_into(self._buffer(side, span.nbytes))
            except OSError:
                values = None  # let the reader's own loader report it
            if values is not None:
                return values
        return np.asarray(t.load())


__all__ = ["READ_LIMIT", "TensorReader"]

"""The NC1HWC0 transpose between a logical NCHW array and its device layout, in compiled loops
where the optional C extension ``_channel_blocks`` was built (``setup.py``), else numpy.

``device_formats.to_device`` and ``to_logical`` call ``to_blocks`` / ``from_blocks`` for every
NC1HWC0 tensor an emulated run writes and a compare reads back. numpy's strided copy takes
~0.4 ns a float16 value (its inner loop runs over one position's 16 channels); the extension
moves 8x8 tiles of 2-byte values (4x4 of 4-byte ones) through SSE2 registers, ~0.07 ns. Over
the 4-D outputs of PP-OCRv4 det 736 (``benchmarks/bench_channel_blocks.py``, one run): float16
to_device 0.093 s against 0.018 s, to_logical 0.083 s against 0.018 s. Both give the same bytes:
values are moved, never converted (tests compare them for every item size).

The extension is used for contiguous arrays of item size 1, 2, 4 or 8, at least ``MIN_VALUES``
values and more than one position (H x W): anything else takes the numpy path. Below that size
numpy's few calls cost less than the extension's setup (2.6 against 3.3 us for a (1, 6, 1, 1)
read back), and with one position numpy reads a device array back as a view of it, no copy.
``ASCEND_ACCURACY_NUMPY_LAYOUT=1`` turns the extension off.
"""
from __future__ import annotations

import threading

import numpy as np

from ..core.compiled_modules import load_once

#: set to "1": never use the compiled loops
NUMPY_LAYOUT_ENV = "ASCEND_ACCURACY_NUMPY_LAYOUT"
#: the ``_channel_blocks.ABI`` this module calls (1 took no c1, 2 had no block_positions)
ABI = 3
_MODULE: list = []  # [module or None], once looked up
#: tensors smaller than this (values) take the numpy path
MIN_VALUES = 4096


def channel_blocks_extension():
    """The compiled module, or None when it was not built here (or is turned off)."""
    return load_once(_MODULE, f"{__package__}._channel_blocks", ABI, NUMPY_LAYOUT_ENV)


def _compiled(*arrays: np.ndarray):
    first = arrays[0]
    if first.size < MIN_VALUES or first.shape[2] * first.shape[3] == 1:
        return None
    module = channel_blocks_extension()
    if module is None:
        return None
    for a in arrays:
        if not a.flags.c_contiguous or a.dtype.itemsize not in (1, 2, 4, 8) or a.dtype.hasobject:
            return None
    return module


def to_blocks(a: np.ndarray, out: np.ndarray, c0: int) -> None:
    """Copy NCHW ``a`` into ``out``, its (N, C1, H, W, C0) device array; the padding channels
    of the last block are left as they are (``out`` comes zeroed where it has padding)."""
    n, c, h, w = a.shape
    module = _compiled(a, out)
    if module is not None and out.dtype == a.dtype:
        module.to_blocks(a, out, n, c, out.shape[1], h * w, c0, a.dtype.itemsize)
    else:
        put_channels(out.transpose(0, 1, 4, 2, 3), a, c0)  # a view (N, C1, C0, H, W)


def put_channels(view: np.ndarray, a: np.ndarray, c0: int) -> None:
    """Copy NCHW ``a`` into ``view``, a (N, C1, C0, H, W) view of a device array, in one strided
    numpy copy per part (the whole C0 groups, then the last partial one): no padded temporary
    and no second pass, where pad + transpose + ascontiguousarray made both."""
    n, c, h, w = a.shape
    full = c // c0
    if full:
        view[:, :full] = a[:, :full * c0].reshape(n, full, c0, h, w)
    if full * c0 < c:
        view[:, full, :c - full * c0] = a[:, full * c0:]


#: device-layout bytes ``DeviceBlocks.write_to`` makes at a time (whole channel blocks, at
#: least one), in a buffer each thread reuses
CHUNK_BYTES = 1 << 20
_BUFFERS = threading.local()


class DeviceBlocks:
    """The (N, C1, H, W, C0) device layout of NCHW ``a``, written to a file a few channel blocks
    at a time (``write_to``) instead of made whole: an emulated run's dump writer made a fresh
    device array per tensor, whose pages the kernel faulted in and zeroed (det 736: 0.04-0.11
    s of the writer's CPU for 55 tensors, against 0.02 s for the same copies into memory in
    cache). ``of`` gives one only where the compiled loops take ``a``."""

    __slots__ = ("a", "c0", "shape", "dtype", "size", "nbytes")

    def __init__(self, a: np.ndarray, c0: int):
        n, c, h, w = a.shape
        self.a, self.c0, self.dtype = a, c0, a.dtype
        self.shape = (n, -(-c // c0), h, w, c0)
        self.size = n * self.shape[1] * h * w * c0
        self.nbytes = self.size * a.dtype.itemsize

    @staticmethod
    def of(a: np.ndarray, c0: int):
        """A ``DeviceBlocks`` of the 4-D ``a``, or None (``to_device`` makes it whole)."""
        return DeviceBlocks(a, c0) if a.ndim == 4 and _compiled(a) is not None else None

    def write_to(self, f) -> None:
        """Write the layout's bytes to the binary file ``f``, zero padding included: whole
        channel blocks, as many as fit ``CHUNK_BYTES``, or, for a block bigger than that (e.g.
        368 x 368 positions of 16 float16 channels, 4.3 MB), runs of one block's positions."""
        a, c0 = self.a, self.c0
        n, c1, h, w, _ = self.shape
        c, hw, size = a.shape[1], h * w, a.dtype.itemsize
        block = hw * c0 * size
        if not block or not n:
            return
        module = _compiled(a)
        if block <= CHUNK_BYTES:
            per = CHUNK_BYTES // block
            buffer = _buffer(min(per, c1) * block)
            for i in range(n):
                for b in range(0, c1, per):
                    k = min(per, c1 - b)
                    lo, hi = b * c0, min(c, (b + k) * c0)
                    out = buffer[:k * block]
                    if hi - lo < k * c0:  # the last block's padding channels: zero
                        out[(k - 1) * block:] = 0
                    module.to_blocks(a[i:i + 1, lo:hi], out, 1, hi - lo, k, hw, c0, size)
                    f.write(out)
            return
        step = max(1, CHUNK_BYTES // (c0 * size))  # positions a chunk holds
        buffer = _buffer(min(step, hw) * c0 * size)
        for i in range(n):
            for b in range(c1):
                lo, hi = b * c0, min(c, (b + 1) * c0)
                for p0 in range(0, hw, step):
                    p1 = min(hw, p0 + step)
                    out = buffer[:(p1 - p0) * c0 * size]
                    if hi - lo < c0:  # padding channels: zero
                        out[:] = 0
                    module.block_positions(a[i, lo:hi], out, hi - lo, hw, c0, p0, p1, size)
                    f.write(out)

    def tobytes(self) -> bytes:
        out = np.zeros(self.shape, self.dtype)
        to_blocks(self.a, out, self.c0)
        return out.tobytes()


def _buffer(nbytes: int) -> np.ndarray:
    """This thread's reused write buffer, at least ``nbytes`` long (uint8; ``write_to`` never
    asks for more than ``CHUNK_BYTES``)."""
    buffer = getattr(_BUFFERS, "buffer", None)
    if buffer is None or buffer.nbytes < nbytes:
        buffer = _BUFFERS.buffer = np.empty(nbytes, np.uint8)
    return buffer


def from_blocks(device: np.ndarray, c: int) -> np.ndarray:
    """The first ``c`` channels of the (N, C1, H, W, C0) ``device`` array as a new contiguous
    NCHW array."""
    n, c1, h, w, c0 = device.shape
    module = _compiled(device)
    if module is not None:
        out = np.empty((n, c, h, w), device.dtype)
        module.from_blocks(device, out, n, c, c1, h * w, c0, device.dtype.itemsize)
        return out
    nchw = device.transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)[:, :c]
    return np.ascontiguousarray(nchw)


__all__ = ["CHUNK_BYTES", "DeviceBlocks", "MIN_VALUES", "NUMPY_LAYOUT_ENV",
           "channel_blocks_extension", "from_blocks", "put_channels", "to_blocks"]

"""Ascend device tensor layouts <-> logical layouts (docs/formats.md §2.4). Pure numpy.

A dump stores a tensor in the layout the NPU used (``shape`` = device shape) and, where GE
knows it, the framework's ``original_shape``. The reader turns device layouts back into the
logical layout and crops the padding the device added; the writer (emulator, tests) does the
opposite so that dumps it produces need the same conversion real ones do.

Supported device formats:

* ``NC1HWC0`` (5HD): (N, C1, H, W, C0) <-> NCHW; channels padded to C1*C0.
* ``NC1HWC0_C04``: NC1HWC0 with C0 = 4 (GE's ``types.h``: "NC1HWC0, C0 =4"; the small-channel
  layout of a first convolution's input), converted as NC1HWC0; msaccucmp 26.2 refuses it
  ("Not supported from NC1HWC0_C04 to NCHW").
* ``FRACTAL_NZ``: (..., C1, No, Ni, C0) <-> (..., n, c); n padded to No*Ni, c to C1*C0.
* ``FRACTAL_Z`` (conv weights): (C1*H*W, N1, Ni, C0) <-> NCHW (needs ``original_shape`` for H, W).

Every other format is returned as stored (its shape is the stored shape). C0 for the writer is 16,
or 32 for 1-byte dtypes (int8/uint8), as the reference notes [L].
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np

from .channel_blocks import from_blocks, put_channels, to_blocks
from .dtypes import element_count

CONVERTIBLE = ("NC1HWC0", "FRACTAL_NZ", "FRACTAL_Z", "NC1HWC0_C04")
#: the 5HD layouts: C0 of NC1HWC0_C04 is always 4
FIVE_HD = ("NC1HWC0", "NC1HWC0_C04")
C04 = 4
#: Device layouts this module recognises but cannot convert; tensors stay in device layout.
UNCONVERTED_DEVICE_FORMATS = ("FRACTAL_Z_C04", "NDC1HWC0", "FRACTAL_Z_3D",
                              "FRACTAL_Z_3D_TRANSPOSE", "C1HWNCoC0", "FRACTAL_ZN_LSTM",
                              "FRACTAL_ZN_RNN", "FRACTAL_Z_G", "FRACTAL_ZZ", "NC1KHKWHWC0",
                              "C1HWNC0", "NHWC1C0", "NC1C0HWPAD", "FRACTAL_Z_WINO", "C1HWC0")

Shape = Tuple[int, ...]


class DeviceFormatError(ValueError):
    """A stored device shape does not fit its format or the original shape."""


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def default_c0(dtype) -> int:
    """C0 the writer uses: 32 for 1-byte types, else 16."""
    return 32 if np.dtype(dtype).itemsize == 1 else 16


def is_convertible(fmt: str) -> bool:
    return fmt in CONVERTIBLE


# --------------------------------------------------------------------------- shapes only
def logical_shape(fmt: str, device_shape: Sequence[int],
                  original_shape: Optional[Sequence[int]] = None, original_format: str = ""
                  ) -> Shape:
    """The shape ``to_logical`` returns, computed from shapes alone (no tensor bytes)."""
    dev = tuple(int(d) for d in device_shape)
    orig = None if original_shape is None else tuple(int(d) for d in original_shape)
    if fmt in FIVE_HD:
        return _nc1hwc0_plan(dev, orig, original_format, fmt)[0]
    if fmt == "FRACTAL_NZ":
        return _nz_plan(dev, orig)[0]
    if fmt == "FRACTAL_Z":
        return _fz_plan(dev, orig)[0]
    return dev


def nc1hwc0_ambiguous(device_shape: Sequence[int], original_shape: Sequence[int]) -> bool:
    """Whether an NC1HWC0 tensor of this original shape fits both an NCHW and an NHWC reading
    (H == W == C, and the like): then only its original format tells them apart."""
    dev, orig = tuple(device_shape), tuple(original_shape or ())
    if len(dev) != 5 or len(orig) != 4:
        return False
    n, c1, h, w, c0 = dev
    return (orig[0] == n and orig[2:] == (h, w) and orig[1] <= c1 * c0
            and orig[:3] == (n, h, w) and orig[3] <= c1 * c0)


def _nc1hwc0_plan(dev: Shape, orig: Optional[Shape], original_format: str = "",
                  fmt: str = "NC1HWC0"):
    """(logical shape, channels kept, 'NCHW'|'NHWC'|'reshape'). An original shape that fits
    both readings is read as ``original_format`` says (the om json's ``origin_format``, as
    msaccucmp takes it, or the dump header's original op format), else as NCHW (ONNX's)."""
    if len(dev) != 5:
        raise DeviceFormatError(f"{fmt} tensor needs a 5-D shape, got {list(dev)}")
    n, c1, h, w, c0 = dev
    if fmt == "NC1HWC0_C04" and c0 != C04:
        raise DeviceFormatError(f"NC1HWC0_C04 tensor needs C0 = 4 (its last dim), got "
                                f"{list(dev)}")
    cfull = c1 * c0
    if not orig:
        return (n, cfull, h, w), cfull, "NCHW"
    if len(orig) == 4:
        nhwc = orig[:3] == (n, h, w) and orig[3] <= cfull
        if original_format == "NHWC" and nhwc:
            return orig, orig[3], "NHWC"
        if orig[0] == n and orig[2:] == (h, w) and orig[1] <= cfull:
            return orig, orig[1], "NCHW"
        if nhwc:
            return orig, orig[3], "NHWC"
    else:  # lower-rank tensors padded to NCHW by GE: (N, C) -> (N, C, 1, 1), (C,) -> (1, C, 1, 1)
        for c in ((orig[1],) if len(orig) >= 2 else ()) + (orig[0],):
            if c <= cfull and n * c * h * w == element_count(orig):
                return orig, c, "reshape"
    raise DeviceFormatError(
        f"{fmt} shape {list(dev)} does not fit original shape {list(orig)}")


def _nz_plan(dev: Shape, orig: Optional[Shape]):
    if len(dev) < 4:
        raise DeviceFormatError(f"FRACTAL_NZ tensor needs at least 4 dims, got {list(dev)}")
    batch = dev[:-4]
    c1, no, ni, c0 = dev[-4:]
    if not orig:
        return batch + (no * ni, c1 * c0), None
    rows, cols = (orig[-2], orig[-1]) if len(orig) >= 2 else (1, orig[0])
    lead = orig[:-2] if len(orig) >= 2 else ()
    if rows > no * ni or cols > c1 * c0 or element_count(lead) != element_count(batch):
        raise DeviceFormatError(
            f"FRACTAL_NZ shape {list(dev)} does not fit original shape {list(orig)}")
    return orig, (rows, cols)


def _fz_plan(dev: Shape, orig: Optional[Shape]):
    if len(dev) != 4:
        raise DeviceFormatError(f"FRACTAL_Z tensor needs a 4-D shape, got {list(dev)}")
    if not orig:  # H and W are not recoverable without the original shape: keep device layout
        return dev, None
    if len(orig) != 4:
        raise DeviceFormatError(
            f"FRACTAL_Z original shape must be 4-D (N, C, H, W), got {list(orig)}")
    c1hw, n1, ni, c0 = dev
    n, c, h, w = orig
    c1 = _ceil(c, c0) if c0 else 0
    if c0 == 0 or c1 * h * w != c1hw or n > n1 * ni:
        raise DeviceFormatError(
            f"FRACTAL_Z shape {list(dev)} does not fit original shape {list(orig)}")
    return orig, (c1, h, w)


# --------------------------------------------------------------------------- device -> logical
def to_logical(device: np.ndarray, fmt: str, original_shape: Optional[Sequence[int]] = None,
               original_format: str = "") -> np.ndarray:
    """Convert an array in device layout (already shaped as the stored ``shape``);
    ``original_format`` decides an NC1HWC0 shape that fits NCHW and NHWC (``_nc1hwc0_plan``)."""
    dev = tuple(device.shape)
    orig = None if original_shape is None else tuple(int(d) for d in original_shape)
    if fmt in FIVE_HD:
        shape, keep, how = _nc1hwc0_plan(dev, orig, original_format, fmt)
        if how == "NHWC":
            n, c1, h, w, c0 = dev
            nchw = device.transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)[:, :keep]
            return np.ascontiguousarray(nchw.transpose(0, 2, 3, 1))
        return from_blocks(device, keep).reshape(shape)
    if fmt == "FRACTAL_NZ":
        shape, crop = _nz_plan(dev, orig)
        c1, no, ni, c0 = dev[-4:]
        b = element_count(dev[:-4])
        nd = device.reshape(b, c1, no, ni, c0).transpose(0, 2, 3, 1, 4).reshape(b, no * ni, c1 * c0)
        if crop is not None:
            nd = nd[:, :crop[0], :crop[1]]
        return np.ascontiguousarray(nd).reshape(shape)
    if fmt == "FRACTAL_Z":
        shape, plan = _fz_plan(dev, orig)
        if plan is None:
            return device
        c1, h, w = plan
        _, n1, ni, c0 = dev
        nchw = device.reshape(c1, h, w, n1 * ni, c0).transpose(3, 0, 4, 1, 2)
        nchw = nchw.reshape(n1 * ni, c1 * c0, h, w)[:shape[0], :shape[1]]
        return np.ascontiguousarray(nchw)
    return device


# --------------------------------------------------------------------------- logical -> device
def device_shape(fmt: str, shape: Sequence[int], dtype, *, c0: Optional[int] = None) -> Shape:
    """The stored (device) shape ``to_device`` gives a ``dtype`` array of logical ``shape``,
    computed from shapes alone: what an om json's ``shape`` says next to ``origin_shape``."""
    dims = tuple(int(d) for d in shape)
    if fmt not in CONVERTIBLE:
        if fmt in UNCONVERTED_DEVICE_FORMATS:
            raise DeviceFormatError(f"writing format {fmt} is not supported")
        return dims
    c0, fmt = (C04, "NC1HWC0") if fmt == "NC1HWC0_C04" else (c0 or default_c0(dtype), fmt)
    if fmt == "NC1HWC0":
        if len(dims) in (1, 2):
            dims = (1,) + dims + (1, 1) if len(dims) == 1 else dims + (1, 1)
        if len(dims) != 4:
            raise DeviceFormatError(f"NC1HWC0 needs an NCHW (or 1-D/2-D) shape, got {list(dims)}")
        n, c, h, w = dims
        return (n, _ceil(c, c0), h, w, c0)
    if fmt == "FRACTAL_NZ":
        if not dims:
            raise DeviceFormatError("FRACTAL_NZ needs at least a 1-D shape")
        if len(dims) == 1:
            dims = (1,) + dims
        return dims[:-2] + (_ceil(dims[-1], c0), _ceil(dims[-2], 16), 16, c0)
    if len(dims) != 4:
        raise DeviceFormatError(f"FRACTAL_Z needs an NCHW weight shape, got {list(dims)}")
    n, c, h, w = dims
    return (_ceil(c, c0) * h * w, _ceil(n, 16), 16, c0)


def _pad_to(array: np.ndarray, axis: int, size: int) -> np.ndarray:
    extra = size - array.shape[axis]
    if extra == 0:
        return array
    pad = [(0, 0)] * array.ndim
    pad[axis] = (0, extra)
    return np.pad(array, pad)


def to_device(array: np.ndarray, fmt: str, *, c0: Optional[int] = None) -> np.ndarray:
    """Lay a logical array out as the device would store it (zero padding)."""
    a = np.asarray(array)
    if fmt not in CONVERTIBLE:
        if fmt in UNCONVERTED_DEVICE_FORMATS:
            raise DeviceFormatError(f"writing format {fmt} is not supported")
        return a
    c0, fmt = (C04, "NC1HWC0") if fmt == "NC1HWC0_C04" else (c0 or default_c0(a.dtype), fmt)
    if fmt == "NC1HWC0":
        if a.ndim == 2:
            a = a.reshape(a.shape[0], a.shape[1], 1, 1)
        elif a.ndim == 1:
            a = a.reshape(1, a.shape[0], 1, 1)
        elif a.ndim != 4:
            raise DeviceFormatError(f"NC1HWC0 needs an NCHW (or 1-D/2-D) array, got {a.shape}")
        n, c, h, w = a.shape
        c1 = _ceil(c, c0)
        out = _alloc((n, c1, h, w, c0), a.dtype, padded=c1 * c0 != c)
        to_blocks(a, out, c0)
        return out
    if fmt == "FRACTAL_NZ":
        if a.ndim == 0:
            raise DeviceFormatError("FRACTAL_NZ needs at least a 1-D array")
        if a.ndim == 1:
            a = a.reshape(1, a.shape[0])
        batch = a.shape[:-2]
        n, c = a.shape[-2:]
        ni = 16
        no, c1 = _ceil(n, ni), _ceil(c, c0)
        a = _pad_to(_pad_to(a.reshape((element_count(batch), n, c)), 1, no * ni), 2, c1 * c0)
        dev = a.reshape(element_count(batch), no, ni, c1, c0).transpose(0, 3, 1, 2, 4)
        return np.ascontiguousarray(dev).reshape(batch + (c1, no, ni, c0))
    # FRACTAL_Z
    if a.ndim != 4:
        raise DeviceFormatError(f"FRACTAL_Z needs an NCHW weight array, got {a.shape}")
    n, c, h, w = a.shape
    ni = 16
    n1, c1 = _ceil(n, ni), _ceil(c, c0)
    out = _alloc((c1, h, w, n1 * ni, c0), a.dtype, padded=c1 * c0 != c or n1 * ni != n)
    put_channels(out.transpose(3, 0, 4, 1, 2)[:n], a, c0)  # a view (N, C1, C0, H, W)
    return out.reshape(c1 * h * w, n1, ni, c0)


def _alloc(shape, dtype, *, padded: bool) -> np.ndarray:
    """The device array to fill: zeroed only when the layout has padding to keep zero."""
    return np.zeros(shape, dtype) if padded else np.empty(shape, dtype)

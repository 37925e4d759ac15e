"""Operands where any value float16 flushes to 0 matters: a ``Log``'s, a divisor.

``compare.fp16_range`` counts a tensor's values that float16 rounds to 0 only where they carry
enough of it that the flushed tensor alone would fail the check: flushing a few 1e-9 entries of
a weight moves nothing. An op that is singular at 0 turns each such value into an Inf whatever
its share: onnx_asr's whisper front-end floors its mel power with ``Clip(min=1e-10)`` before
the ``Log``; 1e-10 is below half of float16's smallest subnormal, so every padded frame's floor
became 0 and the device's Log gave -Inf, where the golden gave -23.03. The hint said "no golden
operand looked at leaves its range" and offered high precision, which pasted failed at the same
op (audit 33). For these operands (``singular_operand``) any value that flushes counts
(``flushed_into_singular``), and the hint names the op and the one that produced the value.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..core.ascend_optypes import finished_types

#: ONNX op type -> its input slots whose 0 gives an Inf (the log's argument, a divisor)
_SINGULAR = {"Log": ("input:0",), "Reciprocal": ("input:0",), "Rsqrt": ("input:0",),
             "Div": ("input:1",)}
_SLOTS = {name: slots for t, slots in _SINGULAR.items()
          for name in (t, *finished_types(t))}


#: ops whose output holds their first input's values (a flushed value passes through them)
_CARRIERS = frozenset(name for t in ("Transpose", "Reshape", "Squeeze", "Unsqueeze", "Identity",
                                     "Flatten", "Expand", "Cast", "Slice", "Pad", "Tile", "Gather")
                      for name in (t, *finished_types(t)))


def carries(op_type: str) -> bool:
    """Whether an op of ``op_type`` hands its first input's values on unchanged: the op making
    a flushed value lies before it, and both stay float32 (a review: ``Log(Transpose(Clip(...,
    1e-10)))`` got ``keep_dtype(['log', 'transpose'])``, which pasted failed at the Log)."""
    return op_type in _CARRIERS


def singular_operand(op_type: str, slot: str) -> bool:
    """Whether ``slot`` of an op of ``op_type`` (ONNX or Ascend spelling) is singular at 0."""
    return slot in _SLOTS.get(op_type, ())


def flushed_into_singular(op_type: str, slot: str, values) -> Optional[float]:
    """The largest |value| of ``values`` (an operand in ``slot`` of an ``op_type`` op) that
    float16 rounds to 0, where that slot is singular at 0; None where it is not, or none does
    (exact zeros, non-finite values and float16 subnormals never count)."""
    if not singular_operand(op_type, slot):
        return None
    return flushed_peak_any(values)


def flushed_peak_any(values) -> Optional[float]:
    """The largest |value| of ``values`` that float16 rounds to 0, whatever its share of the
    tensor; None where none does (exact zeros, non-finite values and float16 subnormals never
    count, nor a tensor of float16 or narrower)."""
    if values is None:
        return None
    values = np.asarray(values)
    if values.dtype.kind != "f" or values.dtype.itemsize <= 2:
        return None
    v = values[np.isfinite(values)]
    with np.errstate(over="ignore"):
        lost = v[(v.astype(np.float16) == 0) & (v != 0)]
    return float(np.max(np.abs(lost))) if lost.size else None


__all__ = ["carries", "flushed_into_singular", "flushed_peak_any", "singular_operand"]

"""A TopK's indices compared within the ties of the device's own values.

ONNX's TopK lists the lower index first among equal values. Two inputs the golden tells apart
in float32 can round to one float16 value on the device, which then lists them the other way:
a trial's 1000-long TopK failed a correct device with "2 of 1000 values differ (int64 values
are compared exactly)", the device's values at those positions tied (0.859375, 0.859375). So
where a TopK's indices (``output:1``) differ, each differing position is looked at within its
run of equal device values (``output:0``) along the sorted axis: indices that are the same set
there only reorder a tie, and are not counted as differing. A run that reaches the end of the
axis may hold other indices of the same value (which of the tied elements made the cut): it is
taken as a tie too. Everything else still differs.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np

from .rows import TensorCompare


def _sorted_axis(values: np.ndarray) -> Optional[int]:
    """The last axis along which ``values`` is monotonic (a TopK's output is sorted along its
    axis), None when there is none of length above 1."""
    for axis in range(values.ndim - 1, -1, -1):
        if values.shape[axis] < 2:
            continue
        step = np.diff(values.astype(np.float64), axis=axis)
        if np.all(step <= 0) or np.all(step >= 0):
            return axis
    return None


def _reordered(values: np.ndarray, actual: np.ndarray, golden: np.ndarray, axis: int) -> int:
    """Differing positions that lie in a run of tied values holding the same indices."""
    v, a, g = (np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis])
               for x in (values, actual, golden))
    width = v.shape[1]
    tied = 0
    for row, col in zip(*np.nonzero(a != g)):
        start, stop = col, col + 1
        while start > 0 and v[row, start - 1] == v[row, col]:
            start -= 1
        while stop < width and v[row, stop] == v[row, col]:
            stop += 1
        if stop - start < 2:
            continue  # no tie there: a real difference
        if stop == width or sorted(a[row, start:stop]) == sorted(g[row, start:stop]):
            tied += 1
    return tied


def within_ties(pair, row: TensorCompare) -> TensorCompare:
    """``row`` (the comparison of ``pair``) with a TopK's tie reorders not counted as unequal;
    any other row as it is."""
    m = row.metrics
    op = pair.actual_op
    if (m is None or not m.unequal or not op.op_type.startswith("TopK")
            or pair.actual.slot != "output:1" or pair.golden is None
            or tuple(pair.actual.shape) != tuple(pair.golden.shape)):
        return row
    values_ref = next((t for t in op.outputs if t.slot == "output:0"), None)
    if values_ref is None or tuple(values_ref.shape) != tuple(pair.actual.shape):
        return row
    shape = tuple(pair.actual.shape)
    values = np.asarray(values_ref.load()).reshape(shape)
    axis = _sorted_axis(values)
    if axis is None:
        return row
    tied = _reordered(values, np.asarray(pair.actual.load()).reshape(shape),
                      np.asarray(pair.golden.load()).reshape(shape), axis)
    if not tied:
        return row
    left = m.unequal - tied
    note = (f"{tied} of the {m.unequal} differing indices only reorder values tied on the device "
            f"(ONNX's TopK lists a tie's lower index first): compared as sets within ties")
    flags = tuple(f for f in row.flags if f != "exact_unequal" or left) + ("ties_reordered",)
    return replace(row, metrics=replace(m, unequal=left, notes=m.notes + (note,)), flags=flags)

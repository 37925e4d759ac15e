"""A TopK's indices compared within the ties of the device's own values.

ONNX's TopK lists the lower index first among equal values. Two inputs the golden tells apart
in float32 can round to one float16 value on the device, which then lists them the other way:
a trial's 1000-long TopK failed a correct device with "2 of 1000 values differ (int64 values
are compared exactly)", the device's values at those positions tied (0.859375, 0.859375). So
where a TopK's indices (``output:1``) differ, each run of equal device values (``output:0``)
holding a difference is looked at: the same indices in another order only reorder a tie, and
are not counted as differing. Only where the list's axis is certain (one axis longer than 1:
a dump holds no attributes; a review found a (2, 1) top-1 judged along the batch) and only
runs that end inside the list (which of several tied elements made the cut cannot be told
from the outputs: a review passed indices of other values, out of range or repeated there).
Anything unreadable leaves the row as compared.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np

from ..errors import DumpFormatError
from .rows import TensorCompare


def _list_axis(shape) -> Optional[int]:
    """The one axis longer than 1 (the list's), None when there is not exactly one."""
    longer = [k for k, n in enumerate(shape) if n > 1]
    return longer[0] if len(longer) == 1 else None


def _reordered(values: np.ndarray, actual: np.ndarray, golden: np.ndarray) -> int:
    """Differing positions of 1-D ``actual``/``golden`` inside runs of equal ``values`` that
    end before the list does and hold the same indices on both sides."""
    width = values.size
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    stops = np.r_[starts[1:], width]
    differ = actual != golden
    tied = 0
    for start, stop in zip(starts, stops):
        count = int(np.count_nonzero(differ[start:stop]))
        if count and stop < width and stop - start > 1 and (
                np.array_equal(np.sort(actual[start:stop]), np.sort(golden[start:stop]))):
            tied += count
    return tied


def within_ties(pair, row: TensorCompare) -> TensorCompare:
    """``row`` (the comparison of ``pair``) with a TopK's tie reorders not counted as unequal;
    any other row as it is."""
    m = row.metrics
    op = pair.actual_op
    if (m is None or not m.unequal or not op.op_type.startswith("TopK")
            or pair.actual.slot != "output:1" or pair.golden is None
            or tuple(pair.actual.shape) != tuple(pair.golden.shape)
            or _list_axis(tuple(pair.actual.shape)) is None):
        return row
    values_ref = next((t for t in op.outputs if t.slot == "output:0"), None)
    if values_ref is None or tuple(values_ref.shape) != tuple(pair.actual.shape):
        return row
    try:
        values, actual, golden = (np.asarray(t.load()).reshape(-1)
                                  for t in (values_ref, pair.actual, pair.golden))
    except (DumpFormatError, OSError, ValueError):
        return row  # the row says what it could read; this pass adds nothing
    tied = _reordered(values, actual, golden)
    if not tied:
        return row
    left = m.unequal - tied
    note = (f"{tied} of the {m.unequal} differing indices only reorder values tied on the device "
            f"(ONNX's TopK lists a tie's lower index first): compared as sets within ties")
    flags = tuple(f for f in row.flags if f != "exact_unequal" or left) + ("ties_reordered",)
    return replace(row, metrics=replace(m, unequal=left, notes=m.notes + (note,)), flags=flags)

"""A TopK's indices compared within the ties of the device's own values.

ONNX's TopK lists the lower index first among equal values. Two inputs the golden tells apart
in float32 can round to one float16 value on the device, which then lists them the other way:
a trial's 1000-long TopK failed a correct device with "2 of 1000 values differ (int64 values
are compared exactly)", the device's values at those positions tied (0.859375, 0.859375). So
where a TopK's indices (``output:1``) differ, each run of equal device values (``output:0``)
holding a difference is looked at: the same indices in another order only reorder a tie, and
are not counted as differing. Only where the list's axis is certain (``_list_axis``: the last,
sorted along it alone; a batch of lists row by row) and only the same indices (which of
several tied elements made the cut at the list's end cannot be told from the outputs: a
review passed indices of other values, out of range or repeated there). Anything unreadable
leaves the row as compared. Where the golden holds the TopK's input, the positions left
differing are judged against it as near ties (``topk_near_ties``: values closer than the
device's own error, the cut included).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np

from ..errors import DumpFormatError
from .rows import TensorCompare
from .topk_near_ties import NearTies, golden_input, golden_values, near_tie_note, near_ties


def _monotonic(values: np.ndarray, axis: int) -> bool:
    step = np.diff(values.astype(np.float64), axis=axis)
    return bool(np.all(step <= 0) or np.all(step >= 0))


def _list_axis(values: np.ndarray) -> Optional[int]:
    """The list's axis: the last (ONNX's default), where it is longer than 1, the values are
    sorted along it and along no other axis longer than 1; None otherwise (a dump holds no
    attributes: a review found a (2, 1) top-1 judged along its batch, and a TopK on axis 0
    judged along the last axis, where its columns happened to be sorted too)."""
    last = values.ndim - 1
    if last < 0 or values.shape[last] < 2 or not _monotonic(values, last):
        return None
    others = [k for k in range(last) if values.shape[k] > 1 and _monotonic(values, k)]
    return None if others else last


def _reordered(values: np.ndarray, actual: np.ndarray, golden: np.ndarray,
               whole_row: bool = False) -> np.ndarray:
    """Differing positions of 1-D ``actual``/``golden`` inside runs of equal ``values`` that
    hold the same indices on both sides (a run that reaches the list's end with other indices
    is which tied element made the cut: not told from the outputs, not forgiven), shorter than
    the row unless ``whole_row`` (a lone row of one value says nothing of the list's axis: a
    review passed a TopK on axis 0 with k=1, whose (1, C) one-hot maxima read as one tied list
    of C; in a batch of rows ``_list_axis`` has told the axis apart), as a bool mask."""
    width = values.size
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    stops = np.r_[starts[1:], width]
    differ = actual != golden
    tied = np.zeros(width, bool)
    for start, stop in zip(starts, stops):
        if differ[start:stop].any() and 1 < stop - start and (
                whole_row or stop - start < width) and (
                np.array_equal(np.sort(actual[start:stop]), np.sort(golden[start:stop]))):
            tied[start:stop] = differ[start:stop]
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
    shape = tuple(pair.actual.shape)
    if values_ref is None or tuple(values_ref.shape) != shape:
        return row
    try:
        values, actual, golden = (np.asarray(t.load()).reshape(shape)
                                  for t in (values_ref, pair.actual, pair.golden))
    except (DumpFormatError, OSError, ValueError):
        return row  # the row says what it could read; this pass adds nothing
    if _list_axis(values) is None:
        return row
    width = shape[-1]
    # a whole-row tie only where the axis is told apart: rows of a batch, no axis of length 1
    # (a review: a TopK on axis 0 or 1 with k=1 gives (1, 2, 3) or (2, 1, 3), whose rows of
    # equal maxima passed wrong indices as ties)
    whole_row = values.size // width > 1 and 1 not in shape
    tied = np.concatenate([_reordered(v, a, g, whole_row=whole_row) for v, a, g in zip(
        values.reshape(-1, width), actual.reshape(-1, width), golden.reshape(-1, width))])
    near = _near_ties(pair, values, actual, golden, tied.reshape(shape), values_ref.dtype)
    count = int(np.count_nonzero(tied))
    close = int(np.count_nonzero(near.forgiven)) if near is not None else 0
    if not count and not close:
        return row
    left = m.unequal - count - close
    notes = ((f"{count} of the {m.unequal} differing indices only reorder values tied on the "
              f"device (ONNX's TopK lists a tie's lower index first): compared as sets within "
              f"ties",) if count else ())
    notes += (near_tie_note(near, m.unequal, left),) if close else ()
    flags = tuple(f for f in row.flags if f != "exact_unequal" or left) + (
        ("ties_reordered",) if count else ()) + (("near_ties",) if close else ())
    return replace(row, metrics=replace(m, unequal=left, notes=m.notes + notes), flags=flags)


def _near_ties(pair, values, actual, golden, tied, dtype) -> Optional[NearTies]:
    """The near ties (``topk_near_ties``) among the positions ``tied`` leaves differing, where
    the golden holds the TopK's input and values; None where it does not."""
    x, golden_vals = golden_input(pair), golden_values(pair)
    if x is None or golden_vals is None:
        return None
    return near_ties(x, golden_vals, values, actual, golden, tied, dtype)

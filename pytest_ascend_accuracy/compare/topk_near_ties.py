"""A TopK's indices judged against the golden's own input: reorders of near ties.

A detector's RPN TopK (T2: torchvision Faster R-CNN, k 150 of 1500 objectness scores) ranks
scores a few 1e-6 apart; the device's scores, computed in float16 upstream, carry errors of
1e-3, so it lists 149 of the golden's 150 proposals in another order (88 positions differ,
its values distinct 141 of 150: not the exact ties ``topk_ties`` forgives). Such a list is what
a TopK of the golden's values gives once each value moves by the device's error, and no
device error. So where the golden holds the TopK's input (``input:0``, the values ranked: a
stored golden of op outputs only is fed it from the model its record names,
``golden.stored_topk_inputs``; a golden without it leaves the row as compared), each differing
position ``j`` of a row
is looked at with ``x`` the golden input, ``a`` the device's index there and ``b`` the
golden's:

* ``t``, the tolerance of two golden values: twice the device values' largest error (each of
  two elements may move by that much: two elements ``d`` apart swap once each moves ``d/2``),
  the error the smaller of two measures of the device's values (``output:0``): against the
  golden's values position by position (both lists sorted) and against the golden input at
  the device's own indices (a device that left out the golden's largest value is off by it
  position by position; one that lists the golden's values at wrong indices, at its own
  indices), or the step of
  the device values' dtype (float16) at their magnitude where that is more (two values one
  step apart swap under half a step of error each; a device reporting the golden's values
  exactly still rounds them);
* ``j`` is a near tie where ``|x[a] - x[b]| <= t``, the device's pick ``a`` lies no more than
  ``t`` above the lowest of its earlier picks (its order is the golden's within ``t``), and an
  ``a`` outside the golden's list lies within ``t`` of the golden's k-th value (a near tie at
  the cut);
* a golden pick the device left out, more than ``t`` above the device's lowest pick (of the
  golden's and the near ties at the cut), is a wrong pick: its golden position stays
  differing.

A row whose device indices are out of range or repeated, whose values are not finite, or whose
golden values output is not the golden input at the golden indices (the list's axis is not
the last) gets nothing forgiven. A device that lists the golden's values with wrong indices
has the golden's values (its error 0): its indices, far from the golden's, still fail.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy as np

from ..errors import DumpFormatError

#: (mantissa bits, smallest normal exponent) of the float dtypes a device's values come in
_FLOAT_BITS = {"float16": (10, -14), "bfloat16": (7, -126), "float32": (23, -126)}


@dataclass
class NearTies:
    """What ``near_ties`` found in a TopK's indices (over all rows of a batch)."""

    forgiven: np.ndarray  # bool, the indices' shape: differing positions that are near ties
    size: int = 0  # indices compared
    same_set: int = 0  # device indices among the golden's of their row
    error: float = 0.0  # the device values' largest error against the golden's
    step_dtype: str = ""  # the device values' dtype, where its step widened a tolerance
    tolerance: float = 0.0  # the widest tolerance a forgiven position used
    at_cut: List[Tuple[int, int, float, float]] = field(default_factory=list)
    #: (device index, golden index, golden value of each) of the first few positions not forgiven
    wrong: List[Tuple[int, int, int, float, float]] = field(default_factory=list)


def _step(magnitude: np.ndarray, dtype: str) -> np.ndarray:
    """The spacing of ``dtype`` at each ``magnitude`` (0 for a dtype not listed)."""
    bits = _FLOAT_BITS.get(dtype)
    if bits is None:
        return np.zeros_like(magnitude)
    mantissa, lowest = bits
    _, exp = np.frexp(magnitude)
    exp = np.where(magnitude > 0, np.maximum(exp - 1, lowest), lowest)
    return np.ldexp(1.0, (exp - mantissa).astype(np.int64))


def golden_input(pair) -> Optional[np.ndarray]:
    """The golden TopK's input ``input:0`` (the values it ranked: its own, else the one fed it by
    the model's edges, ``OpRecord.fed_inputs``), or None where the golden has no such input or
    it cannot be read."""
    op = pair.golden_op
    refs = (*op.inputs, *op.fed_inputs) if op is not None else ()
    ref = next((t for t in refs if t.slot == "input:0"), None)
    if ref is None:
        return None
    try:
        return np.asarray(ref.load())
    except (DumpFormatError, OSError, ValueError):
        return None


def golden_values(pair) -> Optional[np.ndarray]:
    """The golden TopK's values ``output:0``, or None."""
    op = pair.golden_op
    ref = next((t for t in (op.outputs if op is not None else ()) if t.slot == "output:0"), None)
    try:
        return None if ref is None else np.asarray(ref.load())
    except (DumpFormatError, OSError, ValueError):
        return None


def near_ties(x: np.ndarray, golden_vals: np.ndarray, values: np.ndarray, actual: np.ndarray,
              golden: np.ndarray, settled: np.ndarray, dtype: str) -> Optional[NearTies]:
    """The near ties among the differing positions of ``actual``/``golden`` (indices along the
    last axis, ``values`` the device's, ``settled`` those forgiven already), given ``x`` the
    golden TopK's input and ``golden_vals`` its values output; None where the rows cannot be
    read as lists of ``x`` along its last axis."""
    shape = actual.shape
    if (x.ndim != len(shape) or x.shape[:-1] != shape[:-1] or x.shape[-1] < shape[-1]
            or golden_vals.shape != shape):
        return None
    width, n = shape[-1], x.shape[-1]
    rows = zip(x.reshape(-1, n).astype(np.float64), golden_vals.reshape(-1, width),
               values.reshape(-1, width).astype(np.float64), actual.reshape(-1, width),
               golden.reshape(-1, width), settled.reshape(-1, width))
    found = NearTies(np.zeros(actual.size, bool), size=actual.size)
    for r, (xr, gv, vd, ad, ag, done) in enumerate(rows):
        if not (np.all((ag >= 0) & (ag < n)) and np.all((ad >= 0) & (ad < n))):
            return None
        ad, ag = ad.astype(np.int64), ag.astype(np.int64)
        if not np.allclose(xr[ag], gv.astype(np.float64), rtol=1e-6, atol=0):
            return None  # the golden's values are not its input at its indices: another axis
        _row(found, r * width, xr, vd, ad, ag, done, dtype)
    found.forgiven = found.forgiven.reshape(shape)
    return found


def _row(found: NearTies, offset: int, x: np.ndarray, vd: np.ndarray, ad: np.ndarray,
         ag: np.ndarray, done: np.ndarray, dtype: str) -> None:
    """``found`` updated with one row (golden input ``x``, device values ``vd``, device and
    golden indices ``ad``/``ag``, positions ``done`` forgiven already)."""
    found.same_set += int(np.count_nonzero(np.isin(ad, ag)))
    differ = (ad != ag) & ~done
    if not differ.any() or len(np.unique(ad)) != ad.size or not (
            np.all(np.isfinite(x[ad])) and np.all(np.isfinite(x[ag]))
            and np.all(np.isfinite(vd))):
        return  # a repeated index is a wrong pick; NaN or Inf orders nothing
    sign = -1.0 if ag.size > 1 and x[ag[0]] < x[ag[-1]] else 1.0  # smallest first: mirrored
    x, vd = sign * x, sign * vd
    xg, xd = x[ag], x[ad]
    # the device values' error, the smaller of two measures: against the golden's values
    # position by position (both sorted: what the order statistics moved, blind to which
    # element holds a value) and against the golden input at the device's own indices (which
    # a wrong index inflates: a kernel listing the golden's values at other indices)
    error = float(min(np.max(np.abs(vd - xg)), np.max(np.abs(vd - xd))))
    found.error = max(found.error, error)

    def tol(u, v):
        return np.maximum(2 * error, _step(np.maximum(np.abs(u), np.abs(v)), dtype))

    earlier = np.r_[np.inf, np.minimum.accumulate(xd)[:-1]]  # the lowest earlier pick
    kth = xg.min()
    added = ~np.isin(ad, ag)
    ok = differ & (np.abs(xd - xg) <= tol(xd, xg))
    ok &= (xd - earlier <= tol(xd, np.where(np.isfinite(earlier), earlier, xd)))
    ok &= ~added | (kth - xd <= tol(xd, kth))
    # a golden pick the device left out may lie no more than ``t`` above its lowest pick that
    # is no wrong pick itself: a wrong pick below the cut counts once, not with every near tie
    low = min(kth, float(xd[ok & added].min())) if np.any(ok & added) else kth
    ok &= ~(~np.isin(ag, ad) & (xg - low > tol(xg, low)))
    found.forgiven[offset:offset + ad.size] = ok
    if ok.any():
        used = tol(xd[ok], xg[ok])
        found.tolerance = max(found.tolerance, float(used.max()))
        if np.any(used > 2 * error):
            found.step_dtype = dtype
    lost = ag[~np.isin(ag, ad)]  # the golden's picks the device left out, in its order
    for j, b in list(zip(np.flatnonzero(added), lost))[:3 - len(found.at_cut)]:
        if ok[j]:
            found.at_cut.append((int(ad[j]), int(b), sign * float(xd[j]), sign * float(x[b])))
    for j in np.flatnonzero(differ & ~ok)[:3 - len(found.wrong)]:
        found.wrong.append((offset + int(j), int(ad[j]), int(ag[j]), sign * float(xd[j]),
                            sign * float(xg[j])))


def _g(value: float, digits: int = 6) -> str:
    return f"{value:.{digits}g}"


def near_tie_note(found: NearTies, differing: int, left: int) -> str:
    """The row's note: how many of the ``differing`` indices are near ties, and why (``left``:
    how many still differ, near ties and exact ties aside)."""
    count = int(np.count_nonzero(found.forgiven))
    why = (f"{found.step_dtype}'s step at those values, {_g(found.tolerance, 3)}"
           if found.step_dtype else
           f"{_g(found.tolerance, 3)}, twice the largest error {_g(found.error, 3)} of the "
           f"device's values (output:0) against the golden's: each of two elements may move "
           f"by it")
    cut = ""
    if found.at_cut:
        shown = ", ".join(f"index {a} in place of the golden's {b} (golden values {_g(va)}, "
                          f"{_g(vb)})" for a, b, va, vb in found.at_cut)
        cut = f"; at the cut, within it of the golden's last value: {shown}"
    wrong = ""
    if found.wrong and left:
        shown = ", ".join(f"position {j}: index {a}, golden value {_g(va)}, where the golden's "
                          f"{b} holds {_g(vb)}" for j, a, b, va, vb in found.wrong)
        wrong = f"; {left} other{'s are' if left != 1 else ' is'} not ({shown}, ...)"
    return (f"near ties: {found.same_set} of {found.size} indices are the golden's set; "
            f"{count} of the {differing} differing indices reorder elements whose golden values "
            f"(the TopK's input) differ by no more than the device's values can move them "
            f"({why}){cut}: compared as sets within the device's error, not device errors"
            f"{wrong}")

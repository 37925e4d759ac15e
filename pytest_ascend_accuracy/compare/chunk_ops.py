"""Array primitives of the chunk kernel: each a few whole-array numpy passes with no branches
per value, written for float32 chunks that stay in the L2 cache.
"""
from __future__ import annotations

import math

import numpy as np

EPS = float(np.finfo(float).eps)  # msaccucmp ConstManager.FLOAT_EPSILON
BLOCK = 4096  # values per row in ``blocked_sum``
_ABS_MASK = np.uint32(0x7FFFFFFF)
#: bit pattern just above float32(eps) (2**-52 is exact in float32)
_ABOVE_EPS = np.uint32(int(np.array([EPS], np.float32).view(np.uint32)[0]) + 1)
INF_GAP = 0x7F800000 - int(_ABOVE_EPS)  # +inf's pattern minus _ABOVE_EPS


def abs_or_inf(v: np.ndarray, out: np.ndarray, inf_gap: np.ndarray) -> None:
    """out = |v|, except +inf where |v| <= eps, for finite float32 ``v``: a relative-error
    term divided by it is then exactly 0 (msaccucmp's rule for |y| <= eps). Four branch-free
    integer passes on the bit patterns: p = |v|'s pattern - (eps's + 1) wraps around to a huge
    unsigned value exactly when |v| <= eps; min(p, inf - (eps + 1)) + (eps + 1) is then inf's
    pattern, and |v|'s own pattern otherwise. ``inf_gap`` holds inf - (eps + 1) (numpy's
    minimum against an array is vectorised, against a scalar it is not)."""
    bits = out.view(np.uint32)
    np.bitwise_and(v.view(np.uint32), _ABS_MASK, out=bits)
    np.subtract(bits, _ABOVE_EPS, out=bits)
    np.minimum(bits, inf_gap, out=bits)
    np.add(bits, _ABOVE_EPS, out=bits)


def blocked_sum(v: np.ndarray, ones: np.ndarray) -> float:
    """Σv of a contiguous float32 vector (``ones``: at least ``BLOCK`` ones). Rows of
    ``BLOCK`` values are summed by one BLAS matrix-vector product and the row sums added
    exactly: as fast as one ``dot(v, ones)``, whose float32 accumulators drift by up to ~7e-6
    relative on 64k float16-quantised values (seen on KL's Σu), while rows keep ~1e-8."""
    m = v.shape[0]
    full = m - m % BLOCK
    total = 0.0
    if full:
        total = math.fsum(np.dot(v[:full].reshape(-1, BLOCK), ones[:BLOCK]).tolist())
    if full < m:
        total += float(np.dot(v[full:], ones[:m - full]))
    return total


def chunk_m2(v, svv: float, sv: float, m: int, tmp) -> float:
    """Σ(v - mean)² of a chunk: from the sums already taken when the mean is within ~3 standard
    deviations of zero (the float32 dots' ~1e-7 relative error then costs at most ~1e-6 of the
    result), otherwise exactly by subtracting the mean first."""
    naive = svv - sv * sv / m
    if naive >= 0.1 * svv:
        return naive
    np.subtract(v, np.float32(sv / m), out=tmp)
    return float(np.dot(tmp, tmp))


def shift_clamp(v, lo, hi, out, floor) -> None:
    """out = max(v - lo, floor) when hi > lo, else max(v, floor) (msaccucmp's range-0 case)."""
    if hi - lo != 0:
        np.subtract(v, v.dtype.type(lo), out=out)
        np.maximum(out, floor, out=out)
    else:
        np.maximum(v, floor, out=out)

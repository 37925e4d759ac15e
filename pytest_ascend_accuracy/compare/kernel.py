"""Chunk kernels behind the streamed metrics: partial sums over one tensor pair, chunk by chunk.

A cheap pre-pass takes each side's min/max (integer reductions for float16). When both sides
are float16/float32 and all finite -- the usual case -- one pass over the chunks then
accumulates everything, the KL divergence included (it needs the min/max first). Otherwise
(NaN/Inf present, other dtypes) pass one works chunk by chunk as below and, when KL is wanted,
a second pass over the same chunks in float64 adds it.

Fast path: a chunk whose two sides are float16/float32 and all finite is computed in float32
with BLAS dots and numpy reductions over an L2-sized buffer, and every partial result is added
into float64 accumulators, so errors stay at chunk scale (~1e-7 relative) rather than growing
with the tensor. Slow path: a chunk with a non-finite value, another dtype, or a float32
overflow is done exactly in float64 with explicit NaN/Inf masks, after leaving out the positions
a ``drop`` rule names (``PairAccumulator(drop=...)``: the mask stand-in, ``mask_stand_in``): such
a position always lands there, as its golden ±float32 max overflows the fast path's float32
squares (or is float64), so the rule costs the fast path nothing.

What keeps the fast path at about 30 array passes per chunk (each a numpy call on 64k values,
so both the passes and the calls count): float16 is widened with integer operations
(``fp16``); sums go through BLAS in 4096-value rows (``chunk_ops.blocked_sum``: one long float32 dot drifts on
float16-quantised data); for close sides Σxy comes from Σx², Σy² and Σ(x-y)²; the
relative-error divisor |y| (+inf where |y| <= eps) comes from y's bit patterns; both maxima
come from one reduction over two rows; the sums of x and y come from KL's shifted sums, and
Σv from Σ(kv - u). Constant operands of ``maximum``/``minimum`` are chunk-long arrays (against
a scalar numpy runs them unvectorised, 5x slower).
"""
from __future__ import annotations

import math
import threading

import numpy as np

from .chunk_ops import EPS, INF_GAP, abs_or_inf, blocked_sum, chunk_m2, shift_clamp
from .fp16 import NONFINITE_LIMIT, f16_min_max, widen_f16

F32_EPS = float(np.finfo(np.float32).eps)  # msaccucmp's KL clamp
DEFAULT_CHUNK = 1 << 16
_FAST = (np.dtype(np.float16), np.dtype(np.float32))


def _min_max(v: np.ndarray):
    """(min, max) of a whole float16/float32 array, or None if it holds NaN/Inf."""
    if v.dtype == np.float16:
        return f16_min_max(v)
    lo, hi = float(v.min()), float(v.max())
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) else None


class Moments:
    """Running count/mean/M2 merged chunk by chunk (Chan et al.), in float64."""

    __slots__ = ("n", "mean", "m2")

    def __init__(self):
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def merge(self, n: int, mean: float, m2: float) -> None:
        if n == 0:
            return
        total = self.n + n
        delta = mean - self.mean
        self.mean += delta * n / total
        self.m2 += m2 + delta * delta * self.n * n / total
        self.n = total

    @property
    def std(self) -> float:
        return math.sqrt(self.m2 / self.n) if self.n else float("nan")


class ScratchBuffers:
    """Chunk-sized scratch buffers, reused across tensor pairs (one set per thread and chunk
    size): allocating fresh buffers per tensor costs page faults that rival the arithmetic."""

    _local = threading.local()

    def __init__(self, chunk_size: int):
        self.ones = np.ones(chunk_size, np.float32)
        self.inf_gap = np.full(chunk_size, INF_GAP, np.uint32)
        # d (|x - y|, then u) and t (relative error, then v) are the rows of one array, so
        # both maxima come from one reduction
        self.dt = np.empty((2, chunk_size), np.float32)
        self.d, self.t = self.dt
        self.a, self.g, self.w, self.cx, self.cy = (
            np.empty(chunk_size, np.float32) for _ in range(5))

    @classmethod
    def get(cls, chunk_size: int) -> "ScratchBuffers":
        cache = cls._local.__dict__.setdefault("by_size", {})
        ws = cache.get(chunk_size)
        if ws is None:
            ws = cache[chunk_size] = ScratchBuffers(chunk_size)
        return ws


#: a chunk's float32 sum of squares below this holds values under ~1e-16, whose squares lose
#: digits to float32's subnormals or vanish: that chunk is summed in float64 instead
TINY_SQUARES = 1e-30


class PairAccumulator:
    """Partial sums of one tensor pair: ``prepare`` once, ``update`` per chunk pair, then (if
    ``needs_second_pass``) ``start_kl`` and ``update_kl`` per chunk pair again."""

    def __init__(self, chunk_size: int = DEFAULT_CHUNK, kl: bool = True, drop=None):
        ws = ScratchBuffers.get(chunk_size)
        self._ws = ws
        self.kl_wanted = kl
        #: ``drop(x, y)`` of a float64 chunk pair: the positions left out of every sum and count
        #: (the slow path's chunks only; see the module's docstring)
        self._drop = drop
        self.dropped = 0  # positions left out, and the actual side's infinities among them
        self.dropped_posinf = self.dropped_neginf = 0
        self.size = 0  # positions seen
        self.finite = 0  # positions finite on both sides (compared as numbers)
        self.sxx = self.syy = self.sxy = self.sdd = 0.0
        self.max_abs = self.sum_abs = self.max_rel = self.sum_rel = 0.0
        self.xmin = self.ymin = math.inf
        self.xmax = self.ymax = -math.inf
        self.mx, self.my = Moments(), Moments()
        self.nan = [0, 0]
        self.posinf = [0, 0]
        self.neginf = [0, 0]
        self.matched_inf = 0
        self.matched_nan = 0
        self.mismatch = 0
        self.kl_su = self.kl_sv = self.kl_e = 0.0
        self._known = False  # min/max known and every value finite (from the pre-pass)
        self._fused = False  # KL accumulated in pass one

    @property
    def nonfinite(self) -> bool:
        return bool(sum(self.nan) or sum(self.posinf) or sum(self.neginf))

    @property
    def needs_second_pass(self) -> bool:
        return self.kl_wanted and not self._fused and self.finite > 0

    # -- pre-pass -------------------------------------------------------------------------
    def prepare(self, x: np.ndarray, y: np.ndarray) -> None:
        """Whole-array min/max of both sides (cheap reductions); when both are finite float16
        or float32, pass one can skip its per-chunk checks and fold the KL terms in."""
        if x.dtype not in _FAST or y.dtype not in _FAST or x.size == 0:
            return
        mx = _min_max(x)
        my = _min_max(y) if mx is not None else None
        if mx is None or my is None:
            return
        (self.xmin, self.xmax), (self.ymin, self.ymax) = mx, my
        self._known = True
        if self.kl_wanted:
            self._set_kl_params(1.0, x.size)
            self._k_final = False  # the first chunk's sums give the guess k (see below)
            self._fused = True

    # -- pass one -------------------------------------------------------------------------
    def update(self, xa: np.ndarray, xg: np.ndarray) -> None:
        """Add one chunk pair (equal length, flat, contiguous)."""
        m = len(xa)
        if m == 0:
            return
        if not (xa.dtype in _FAST and xg.dtype in _FAST and self._fast(xa, xg, m)):
            self._slow(xa, xg)
        self.size += m

    def _fast(self, xa, xg, m) -> bool:
        ws = self._ws
        a = xa if xa.dtype == np.float32 else widen_f16(xa, ws.a[:m])
        g = xg  # float32, or float16 widened below
        if xg.dtype == np.float16:
            g = widen_f16(xg, ws.g[:m])  # not ws.w: the KL terms overwrite that
        if not self._known:
            xmin, xmax = float(a.min()), float(a.max())
            ymin, ymax = float(g.min()), float(g.max())
            if xa.dtype == np.float16 and (xmax >= NONFINITE_LIMIT or xmin <= -NONFINITE_LIMIT):
                return False
            if xg.dtype == np.float16 and (ymax >= NONFINITE_LIMIT or ymin <= -NONFINITE_LIMIT):
                return False
        sxx, syy = float(np.dot(a, a)), float(np.dot(g, g))
        if not (math.isfinite(sxx) and math.isfinite(syy)):
            return False  # a NaN/Inf in a float32 side, or float32 overflow: redo in float64
        if (sxx < TINY_SQUARES and a.any()) or (syy < TINY_SQUARES and g.any()):
            return False  # values so small their float32 squares lose digits or vanish (1e-25)
        d, t = ws.d[:m], ws.t[:m]
        np.subtract(a, g, out=d)
        sdd = float(np.dot(d, d))
        if sdd <= min(sxx, syy):
            # close sides (|x - y| <= min(|x|, |y|), so within a factor 2): Σxy from the
            # identity 2Σxy = Σx² + Σy² - Σ(x-y)². The float32 errors of Σx² and Σy² then cancel
            # in the cosine to first order (what is left is Σ(x-y)²'s error, relative to Σx²),
            # where a dot of its own adds its error in full: 1e-7 instead of 1.4e-6 on 70k
            # float16-quantised values, and one pass fewer
            sxy = 0.5 * (sxx + syy - sdd)
        else:  # far apart or of different scales: the identity would cancel badly
            sxy = float(np.dot(a, g))
        np.abs(d, out=d)
        abs_or_inf(g, t, ws.inf_gap[:m])  # |y| <= eps contributes 0, as in msaccucmp
        np.divide(d, t, out=t)
        max_abs, max_rel = (float(v) for v in ws.dt[:, :m].max(axis=1))
        sum_abs, sum_rel = blocked_sum(d, ws.ones), blocked_sum(t, ws.ones)
        if not (math.isfinite(sdd) and math.isfinite(sum_abs) and math.isfinite(sum_rel)):
            return False
        if self._fused:
            # Σu = Σ(x - xmin) up to the clamp (<= eps32*range per value at the minimum), so
            # the sums of x and y come from the KL sums instead of two more passes
            sums = self._kl_fast(a, g, m)
            if sums is None:
                return False
            su, sv = sums
            sx = su + m * self.xmin if self.xmax > self.xmin else m * self.xmin
            sy = sv + m * self.ymin if self.ymax > self.ymin else m * self.ymin
        else:
            sx, sy = blocked_sum(a, ws.ones), blocked_sum(g, ws.ones)
        m2x = chunk_m2(a, sxx, sx, m, t)
        m2y = chunk_m2(g, syy, sy, m, t)
        # commit
        self.finite += m
        self.sxx += sxx
        self.syy += syy
        self.sxy += sxy
        self.sdd += sdd
        self.max_abs = max(self.max_abs, max_abs)
        self.sum_abs += sum_abs
        self.max_rel = max(self.max_rel, max_rel)
        self.sum_rel += sum_rel
        if not self._known:
            self.xmin, self.xmax = min(self.xmin, xmin), max(self.xmax, xmax)
            self.ymin, self.ymax = min(self.ymin, ymin), max(self.ymax, ymax)
        self.mx.merge(m, sx / m, m2x)
        self.my.merge(m, sy / m, m2y)
        return True

    def _count_nonfinite(self, v: np.ndarray, side: int) -> np.ndarray:
        finite = np.isfinite(v)
        if not finite.all():
            self.nan[side] += int(np.isnan(v).sum())
            self.posinf[side] += int(np.isposinf(v).sum())
            self.neginf[side] += int(np.isneginf(v).sum())
        return finite

    def _kept(self, x: np.ndarray, y: np.ndarray, count: bool):
        """``x`` and ``y`` without the positions ``drop`` names (counted in pass one)."""
        gone = self._drop(x, y)
        if not gone.any():
            return x, y
        if count:
            at = x[gone]
            self.dropped += len(at)
            self.dropped_posinf += int(np.isposinf(at).sum())
            self.dropped_neginf += int(np.isneginf(at).sum())
        keep = ~gone
        return x[keep], y[keep]

    def _slow(self, xa, xg) -> None:
        x = np.asarray(xa, dtype=np.float64)
        y = np.asarray(xg, dtype=np.float64)
        if self._drop is not None:
            x, y = self._kept(x, y, count=True)
        fx = self._count_nonfinite(x, 0)
        fy = self._count_nonfinite(y, 1)
        both = fx & fy
        if not both.all():
            # equal where both sides hold the same infinity (an attention mask's Where) or NaN
            # (its Softmax over a row masked out whole): docs/design.md, only one side fails
            n_same = int((np.isinf(x) & (x == y)).sum())
            n_nan = int((np.isnan(x) & np.isnan(y)).sum())
            self.matched_inf += n_same
            self.matched_nan += n_nan
            self.mismatch += int((~both).sum()) - n_same - n_nan
            x, y = x[both], y[both]
        m = len(x)
        if m == 0:
            return
        d = x - y
        ad = np.abs(d)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(np.abs(y) > EPS, np.abs(x / y - 1), 0.0)  # msaccucmp's exact form
        self.finite += m
        self.sxx += float(np.dot(x, x))
        self.syy += float(np.dot(y, y))
        self.sxy += float(np.dot(x, y))
        self.sdd += float(np.dot(d, d))
        self.max_abs = max(self.max_abs, float(ad.max()))
        self.sum_abs += float(ad.sum())
        self.max_rel = max(self.max_rel, float(rel.max()))
        self.sum_rel += float(rel.sum())
        if not self._known:
            self.xmin, self.xmax = min(self.xmin, float(x.min())), max(self.xmax, float(x.max()))
            self.ymin, self.ymax = min(self.ymin, float(y.min())), max(self.ymax, float(y.max()))
        mean_x, mean_y = float(x.mean()), float(y.mean())
        self.mx.merge(m, mean_x, float(np.dot(x - mean_x, x - mean_x)))
        self.my.merge(m, mean_y, float(np.dot(y - mean_y, y - mean_y)))
        if self._fused:
            self._kl_exact(x, y)

    # -- KL ---------------------------------------------------------------------------------
    # msaccucmp: p = max((x - xmin)/rx, eps32) / Σ, q likewise, KL = Σ p ln(p/q). With
    # u = max(x - xmin, eps32*rx) (p up to the factor rx, which normalising removes), p = u/Su
    # and q = v/Sv. Summing p ln(p/q) directly subtracts two nearly equal terms (T/Su and
    # ln(Su/Sv)), so instead, for any guess k of Su/Sv, sum the non-negative terms
    # e = u ln(u/(k v)) - u + k v; then exactly
    #     KL = Σe/Su + ln(r) + 1 - r,   r = k Sv/Su,
        # where the correction only cancels terms of second order in the guess's error, so float32
    # chunk sums are enough and the guess can be rough: the first chunk's Σu/Σv in the fused
    # pass, pass one's sums before a second pass. (A guess far off, such as 1 for a constant
    # tensor whose v are all 1e4 times the u, leaves Σe/Su and 1 - r huge and cancelling: the
    # float32 sums' error then shows in the 4th decimal.) Σv itself is not summed: it is
    # (Σ(kv - u) + Σu) / k, from sums taken anyway.
    # Remaining fast-path error: float32 rounding of ratios near 1 is slightly biased, ~2e-8
    # absolute on KL, far below the 6 decimals msaccucmp reports.

    def _set_kl_params(self, k: float, n: int) -> None:
        rx, ry = self.xmax - self.xmin, self.ymax - self.ymin
        self._clamp_x = F32_EPS * (rx or 1.0)
        self._clamp_y = F32_EPS * (ry or 1.0)
        # numpy's maximum against a scalar is not vectorised; against an array it is
        self._ws.cx[:n].fill(self._clamp_x)
        self._ws.cy[:n].fill(self._clamp_y)
        self._set_k(k)
        self._k_final = True

    def _set_k(self, k: float) -> None:
        self._k = k if k > 0 and math.isfinite(k) else 1.0
        if abs(self._k - 1.0) < 1e-2:
            self._k = 1.0  # close enough: the result is exact for any k (see above)
        self._k32 = np.float32(self._k)
        if not (self._k32 > 0 and np.isfinite(self._k32)):  # k under/overflows float32:
            self._k32 = np.float32(1.0)  # any k gives the exact result, so fall back to 1
        self._k = float(self._k32)  # the k the chunk terms use, exactly

    def _kl_fast(self, a, g, m):
        """Add one chunk's KL terms; returns the chunk's Σu and Σv, or None (nothing added)
        when float32 cannot hold them."""
        ws = self._ws
        u, v, w = ws.d[:m], ws.t[:m], ws.w[:m]
        shift_clamp(a, self.xmin, self.xmax, u, ws.cx[:m])
        shift_clamp(g, self.ymin, self.ymax, v, ws.cy[:m])
        su = blocked_sum(u, ws.ones)
        first = not self._k_final
        if first:  # first chunk: k = its Σu/Σv, kept for the whole tensor
            sv = blocked_sum(v, ws.ones)
            self._set_k(su / sv if su > 0 and sv > 0 else 1.0)
            self._k_final = True
        if self._k != 1.0:
            np.multiply(v, self._k32, out=v)  # k v
        np.divide(u, v, out=w)
        np.log(w, out=w)
        e = float(np.dot(u, w))
        np.subtract(v, u, out=v)
        s_diff = blocked_sum(v, ws.ones)  # Σ(kv - u): small terms
        if not (math.isfinite(e) and math.isfinite(s_diff)):
            # e.g. a subnormal range (the float32 clamp is 0, so 0/0), or Σv past float32 (a
            # golden minimum of -3e38 anywhere in the tensor): use float64, which takes the
            # guess k from this chunk when it was the first (k from an infinite Σv is no guess)
            if first:
                self._k_final = False
            return None
        sv = (s_diff + su) / self._k  # Σv without a pass of its own
        self.kl_su += su
        self.kl_sv += sv
        self.kl_e += e + s_diff
        return su, sv

    def _kl_exact(self, x: np.ndarray, y: np.ndarray) -> None:
        """KL terms of finite float64 values."""
        u, v = np.empty_like(x), np.empty_like(y)
        shift_clamp(x, self.xmin, self.xmax, u, np.full_like(x, self._clamp_x))
        shift_clamp(y, self.ymin, self.ymax, v, np.full_like(y, self._clamp_y))
        su, sv = float(u.sum()), float(v.sum())
        if not self._k_final:
            # the fused pass's first chunk came here (float32 squares overflowed): its Σu/Σv is
            # the guess, as in _kl_fast; k = 1 left Σe/Su and 1 - r cancelling to exactly 0
            # for a golden masked with -3e38 (KL 2.13 by msaccucmp)
            self._set_k(su / sv if su > 0 and sv > 0 else 1.0)
        self._k_final = True  # k is used from here on: it must not change any more
        self.kl_su += su
        self.kl_sv += sv
        w = self._k * v
        self.kl_e += float(np.sum(u * np.log(u / w) - u + w))

    def start_kl(self) -> None:
        """Before a second pass: KL parameters from pass one's min/max and means."""
        rx, ry = self.xmax - self.xmin, self.ymax - self.ymin
        su = self.mx.n * (self.mx.mean - self.xmin) if rx else self.mx.n * max(self.xmin, F32_EPS)
        sv = self.my.n * (self.my.mean - self.ymin) if ry else self.my.n * max(self.ymin, F32_EPS)
        self._set_kl_params(su / sv if su > 0 and sv > 0 else 1.0, self.size)

    def update_kl(self, xa: np.ndarray, xg: np.ndarray) -> None:
        """Second pass (only when pass one could not fold KL in): float64, finite positions."""
        if len(xa) == 0:
            return
        x = np.asarray(xa, dtype=np.float64)
        y = np.asarray(xg, dtype=np.float64)
        if self.dropped > self.dropped_posinf + self.dropped_neginf:
            # finite positions were dropped (where only infinities were, the test below does)
            x, y = self._kept(x, y, count=False)
        both = np.isfinite(x) & np.isfinite(y)
        if not both.all():
            x, y = x[both], y[both]
        if len(x):
            self._kl_exact(x, y)

    def kl(self) -> float:
        """KL(actual || golden) of the normalised pdfs, from the accumulated terms."""
        if not (self.kl_su > 0 and self.kl_sv > 0):
            return float("nan")
        r = self._k * self.kl_sv / self.kl_su
        value = self.kl_e / self.kl_su + math.log(r) + 1.0 - r
        # KL >= 0: a rounding residue below zero (-9e-16 for two constant sides; the fast
        # path's float32 ratios leave up to ~2e-8, -1.0e-8 on a float16-rounded softmax of 15
        # values) is 0, never a "-0.000000" in a report: anything below zero that 6 decimals
        # would print as 0 (> -5e-7); anything more negative stays visible
        return 0.0 if abs(value) < EPS or -5e-7 < value < 0 else value

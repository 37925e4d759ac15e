"""Chunk kernels behind the streamed metrics: partial sums over one tensor pair, chunk by chunk.

Two passes over a pair of flat arrays (memory maps are fine, nothing is copied whole):

* pass one accumulates dot products, error sums and maxima, min/max and per-chunk variance
  (merged with Chan's formula) of both sides, and NaN/Inf bookkeeping;
* pass two (only for the KL divergence, which needs each side's global min/max first)
  accumulates the normalised-pdf sums.

Fast path: a chunk whose two sides are float16/float32 and all finite is computed in float32
with BLAS dots and numpy reductions over an L2-sized buffer, and every partial result is added
into float64 accumulators. Errors stay at chunk scale (~1e-7 relative), unlike a whole-tensor
float32 dot. float16 is widened by a bit-exact integer trick (3 passes, ~4x faster than
``astype``), because that cast is the bottleneck of comparing fp16 dumps.
Slow path: any chunk with a non-finite value, another dtype, or a float32 overflow is redone
exactly in float64 with explicit NaN/Inf masks.
"""
from __future__ import annotations

import math
import threading

import numpy as np

EPS = float(np.finfo(float).eps)  # msaccucmp ConstManager.FLOAT_EPSILON
F32_EPS = np.float32(np.finfo(np.float32).eps)  # msaccucmp KL clamp
DEFAULT_CHUNK = 1 << 16

_F16_SCALE = np.float32(2.0 ** 112)
_F16_MASK = np.int32(-0x70000001)  # 0x8FFFFFFF: keep the sign, drop sign-extension bits 28..30
_F16_LIMIT = 65536.0  # |value| of a widened fp16 Inf/NaN pattern is at least this
_FAST = (np.dtype(np.float16), np.dtype(np.float32))


def widen_f16(src: np.ndarray, out: np.ndarray) -> np.ndarray:
    """float16 -> float32, bit-exact for every finite value (subnormals and -0 included).

    Inf/NaN patterns come out as finite values of magnitude >= 65536; callers detect them from
    the chunk's min/max, which they compute anyway. ``out`` is a float32 buffer of len(src).
    """
    bits = out.view(np.int32)
    np.copyto(bits, src.view(np.int16))  # sign-extends
    np.left_shift(bits, 13, out=bits)
    np.bitwise_and(bits, _F16_MASK, out=bits)
    np.multiply(out, _F16_SCALE, out=out)
    return out


_EPS_BITS = int(np.array([EPS], np.float32).view(np.int32)[0])  # float32(2**-52) is exact
_INF_BITS = np.int32(0x7F800000)


def _zero_to_inf(t: np.ndarray, tmp: np.ndarray) -> None:
    """Replace every value <= eps of a non-negative float32 array by +inf, branch-free:
    a relative-error term divided by it then becomes exactly 0 (msaccucmp's rule for |y| <= eps)."""
    bits = t.view(np.int32)
    np.subtract(bits, np.int32(_EPS_BITS + 1), out=tmp)
    np.right_shift(tmp, 31, out=tmp)  # -1 where bits <= eps bits, else 0
    np.bitwise_and(tmp, _INF_BITS, out=tmp)
    np.maximum(bits, tmp, out=bits)


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


class Workspace:
    """Chunk-sized scratch buffers, reused across tensor pairs (one set per thread and chunk
    size): allocating fresh buffers per tensor costs page faults that rival the arithmetic."""

    _local = threading.local()
    KEEP_CACHE_BYTES = 8 << 20  # keep buffers up to this size are reused too

    def __init__(self, chunk_size: int):
        self.chunk_size = chunk_size
        self.ones = np.ones(chunk_size, np.float32)
        self.bits = np.empty(chunk_size, np.int32)
        self.a = np.empty(chunk_size, np.float32)
        self.g = np.empty(chunk_size, np.float32)
        self.d = np.empty(chunk_size, np.float32)
        self.t = np.empty(chunk_size, np.float32)
        self.cx = np.empty(chunk_size, np.float32)
        self.cy = np.empty(chunk_size, np.float32)
        self._keep = np.empty(0, np.float32)

    @classmethod
    def get(cls, chunk_size: int) -> "Workspace":
        cache = cls._local.__dict__.setdefault("by_size", {})
        ws = cache.get(chunk_size)
        if ws is None:
            ws = cache[chunk_size] = Workspace(chunk_size)
        return ws

    def keep(self, n: int) -> np.ndarray:
        """A float32 array of ``n`` elements (contents undefined)."""
        if n * 4 > self.KEEP_CACHE_BYTES:
            return np.empty(n, np.float32)
        if self._keep.size < n:
            self._keep = np.empty(max(n, 1 << 16), np.float32)
        return self._keep[:n]


class PairAccumulator:
    """Partial sums of one tensor pair. Feed ``update`` chunk pairs, then read the fields."""

    def __init__(self, chunk_size: int = DEFAULT_CHUNK, keep_size: int = 0):
        """``keep_size``: when > 0, pass one stores the widened actual values (that many) so
        that pass two does not widen float16 again."""
        ws = Workspace.get(chunk_size)
        self.chunk_size = chunk_size
        self._keep = ws.keep(keep_size) if keep_size else None
        self._kept = self._keep is not None
        self._ones, self._bits = ws.ones, ws.bits
        self._a, self._g, self._d, self._t = ws.a, ws.g, ws.d, ws.t
        self._cx, self._cy = ws.cx, ws.cy
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
        self.mismatch = 0

    # -- helpers --------------------------------------------------------------------------
    @staticmethod
    def _f32(src: np.ndarray, buf: np.ndarray) -> np.ndarray:
        """float32 values of a contiguous float16/float32 chunk (float32 is used in place)."""
        if src.dtype == np.float32:
            return src
        return widen_f16(src, buf[:len(src)])

    @property
    def nonfinite(self) -> bool:
        return bool(sum(self.nan) or sum(self.posinf) or sum(self.neginf))

    # -- pass one -------------------------------------------------------------------------
    def update(self, xa: np.ndarray, xg: np.ndarray) -> None:
        """Add one chunk pair (equal length, flat)."""
        m = len(xa)
        if m == 0:
            return
        if not (xa.dtype in _FAST and xg.dtype in _FAST and self._fast(xa, xg, m)):
            self._slow(xa, xg)
        self.size += m

    def _fast(self, xa, xg, m) -> bool:
        a = self._f32(xa, self._a)
        g = self._f32(xg, self._g)
        xmin, xmax = float(a.min()), float(a.max())
        ymin, ymax = float(g.min()), float(g.max())
        if xa.dtype == np.float16 and (xmax >= _F16_LIMIT or xmin <= -_F16_LIMIT):
            return False
        if xg.dtype == np.float16 and (ymax >= _F16_LIMIT or ymin <= -_F16_LIMIT):
            return False
        sxx, syy = float(np.dot(a, a)), float(np.dot(g, g))
        if not (math.isfinite(sxx) and math.isfinite(syy)):
            return False  # a NaN/Inf in a float32 side, or float32 overflow: redo in float64
        ones = self._ones[:m]
        sxy = float(np.dot(a, g))
        d, t = self._d[:m], self._t[:m]
        np.subtract(a, g, out=d)
        sdd = float(np.dot(d, d))
        np.abs(d, out=d)
        max_abs, sum_abs = float(d.max()), float(np.dot(d, ones))
        np.abs(g, out=t)
        if float(t.min()) <= EPS:
            _zero_to_inf(t, self._bits[:m])  # |y| <= eps contributes 0, as in msaccucmp
        np.divide(d, t, out=t)
        max_rel, sum_rel = float(t.max()), float(np.dot(t, ones))
        if not (math.isfinite(sdd) and math.isfinite(sum_abs) and math.isfinite(sum_rel)):
            return False
        sx, sy = float(np.dot(a, ones)), float(np.dot(g, ones))
        mean_x, mean_y = sx / m, sy / m
        np.subtract(a, np.float32(mean_x), out=t)
        m2x = float(np.dot(t, t))
        np.subtract(g, np.float32(mean_y), out=t)
        m2y = float(np.dot(t, t))
        if self._keep is not None:
            self._keep[self.size:self.size + m] = a
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
        self.xmin, self.xmax = min(self.xmin, xmin), max(self.xmax, xmax)
        self.ymin, self.ymax = min(self.ymin, ymin), max(self.ymax, ymax)
        self.mx.merge(m, mean_x, m2x)
        self.my.merge(m, mean_y, m2y)
        return True

    def _count_nonfinite(self, v: np.ndarray, side: int) -> np.ndarray:
        finite = np.isfinite(v)
        if not finite.all():
            self.nan[side] += int(np.isnan(v).sum())
            self.posinf[side] += int(np.isposinf(v).sum())
            self.neginf[side] += int(np.isneginf(v).sum())
        return finite

    def _slow(self, xa, xg) -> None:
        self._kept = False
        x = np.asarray(xa, dtype=np.float64)
        y = np.asarray(xg, dtype=np.float64)
        fx = self._count_nonfinite(x, 0)
        fy = self._count_nonfinite(y, 1)
        both = fx & fy
        if not both.all():
            same_inf = np.isinf(x) & (x == y)
            n_same = int(same_inf.sum())
            self.matched_inf += n_same
            self.mismatch += int((~both).sum()) - n_same
            x, y = x[both], y[both]
        m = len(x)
        if m == 0:
            return
        d = x - y
        ad = np.abs(d)
        ay = np.abs(y)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(ay > EPS, np.abs(x / y - 1), 0.0)  # msaccucmp's exact form
        self.finite += m
        self.sxx += float(np.dot(x, x))
        self.syy += float(np.dot(y, y))
        self.sxy += float(np.dot(x, y))
        self.sdd += float(np.dot(d, d))
        self.max_abs = max(self.max_abs, float(ad.max()))
        self.sum_abs += float(ad.sum())
        self.max_rel = max(self.max_rel, float(rel.max()))
        self.sum_rel += float(rel.sum())
        self.xmin, self.xmax = min(self.xmin, float(x.min())), max(self.xmax, float(x.max()))
        self.ymin, self.ymax = min(self.ymin, float(y.min())), max(self.ymax, float(y.max()))
        mean_x, mean_y = float(x.mean()), float(y.mean())
        self.mx.merge(m, mean_x, float(np.dot(x - mean_x, x - mean_x)))
        self.my.merge(m, mean_y, float(np.dot(y - mean_y, y - mean_y)))

    # -- pass two (KL) --------------------------------------------------------------------
    # msaccucmp: p = max((x - xmin)/rx, eps32) / Σ, q likewise, KL = Σ p ln(p/q). With
    # u = max(x - xmin, eps32*rx) (the same p up to the factor rx, which normalising removes),
    # p = u/Su and q = v/Sv. Summing p ln(p/q) directly subtracts two nearly equal terms
    # (T/Su and ln(Su/Sv)), so instead, for a guess k of Su/Sv taken from pass one, sum the
    # non-negative terms e = u ln(u/(k v)) - u + k v; then exactly
    #     KL = Σe/Su + ln(r) + 1 - r,   r = k Sv/Su,
    # where the correction is second order in the guess's error and the float32 sums only
    # carry relative errors.

    def start_kl(self) -> None:
        """Prepare pass two once pass one has seen every chunk."""
        rx, ry = self.xmax - self.xmin, self.ymax - self.ymin
        self._clamp_x = float(F32_EPS) * (rx or 1.0)
        self._clamp_y = float(F32_EPS) * (ry or 1.0)
        # numpy's maximum against a scalar is not vectorised; against an array it is
        self._cx.fill(self._clamp_x)
        self._cy.fill(self._clamp_y)
        su = self.mx.n * (self.mx.mean - self.xmin) if rx else self.mx.n * max(self.xmin, self._clamp_x)
        sv = self.my.n * (self.my.mean - self.ymin) if ry else self.my.n * max(self.ymin, self._clamp_y)
        self._k = su / sv if su > 0 and sv > 0 and math.isfinite(su / sv) else 1.0
        self._k32 = np.float32(self._k)
        self.kl_su = self.kl_sv = self.kl_e = 0.0

    def update_kl(self, xa: np.ndarray, xg: np.ndarray, start: int) -> None:
        """Second pass over the chunk at ``start`` (after ``start_kl``)."""
        m = len(xa)
        if m == 0:
            return
        if not self.nonfinite and xa.dtype in _FAST and xg.dtype in _FAST:
            a = self._keep[start:start + m] if self._kept else self._f32(xa, self._a)
            g = self._f32(xg, self._g)
            u, v, t, ones = self._d[:m], self._t[:m], self._a[:m], self._ones[:m]
            _shift_clamp(a, self.xmin, self.xmax, u, self._cx[:m])
            _shift_clamp(g, self.ymin, self.ymax, v, self._cy[:m])
            self.kl_su += float(np.dot(u, ones))
            self.kl_sv += float(np.dot(v, ones))
            np.multiply(v, self._k32, out=v)  # w = k v
            np.divide(u, v, out=t)
            np.log(t, out=t)
            e = float(np.dot(u, t))
            np.subtract(v, u, out=v)
            self.kl_e += e + float(np.dot(v, ones))
            return
        x = np.asarray(xa, dtype=np.float64)
        y = np.asarray(xg, dtype=np.float64)
        both = np.isfinite(x) & np.isfinite(y)
        if not both.all():
            x, y = x[both], y[both]
        if len(x) == 0:
            return
        u, v = np.empty_like(x), np.empty_like(y)
        _shift_clamp(x, self.xmin, self.xmax, u, np.full_like(x, self._clamp_x))
        _shift_clamp(y, self.ymin, self.ymax, v, np.full_like(y, self._clamp_y))
        self.kl_su += float(u.sum())
        self.kl_sv += float(v.sum())
        w = self._k * v
        self.kl_e += float(np.sum(u * np.log(u / w) - u + w))

    def kl(self) -> float:
        """KL(actual || golden) of the normalised pdfs (after pass two)."""
        if not (self.kl_su > 0 and self.kl_sv > 0):
            return float("nan")
        r = self._k * self.kl_sv / self.kl_su
        value = self.kl_e / self.kl_su + math.log(r) + 1.0 - r
        return 0.0 if abs(value) < EPS else value


def _shift_clamp(v, lo, hi, out, floor) -> None:
    """out = max(v - lo, floor) when hi > lo, else max(v, floor) (msaccucmp's range-0 case)."""
    if hi - lo != 0:
        np.subtract(v, v.dtype.type(lo), out=out)
        np.maximum(out, floor, out=out)
    else:
        np.maximum(v, floor, out=out)

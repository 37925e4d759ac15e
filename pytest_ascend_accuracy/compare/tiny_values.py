"""The cosine of a float16 tensor with its subnormal-range values compared as equal
(``TensorMetrics.normal_cosine``), which judging takes where it is the higher one, and its
scale-free error metrics likewise (``judged_errors``; ``normal_rel_l2``, ...: the lower one).

Below 2**-14 (~6.1e-5) float16 holds values as subnormals, on a fixed grid of 2**-24 (~6e-8):
a value of 4e-7 keeps 3 bits, and whatever produced it carries the absolute error of the
normal-range values it came from (a sigmoid's saturated tail: its output's *relative* error is
its input logit's *absolute* error). A scale-free metric over a tensor made of such values
measures float16's subnormal grid, not the device. The real PP-OCRv4 detector, on an input
with no text, gives a probability map whose every value is below 2.6e-5: cosine 0.997705 at
736x736 (msaccucmp's own function gives the same) and 0.883 at 160x160, where the golden
merely rounded to float16 has cosine 0.985 with itself; max |error| 1.2e-6 and 1.2e-7.

The rule: a position where the actual (float16) and the golden value both lie below float16's
smallest normal, have the same sign (or one is 0) and differ by at most ``FP16_TINY_ATOL`` (2**-22,
four steps of the subnormal grid) plus ``FP16_TINY_RTOL`` (1/8) of the golden value counts as
equal; every other position keeps its error. A fault that moves values into the normal range (an
offset, a scale, a region computed wrong or flushed to zero where the golden is large enough to
matter), flips signs, or moves a value by more than an eighth of itself plus 2**-22 (a bias, a
shuffle, attention over the wrong keys) still counts in full,
and a side that is all zero keeps its own rule (cosine NaN: an underflow, which ``fp16_range``
names). Worked out only for a float16 actual, or a float32 one whose every value float16 holds
exactly (a float32 op passing a float16 op's values on: ``float16_values``), whose plain cosine
is below ``NORMAL_COSINE_BELOW`` (a threshold at or under that figure passes every other tensor
anyway), over the positions finite on both sides. The same map read rel_l2 0.069322, kl
0.433116, max_rel 3 at 736x736 (0.494926, 1.308260, 3 at 160x160; msaccucmp's own functions
give the same): 0 each with those positions as equal. They are computed again only where those
positions carry ``MATERIAL`` of the error sums or the largest relative error (``material``).

Both passes run compiled where the optional extension ``_tiny_pass`` was built (``setup.py``;
``pair_sums.NUMPY_KERNEL_ENV`` turns it off with the other compiled compare passes): the rule's
tally reads y only where a block of x holds a value below the bound, and ``judged_errors``
replaces the close positions in one float32 copy and takes ``pair_sums``' pass over it. On a
warm PP-OCRv4 det 736 check (random input: 82 of 233 tensors enter the rule, the sigmoid map's
error metrics are computed again) the rule took 0.077-0.081 s of the compare's CPU in numpy
and 0.026-0.029 s compiled (two runs each, the same process layout); the numpy loops stay for
everything else and tests hold the two to the same counts and figures.
"""
from __future__ import annotations

import math
from typing import Dict, NamedTuple, Optional, Tuple

import numpy as np

from ..core.compiled_modules import load_once

from .chunk_ops import EPS
from .kernel import PairAccumulator
from .pair_sums import NUMPY_KERNEL_ENV, accumulate

#: float16's smallest normal value (2**-14): below it, values are subnormals on a 2**-24 grid
FP16_TINY = 2.0 ** -14
#: how far apart two such values may be and still count as equal: ``FP16_TINY_ATOL`` plus
#: ``FP16_TINY_RTOL`` of the golden value, and never of opposite signs. 2**-22 is four steps of
#: the subnormal grid (2**-24); 1/8 covers the relative error a sigmoid's tail carries from its
#: logits (the real PP-OCRv4 detector at 736x736: every position within it, the 99th percentile
#: of the relative error of values above 2**-20 at 0.195, all of which the 2**-22 covers). An
#: absolute bound alone (msprobe's 2**-16 for small float16 values) is larger than every value
#: of a tensor below ~7.6e-6, where it counted a sign flip or a shuffle as equal (a review)
FP16_TINY_ATOL = 2.0 ** -22
FP16_TINY_RTOL = 0.125
#: the rule's closeness test in words, as reasons and notes give it
CLOSE_WORDS = "of one sign and within 2**-22 + 1/8 of the golden value of each other"
#: the note of a float32 actual the rule reads as float16 (``float16_values``)
FLOAT32_HELD_NOTE = ("float32 values that float16 holds exactly (a float16 op's, passed on): "
                     "float16's rule for values below its smallest normal applies to them")
#: the rule is computed for tensors whose plain cosine is below this: a threshold at or under it
#: already passes every tensor at or above it
NORMAL_COSINE_BELOW = 1.0 - 1e-5
#: the scale-free error metrics the rule gives a judged figure of their own, as for the cosine
#: (max_abs, rmse and mean_abs measure float16's subnormal grid in its own units, 6e-8: they
#: stay msaccucmp's)
ERROR_METRICS = ("rel_l2", "max_rel", "mean_rel", "acc_rel", "kl")
#: the most values ``judged_errors`` replaces in one array for the compiled pair pass (a float32
#: copy of 16 MB at most); a longer tensor takes the numpy chunks
WHOLE_MAX = 1 << 22
#: the ``_tiny_pass.ABI`` this module calls (``tiny(x, y, y_half, n)``)
ABI = 1
_HALF, _SINGLE = np.dtype(np.float16), np.dtype(np.float32)
_MODULE: list = []  # [module or None], once looked up
#: close positions hold at least this share of Σ(x-y)² or of the summed relative error, or the
#: largest relative error: below it they could move no figure in its 3rd significant digit
MATERIAL = 1e-3


def pass_extension():
    """The compiled pass (``_tiny_pass.c``), or None when it was not built here or the compiled
    compare passes are turned off (``pair_sums.NUMPY_KERNEL_ENV``)."""
    return load_once(_MODULE, f"{__package__}._tiny_pass", ABI, NUMPY_KERNEL_ENV)


def applies(x_dtype, y_dtype, cosine: float, size: int) -> bool:
    """Whether the rule is worked out for an actual of ``x_dtype`` against a golden of
    ``y_dtype`` whose plain ``cosine`` over ``size`` positions is known (NaN: a zero side, or
    nothing finite, keeps its own rule); a float32 actual only where ``float16_values`` finds
    float16's values in it."""
    return (np.dtype(x_dtype) in (_HALF, _SINGLE) and np.dtype(y_dtype).kind == "f" and size > 1
            and math.isfinite(cosine) and cosine < NORMAL_COSINE_BELOW)


def float16_values(x: np.ndarray, chunk_size: int) -> Optional[np.ndarray]:
    """``x`` as float16 where it holds float16's values: a float16 actual itself, and a float32
    one whose every value float16 holds exactly (NaN and ±Inf too), which a float32 op that
    moves a float16 op's values on gives (a Transpose, Reshape, Concat or MaxPool after a
    float16 MatMul under high precision): its values below float16's smallest normal are the
    float16 op's, whose rule passed them there, and a plain cosine failed the op that only
    copied them (T1's random-init ConvNeXt: the layer scale's float16 Mul passed by the rule,
    the float32 Transpose after it failed at 0.333783 with the same values, so high precision
    failed where the default passed). None for any other float32 actual (computed in float32:
    the first chunk almost always holds a value float16 does not), read chunk by chunk."""
    if x.dtype == _HALF:
        return x
    if x.dtype != _SINGLE:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        for s in range(0, x.size, chunk_size):
            part = x[s:s + chunk_size]
            if not np.array_equal(part.astype(_HALF).astype(_SINGLE), part, equal_nan=True):
                return None
        return x.astype(_HALF)


class TinyPass(NamedTuple):
    """What one pass of the rule found: the ``cosine`` with the close positions as equal (NaN:
    none differs, or the replaced side is all zero; 1: every position is one of them), the
    ``equal`` positions it counted that differ, and what they add to msaccucmp's error sums:
    Σ(x-y)² (``sdd``), Σ|x/y - 1| (``sum_rel``) and the largest such term (``max_rel``)."""

    cosine: float
    equal: int
    sdd: float = 0.0
    sum_rel: float = 0.0
    max_rel: float = 0.0
    #: ‖x'‖/‖y‖, x' the actual with the golden's values at the close positions (the scale
    #: guard's figure beside the judged one: ``scale_guard.guard_ratio``); NaN where not found
    norm_ratio: float = math.nan


def normal_cosine(x: np.ndarray, y: np.ndarray, chunk_size: int, sums: Tuple[float, ...],
                  finite: int) -> TinyPass:
    """The rule's pass over flat ``x`` (float16) against ``y``: the cosine with every position
    where both |x| and |y| are below ``FP16_TINY`` and close taken as equal (x replaced by y
    there), from the plain ``sums`` (Σx², Σy², Σxy over the ``finite`` positions finite on both
    sides) and one pass that corrects them where such positions differ: a cheap integer test
    per value, float64 only for the positions it finds (non-finite ones are never below the
    bound); and those positions' share of the error sums (``TinyPass``), which tells whether
    the error metrics need ``judged_errors``."""
    sxx, syy, sxy = sums
    tally = _compiled_tally(x, y)
    if tally is None:
        tally = _numpy_tally(x, y, chunk_size)
    dxx, dxy, sdd, sum_rel, max_rel, equal, tiny, apart = tally
    if not equal:
        return TinyPass(math.nan, 0)
    found = (equal, sdd, sum_rel, max_rel)
    if tiny == finite and not apart:
        return TinyPass(1.0, *found, norm_ratio=1.0)
    sxx, sxy = sxx + dxx, sxy + dxy
    if sxx <= 0.0 or syy <= 0.0:
        return TinyPass(math.nan, *found)
    return TinyPass(max(-1.0, min(sxy / (math.sqrt(sxx) * math.sqrt(syy)), 1.0)), *found,
                    norm_ratio=math.sqrt(sxx) / math.sqrt(syy))


def _compiled_tally(x: np.ndarray, y: np.ndarray):
    """``normal_cosine``'s sums and counts from the compiled pass (``_tiny_pass.c``), or None
    where it does not apply: no extension, a golden neither float16 nor float32, or a buffer
    that is not contiguous."""
    module = pass_extension()
    if (module is None or y.dtype not in (_HALF, _SINGLE) or not x.flags.c_contiguous
            or not y.flags.c_contiguous):
        return None
    return module.tiny(x, y, y.dtype == _HALF, int(x.size))


def _numpy_tally(x: np.ndarray, y: np.ndarray, chunk_size: int):
    """What ``_compiled_tally`` returns, chunk by chunk in numpy: (dxx, dxy, sdd, sum_rel,
    max_rel, equal, tiny, apart)."""
    dxx = dxy = sdd = sum_rel = max_rel = 0.0
    equal = tiny = apart = 0
    for s in range(0, x.size, chunk_size):
        a, g = x[s:s + chunk_size], y[s:s + chunk_size]
        found = _close(a, g)
        if found is None:
            continue
        a64, g64, close, n_tiny = found
        tiny += n_tiny
        apart += int(np.count_nonzero(~close))
        differ = close & (a64 != g64)
        k = int(np.count_nonzero(differ))
        if k:
            a64, g64 = a64[differ], g64[differ]
            gg = float(np.dot(g64, g64))
            dxx += gg - float(np.dot(a64, a64))  # Σx² with x replaced by y there
            dxy += gg - float(np.dot(a64, g64))
            d = a64 - g64
            sdd += float(np.dot(d, d))
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.where(np.abs(g64) > EPS, np.abs(a64 / g64 - 1.0), 0.0)
            sum_rel += float(rel.sum())
            max_rel = max(max_rel, float(rel.max()))
            equal += k
    return dxx, dxy, sdd, sum_rel, max_rel, equal, tiny, apart


def _close(a: np.ndarray, g: np.ndarray):
    """The positions of one chunk where both sides lie below ``FP16_TINY`` and are not both 0:
    ``(a64, g64, close, n_tiny)``: their values in float64, which of them are close (one sign,
    within ``FP16_TINY_ATOL`` + ``FP16_TINY_RTOL`` of the golden value), and how many positions
    lie below the bound on both sides (0 against 0 too); None when none is below it."""
    xb = a.view(np.uint16) & np.uint16(0x7FFF)
    at = xb < np.uint16(_F16_TINY_BITS)
    if not at.any():
        return None
    both = at & _below(g)
    n_tiny = int(np.count_nonzero(both))
    both &= (xb != 0) | (g != 0)  # 0 against 0 needs no correction
    idx = np.flatnonzero(both)
    if not idx.size:
        return None if not n_tiny else (_EMPTY, _EMPTY, _EMPTY.astype(bool), n_tiny)
    a64, g64 = a[idx].astype(np.float64), g[idx].astype(np.float64)
    return a64, g64, _close_values(a64, g64), n_tiny


def _close_values(a64: np.ndarray, g64: np.ndarray) -> np.ndarray:
    """Which pairs are close: one sign, within ``FP16_TINY_ATOL`` + ``FP16_TINY_RTOL`` of the
    golden value (the rule itself; ``_close`` and ``_replaced`` pick the positions)."""
    return (np.abs(a64 - g64) <= FP16_TINY_ATOL + FP16_TINY_RTOL * np.abs(g64)) & (
        a64 * g64 >= 0.0)


def material(found: TinyPass, sdd: float, sum_rel: float, max_rel: float) -> bool:
    """Whether the close positions ``found`` carry enough of the plain error sums (``sdd``:
    Σ(x-y)², ``sum_rel``, ``max_rel``) to move an error metric: ``MATERIAL`` of either sum, or
    the largest relative error (only then ``judged_errors`` makes its pass)."""
    return found.equal > 0 and (found.sdd > MATERIAL * sdd or found.sum_rel > MATERIAL * sum_rel
                                or (max_rel > 0.0 and found.max_rel >= max_rel * (1.0 - 1e-6)))


def judged_errors(x: np.ndarray, y: np.ndarray, chunk_size: int, kl: bool) -> Dict[str, float]:
    """The scale-free error metrics (``ERROR_METRICS``: rel_l2, max_rel, mean_rel, acc_rel and,
    with ``kl``, kl) of flat ``x`` (float16) with every close position below ``FP16_TINY``
    replaced by the golden value, computed as the plain ones are (``PairAccumulator``, chunk by
    chunk; the replaced chunk in the golden's float type, which holds both sides exactly)."""
    acc = _compiled_judged(x, y, chunk_size, kl)
    if acc is None:
        acc = _numpy_judged(x, y, chunk_size, kl)
    n = acc.finite
    if not n or acc.syy <= 0.0:
        return {}
    out = {"rel_l2": math.sqrt(acc.sdd / acc.syy), "max_rel": acc.max_rel,
           "mean_rel": acc.sum_rel / n, "acc_rel": acc.sum_rel}
    if kl:
        out["kl"] = acc.kl()
    return out


def _compiled_judged(x: np.ndarray, y: np.ndarray, chunk_size: int, kl: bool):
    """``judged_errors``' accumulator from the compiled passes: the replaced actual made whole
    (a float32 copy, ``WHOLE_MAX`` values at most, its close positions set by ``_tiny_pass``)
    and the pair pass of ``pair_sums`` over it; None where they do not take the pair (no
    extension, longer, a float64 golden, a non-finite value)."""
    module = pass_extension()
    if (module is None or x.size > WHOLE_MAX or y.dtype not in (_HALF, _SINGLE)
            or not x.flags.c_contiguous or not y.flags.c_contiguous):
        return None
    replaced = x.astype(np.float32)
    module.replace(x, y, y.dtype == _HALF, int(x.size), replaced)
    acc = PairAccumulator(chunk_size, kl=kl)
    return acc if accumulate(acc, replaced, y) else None


def _numpy_judged(x: np.ndarray, y: np.ndarray, chunk_size: int, kl: bool) -> PairAccumulator:
    acc = PairAccumulator(chunk_size, kl=kl)
    with np.errstate(all="ignore"):
        for s in range(0, x.size, chunk_size):
            acc.update(_replaced(x[s:s + chunk_size], y[s:s + chunk_size]), y[s:s + chunk_size])
        if acc.needs_second_pass:
            acc.start_kl()
            for s in range(0, x.size, chunk_size):
                acc.update_kl(_replaced(x[s:s + chunk_size], y[s:s + chunk_size]),
                              y[s:s + chunk_size])
    return acc


def _replaced(a: np.ndarray, g: np.ndarray) -> np.ndarray:
    """One chunk of the actual with its close positions below ``FP16_TINY`` replaced by the
    golden values, in a float type that holds both exactly (float32 for a float16 or float32
    golden)."""
    out = a.astype(np.promote_types(np.float32, g.dtype))
    xb = a.view(np.uint16) & np.uint16(0x7FFF)
    at = xb < np.uint16(_F16_TINY_BITS)
    if at.any():
        idx = np.flatnonzero(at & _below(g))
        close = _close_values(a[idx].astype(np.float64), g[idx].astype(np.float64))
        out[idx[close]] = g[idx[close]]
    return out


#: float16's bit pattern of ``FP16_TINY`` (|value| patterns below it are subnormals or 0)
_F16_TINY_BITS = 0x0400
_F32_TINY_BITS = 0x38800000


_EMPTY = np.empty(0)


def _below(g: np.ndarray) -> np.ndarray:
    """|g| < ``FP16_TINY`` (False for NaN and ±Inf), on the bit patterns where it can."""
    if g.dtype == np.float32 and g.flags.c_contiguous:
        return (g.view(np.uint32) & np.uint32(0x7FFFFFFF)) < np.uint32(_F32_TINY_BITS)
    if g.dtype == np.float16 and g.flags.c_contiguous:
        return (g.view(np.uint16) & np.uint16(0x7FFF)) < np.uint16(_F16_TINY_BITS)
    with np.errstate(invalid="ignore"):
        return np.abs(g) < FP16_TINY


def note(cosine: float, normal: float, equal: int) -> str:
    """The metrics' note on the rule's figure."""
    return (f"{equal} position{'' if equal == 1 else 's'} below float16's smallest normal "
            f"({FP16_TINY:.2g}) on both sides, {CLOSE_WORDS}, "
            f"compared as equal: cosine {normal:.6f} (msaccucmp's formula: {cosine:.6f})")


def errors_note(m, lower: Dict[str, float], equal: int) -> str:
    """The metrics' note on the error metrics' figures of the rule (``lower``: by name, each
    below msaccucmp's figure in ``m``)."""
    shown = ", ".join(f"{k} {v:.6f} (msaccucmp's formula: {getattr(m, k):.6f})"
                      for k, v in lower.items())
    return (f"with the same {equal} position{'' if equal == 1 else 's'} compared as equal: "
            f"{shown}")

"""A golden's ±float32 max, the frameworks' stand-in for an infinity, against the device's
infinity of the same sign: compared as equal (``TensorMetrics.stand_in``), and said.

Hugging Face transformers build every attention mask with ``torch.finfo(torch.float32).min``
(-3.4028235e38; numpy's ``np.finfo(np.float32).min`` and TensorFlow's ``tf.float32.min`` are the
same value) instead of ``-inf``. onnxruntime's float32 golden holds that value (an additive mask:
-3.4e38 plus a score is -3.4e38 again, float32's spacing there being 2e31); a float16 device
holds ``-inf`` (the constant overflows float16 as it is converted) or, where the chip converts
in saturation mode, float16's -65504 (plus a score rounds to another value of float16's top
binade). Both mask alike: Softmax after them gave cosine 1.000000 on real GPT-2 and BERT exports,
whose checks all failed at the mask's ``Where`` ("NaN/Inf on one side only") before this rule.

The rule, at each position: a golden of exactly +float32 max (-float32 max) against a device
value of +inf (-inf), or a finite one of the same sign in float16's top binade (2**15 to 65504:
the saturated stand-in), counts as equal, as a mask's ``-inf`` on both sides does; those
positions are left out of every metric, as non-finite ones are. Only that exact golden value:
float32 max is the one value no computation reaches but the constant itself (an overflowing
activation is ``inf``, not max), so matching it is not a guess about scale. Other stand-ins are
not taken: -1e4 (the original BERT's) fits float16 and compares as a number; -1e9 (a
``masked_fill`` in much hand-written attention) is an ordinary float32 value, an additive mask
moves it by the scores (so no one value marks it), and a rule by magnitude ("a golden past
float16's range against the device's infinity") is exactly the overflow that must fail.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: float32's largest value: ``torch.finfo(torch.float32).max``, numpy's, TensorFlow's
F32_MAX = float(np.finfo(np.float32).max)
#: float16's largest value, and the bottom of its top binade: a device value of the stand-in's
#: sign within [F16_TOP, F16_MAX] in magnitude is the stand-in saturated to float16
F16_MAX = 65504.0
F16_TOP = 2.0 ** 15


class StandIns(NamedTuple):
    """Positions the rule counted as equal, by what the device holds there."""

    neg_inf: int = 0  # golden -float32 max, device -inf
    pos_inf: int = 0  # golden +float32 max, device +inf
    saturated: int = 0  # golden ±float32 max, device a float16 value in [2**15, 65504], same sign

    @property
    def total(self) -> int:
        return self.neg_inf + self.pos_inf + self.saturated


def may_hold_stand_in(max_abs_golden: float, mismatch: int, golden_dtype) -> bool:
    """Whether a pair whose plain metrics read ``max_abs_golden`` and ``mismatch`` may hold the
    stand-in (a device infinity against it is a mismatch; a saturated one leaves it finite in
    the golden's maximum): a float golden of 4 bytes or more only (float16 cannot hold it)."""
    dtype = np.dtype(golden_dtype)
    if dtype.kind != "f" or dtype.itemsize < 4:
        return False
    return mismatch > 0 or max_abs_golden >= F32_MAX


def stand_in_positions(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Where, in one chunk pair (``x`` the device's, ``y`` the golden's), the rule holds."""
    neg, pos = y == -F32_MAX, y == F32_MAX
    if not (neg.any() or pos.any()):
        return neg
    xv = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        a = np.abs(xv)
        device = np.isinf(xv) | ((a >= F16_TOP) & (a <= F16_MAX))
    return device & ((neg & (xv < 0)) | (pos & (xv > 0)))


def count_stand_ins(x: np.ndarray, y: np.ndarray, chunk_size: int) -> StandIns:
    """The rule's positions in the flat pair, chunk by chunk."""
    neg_inf = pos_inf = saturated = 0
    for s in range(0, x.size, chunk_size):
        xa, ya = x[s:s + chunk_size], y[s:s + chunk_size]
        at = stand_in_positions(xa, ya)
        if not at.any():
            continue
        xv = np.asarray(xa[at], dtype=np.float64)
        n_neg, n_pos = int(np.isneginf(xv).sum()), int(np.isposinf(xv).sum())
        neg_inf, pos_inf = neg_inf + n_neg, pos_inf + n_pos
        saturated += len(xv) - n_neg - n_pos
    return StandIns(neg_inf, pos_inf, saturated)


def stand_in_note(found: StandIns) -> str:
    """The row's note: how many positions, what each side holds there."""
    parts = []
    if found.neg_inf:
        parts.append(f"{_positions_hold(found.neg_inf)} float32's -max (-3.4e38) in the "
                     "golden, the mask stand-in for -inf, and -inf on the device")
    if found.pos_inf:
        parts.append(f"{_positions_hold(found.pos_inf)} float32's +max (3.4e38) in the "
                     "golden, the stand-in for +inf, and +inf on the device")
    if found.saturated:
        parts.append(f"{_positions_hold(found.saturated)} float32's ±max (±3.4e38) in the "
                     "golden, the mask stand-in for an infinity, and float16's saturated value "
                     "of the same sign (2**15 to 65504) on the device")
    return "; ".join(parts) + " (compared as equal, as the same infinity on both sides is)"


def _positions_hold(n: int) -> str:
    return f"{n} position holds" if n == 1 else f"{n} positions hold"


__all__ = ["F16_MAX", "F16_TOP", "F32_MAX", "StandIns", "count_stand_ins", "may_hold_stand_in",
           "stand_in_note", "stand_in_positions"]

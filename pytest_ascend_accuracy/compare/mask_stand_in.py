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
value of +inf (-inf), or, where the device tensor is float16, a finite one of the same sign in
float16's top binade (2**15 to 65504: the saturated stand-in; a float32 device holds -3.4e38
itself, so its -40000 there is a wrong value and fails), counts as equal, as a mask's ``-inf``
on both sides does; those positions are left out of every metric, as non-finite ones are, in
the same pass (``PairAccumulator(drop=...)``). Only that exact golden value:
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
    saturated: int = 0  # golden ±float32 max, float16 device a value in [2**15, 65504], same sign

    @property
    def total(self) -> int:
        return self.neg_inf + self.pos_inf + self.saturated


def golden_may_hold(golden_dtype) -> bool:
    """Whether a golden of this dtype can hold the stand-in: a float of 4 bytes or more
    (float16 cannot)."""
    dtype = np.dtype(golden_dtype)
    return dtype.kind == "f" and dtype.itemsize >= 4


def stand_in_positions(x: np.ndarray, y: np.ndarray, f16_device: bool) -> np.ndarray:
    """Where, in one chunk pair (``x`` the device's, ``y`` the golden's), the rule holds;
    ``f16_device``: the device tensor is float16, the one dtype whose saturated value the
    stand-in becomes (a float32 device holds -3.4e38 itself, so its -40000 is a wrong value).
    The device side is looked at only where the golden holds ±float32 max."""
    at = np.abs(y) == F32_MAX
    if not at.any():
        return at
    where = np.flatnonzero(at)
    xv = np.asarray(x[where], dtype=np.float64)
    with np.errstate(invalid="ignore"):
        device = np.isinf(xv)
        if f16_device:
            a = np.abs(xv)
            device |= (a >= F16_TOP) & (a <= F16_MAX)
        at[where] = device & ((xv < 0) == (y[where] < 0))
    return at


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
        parts.append(f"{_positions_hold(found.saturated)}{_SATURATED}")
    return "; ".join(parts) + " (compared as equal, as the same infinity on both sides is)"


_SATURATED = (" float32's ±max (±3.4e38) in the golden, the mask stand-in for an infinity, and "
              "float16's saturated value of the same sign (2**15 to 65504) on the device")


def saturated_in(notes) -> int:
    """How many positions the rule took with float16's saturated value on the device, from a
    row's notes (``stand_in_note`` wrote them; a saved result keeps them): 0 where none. Those
    are finite on both sides, so msaccucmp's figures take them in where ours leave them out."""
    for note in notes:
        for part in note.split("; "):
            if _SATURATED in part:
                return int(part.split(" ", 1)[0])
    return 0


def _positions_hold(n: int) -> str:
    return f"{n} position holds" if n == 1 else f"{n} positions hold"


__all__ = ["F16_MAX", "F16_TOP", "F32_MAX", "StandIns", "golden_may_hold", "saturated_in",
           "stand_in_note", "stand_in_positions"]

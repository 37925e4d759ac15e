"""Does an AIPP output agree with the reference pre-processing? A scale-sensitive judgement.

Cosine similarity is blind to scale: ``var_reci_chn`` written as the std instead of 1/std keeps
the cosine near 1 while every value is thousands of times off. So the verdict here is the
element-wise absolute error against a tolerance built from what the device legitimately does:

- float16 rounding of the output and of the stored ``var_reci_chn`` (relative, ``2**-9 * |ref|``:
  two roundings of at most 2**-11 each, with margin);
- float16 storage of ``min_chn`` (the offset is off by up to 1/16 of a pixel level for values
  in 128..256), as ``OFFSET_LEVELS`` pixel levels times ``|var_reci_chn|``;
- with colour-space conversion, the integer matrix and the ``>> 8`` truncation (about one
  level, against a float reference), as ``CSC_LEVELS`` pixel levels times ``|var_reci_chn|``.

That element-wise allowance would hide a wrong offset of a level or two (``mean_chn_0: 125``
for 123.675, or every ``min_chn`` left out), so with CSC each channel's *systematic* error is
judged too, in pixel levels (error / ``var_reci_chn``). The truncation's own part of it is
known element by element (:func:`.apply.csc_truncation`: the integer CSC minus the exact one,
-1..0, about -0.5 on average), so the channel's offset is the mean of the error less that
part, for a reference converting in float or rounding to nearest; for a reference that
truncates as the device does (error without the truncation's spread), the mean error itself.
It must stay within ``SYSTEMATIC_LEVELS`` (the float16 ``min_chn`` and the matrix's integer
coefficients against a float formula, about 0.03 level on real images, with margin) plus
three standard errors of that mean, so a few pixels' noise is no offset. A correct BT.601 file
scores about 0.01 level; ``min_chn_1: 0.28`` left out scores 0.28.

Relative L2, max abs error, the norm ratio and the cosine are reported with the verdict.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np

from .apply import apply_aipp_image, csc_truncation

OFFSET_LEVELS = 0.07
CSC_LEVELS = 3.0
SYSTEMATIC_LEVELS = 0.2
REL_TOLERANCE = 2.0 ** -9


@dataclass(frozen=True)
class Agreement:
    """One image: AIPP output vs reference."""

    ok: bool
    rel_l2: float
    max_abs: float
    worst_excess: float  # max over elements of |error| / tolerance (<= 1 passes)
    scale: float  # ||aipp|| / ||reference||
    cosine: float
    shape: Optional[str] = None  # set when the shapes differ
    #: with CSC: the channel whose systematic offset (pixel levels) is worst, that offset, and
    #: it over its allowance (<= 1 passes); see the module docstring
    offset_channel: Optional[int] = None
    offset_levels: float = 0.0
    offset_excess: float = 0.0

    @property
    def worst(self) -> float:
        """The larger of the element-wise and the systematic excess (<= 1 passes)."""
        return max(self.worst_excess, self.offset_excess)

    def describe(self) -> str:
        if self.shape:
            return self.shape
        text = (f"rel-L2 {self.rel_l2:.3g}, max abs error {self.max_abs:.4g} "
                f"({self.worst_excess:.3g}x the float16/AIPP tolerance), norm ratio {self.scale:.4g}, "
                f"cosine {self.cosine:.6f}")
        if self.offset_excess > 1:
            text += (f"; channel {self.offset_channel} is offset by {self.offset_levels:+.3g} "
                     f"pixel levels ({self.offset_excess:.3g}x what CSC truncation explains)")
        return text


def tolerance(reference: np.ndarray, var_reci: Sequence[float], csc: bool) -> np.ndarray:
    """Element-wise absolute tolerance for a CHW reference."""
    ref = np.asarray(reference, dtype=np.float64)
    levels = OFFSET_LEVELS + (CSC_LEVELS if csc else 0.0)
    var = np.abs(np.asarray(list(var_reci)[:ref.shape[0]], dtype=np.float64))
    if var.size < ref.shape[0]:
        var = np.concatenate([var, np.ones(ref.shape[0] - var.size)])
    return REL_TOLERANCE * np.abs(ref) + levels * var[:, None, None] + 1e-6


def systematic_offset(diff: np.ndarray, truncation: np.ndarray, var_reci: Sequence[float]):
    """``(channel, offset levels, excess)`` of the worst channel: ``diff`` (AIPP output minus
    reference) and ``truncation`` (:func:`.apply.csc_truncation`) over the same CHW pixels."""
    worst = (None, 0.0, 0.0)
    for c in range(min(diff.shape[0], truncation.shape[0])):
        var = float(np.float16(list(var_reci)[c])) if c < len(var_reci) else 1.0
        if not var or diff[c].size == 0:
            continue
        err = diff[c].ravel() / var
        rest = err - truncation[c].ravel()
        # a reference that truncates as the device does leaves no truncation spread to remove
        kept = rest if np.var(rest) <= np.var(err) else err
        offset = float(np.mean(kept))
        allowance = SYSTEMATIC_LEVELS + 3.0 * float(np.std(kept)) / np.sqrt(kept.size)
        if abs(offset) / allowance > worst[2]:
            worst = (c, offset, abs(offset) / allowance)
    return worst


def compare_preprocessed(actual: np.ndarray, reference: np.ndarray, var_reci: Sequence[float],
                         csc: bool, *, truncation: Optional[np.ndarray] = None,
                         origin: Tuple[int, int] = (0, 0)) -> Agreement:
    """Judge one CHW AIPP output against the CHW reference tensor; with CSC, ``truncation``
    (:func:`.apply.csc_truncation`, for the pixels from ``origin`` = top, left padding on)
    adds the systematic-offset test of the module docstring."""
    a = np.asarray(actual, dtype=np.float64)
    r = np.asarray(reference, dtype=np.float64)
    if a.shape != r.shape:
        return Agreement(False, float("inf"), float("inf"), float("inf"), float("nan"), float("nan"),
                         shape=f"AIPP output shape {tuple(a.shape)} (C, H, W) but the reference "
                               f"pre-processing gives {tuple(r.shape)}")
    diff = a - r
    if not np.all(np.isfinite(a)):
        excess = float("inf")
    else:
        excess = float(np.max(np.abs(diff) / tolerance(r, var_reci, csc))) if r.size else 0.0
    rn, an = float(np.linalg.norm(r)), float(np.linalg.norm(a))
    rel = float(np.linalg.norm(diff)) / rn if rn else float(np.linalg.norm(diff))
    cos = float(np.dot(a.ravel(), r.ravel()) / (an * rn)) if an and rn else float("nan")
    channel, offset, offset_excess = None, 0.0, 0.0
    if csc and truncation is not None and np.isfinite(excess):
        top, left = origin
        h, w = truncation.shape[1:]
        channel, offset, offset_excess = systematic_offset(diff[:, top:top + h, left:left + w],
                                                           truncation, var_reci)
    return Agreement(excess <= 1.0 and offset_excess <= 1.0, rel,
                     float(np.max(np.abs(diff))) if r.size else 0.0, excess,
                     an / rn if rn else float("nan"), cos, None, channel, offset, offset_excess)


def judge_image(op, image: np.ndarray, reference: np.ndarray, *,
                name: Optional[str] = None) -> Agreement:
    """``op`` (an ``AippOp``) applied to one raw image, judged against its CHW reference
    (``name``: the model input, as errors name it)."""
    pad = bool(op.get("padding"))
    origin = (int(op.get("top_padding_size")), int(op.get("left_padding_size"))) if pad else (0, 0)
    return compare_preprocessed(apply_aipp_image(op, image, name=name), reference,
                                [op.get(f"var_reci_chn_{c}") for c in range(reference.shape[0])],
                                bool(op.get("csc_switch")), truncation=csc_truncation(op, image),
                                origin=origin)

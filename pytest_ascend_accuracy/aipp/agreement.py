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

Relative L2, max abs error, the norm ratio and the cosine are reported with the verdict.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

OFFSET_LEVELS = 0.07
CSC_LEVELS = 3.0
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

    def describe(self) -> str:
        if self.shape:
            return self.shape
        return (f"rel-L2 {self.rel_l2:.3g}, max abs error {self.max_abs:.4g} "
                f"({self.worst_excess:.3g}x the float16/AIPP tolerance), norm ratio {self.scale:.4g}, "
                f"cosine {self.cosine:.6f}")


def tolerance(reference: np.ndarray, var_reci: Sequence[float], csc: bool) -> np.ndarray:
    """Element-wise absolute tolerance for a CHW reference."""
    ref = np.asarray(reference, dtype=np.float64)
    levels = OFFSET_LEVELS + (CSC_LEVELS if csc else 0.0)
    var = np.abs(np.asarray(list(var_reci)[:ref.shape[0]], dtype=np.float64))
    if var.size < ref.shape[0]:
        var = np.concatenate([var, np.ones(ref.shape[0] - var.size)])
    return REL_TOLERANCE * np.abs(ref) + levels * var[:, None, None] + 1e-6


def compare_preprocessed(actual: np.ndarray, reference: np.ndarray, var_reci: Sequence[float],
                         csc: bool) -> Agreement:
    """Judge one CHW AIPP output against the CHW reference tensor."""
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
    return Agreement(excess <= 1.0, rel, float(np.max(np.abs(diff))) if r.size else 0.0, excess,
                     an / rn if rn else float("nan"), cos)

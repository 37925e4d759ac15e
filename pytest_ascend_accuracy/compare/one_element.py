"""A one-element tensor judged by a cosine threshold.

Cosine tells only the sign of a one-element tensor (msaccucmp prints 1 for any two values of
one sign), and the scale guard lets its value move by up to 2x: silero-vad's one output, the
speech probability, 1.8x off (0.00164 against 0.00091) passed ``threshold=0.99`` (H110). Such a
tensor is judged instead by its relative error against the error the cosine threshold allows a
tensor of many elements: an error at right angles to the golden, of relative size r, gives
cosine 1/sqrt(1 + r^2), so threshold T allows r = sqrt(1/T^2 - 1) (0.142 at 0.99, 0.329 at
0.95). Values below float16's smallest normal on both sides are noise, as their sign is
(``metrics.SIGN_FLOOR``), and pass.
"""
from __future__ import annotations

import json
import math
import shlex

from .metrics import SIGN_FLOOR, TensorMetrics
from .thresholds import Threshold, threshold_text

#: how a failure's reason under this rule starts
ONE_ELEMENT = "one element:"


def allowed_error(threshold: float) -> float:
    """The relative error a cosine ``threshold`` allows a one-element tensor (module
    docstring); no bound at or below 0."""
    if threshold <= 0.0:
        return math.inf
    if threshold >= 1.0:
        return 0.0
    return math.sqrt(1.0 / (threshold * threshold) - 1.0)


def passing_threshold(error: float) -> float:
    """The cosine threshold, 6 decimals rounded down, that allows a relative ``error``."""
    return math.floor(1e6 / math.sqrt(1.0 + error * error)) / 1e6


def one_element_failure(m: TensorMetrics, thr: Threshold, op: str) -> str:
    """Why a one-element tensor of ``op`` whose cosine meets ``thr`` fails it by its relative
    error, with the per-op threshold that passes it, spelled to paste; "" when the rule does
    not apply or the error is allowed."""
    if (thr.metric != "cosine" or m.size != 1 or m.finite != 1 or m.exact or m.golden_zero
            or max(m.max_abs_actual, m.max_abs_golden) < SIGN_FLOOR):
        return ""
    error, bound = m.value("rel_l2"), allowed_error(thr.value)
    if not error > bound:
        return ""
    lower = threshold_text(passing_threshold(error))
    fix = (f"a cosine threshold of {lower} for this op passes it: per_op={{{json.dumps(op)}: "
           f"{lower}}} in a test, --per-op {shlex.quote(f'{op}={lower}')} on the command line"
           if float(lower) > 0.0 else "no cosine threshold above 0 passes it")
    return (f"{ONE_ELEMENT} cosine tells only its sign; its relative error {error:.4g} is over "
            f"the {bound:.4g} that cosine >= {threshold_text(thr.value)} allows (an error of that "
            f"size at right angles to a golden of many elements gives that cosine); {fix}")

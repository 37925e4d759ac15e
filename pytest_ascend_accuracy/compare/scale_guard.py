"""The scale guard: a tensor whose judged figure meets its threshold still fails when its L2 norm
is outside ``1/scale_tolerance``-``scale_tolerance`` times the golden's (cosine, and the
scale-free error metrics, are blind to scale: a tensor x1000 keeps cosine 1), and the words that
say why (``CompareResult.judge`` through ``result.judge_row``).
"""
from __future__ import annotations

import math
from typing import Tuple

from .metrics import SIGN_FLOOR, TensorMetrics
from .rows import _fmt, _s
from .tiny_values import CLOSE_WORDS


def guard_ratio(m: TensorMetrics, metric: str) -> Tuple[float, bool]:
    """``(ratio, tiny)``: the scale guard's L2 norm ratio over the positions ``metric``'s judged
    figure compares: if that is ``normal_<metric>`` (``tiny``), ‖x'‖/‖y‖, x' with float16's
    close subnormals as the golden's (``normal_norm_ratio``; H324's mobilenet: 0.4068x over
    every position, judged 1), else ``norm_ratio``. A compare.json written before
    ``normal_norm_ratio`` was gives it from their cosine c and rel_l2 d (d² = r² - 2rc + 1):
    the root within √(rel_l2² - d²) of ``norm_ratio``; where both roots are that near, the
    guard fell back to ``norm_ratio`` and failed a tensor its judged figure passed (a golden
    below 3.3e-7 beside one value of 9.5e-7, the device 0.3x: roots 0.987 and 0.999, every
    position 0.31x; A1's random-init YOLOv8n: 0.1497x beside a judged cosine of 0.998815)."""
    plain, c, d = m.norm_ratio, m.normal_cosine, m.normal_rel_l2
    normal = getattr(m, "normal_" + metric, None)
    if normal is None or m.value(metric) != normal:
        return plain, False
    if m.normal_norm_ratio is not None:
        return m.normal_norm_ratio, True
    if c is None or d is None:
        return plain, False
    near = math.sqrt(max(m.rel_l2 ** 2 - d * d, 0.0)) * (1 + 1e-7) + 1e-9
    wide = math.sqrt(max(c * c - 1.0 + d * d, 0.0))  # under 1e-6: a double root rounding split
    roots = {r for r in ((c,) if wide <= 1e-6 * max(c, 1.0) else (c - wide, c + wide))
             if r >= 0.0 and abs(r - plain) <= near}
    return (roots.pop(), True) if len(roots) == 1 else (plain, False)


def scale_reason(m: TensorMetrics, metric: str, tolerance: float) -> str:
    """Why a tensor meeting its threshold fails the scale guard, quoting the figures judged. A
    figure judged with float16's subnormal positions as equal, beside a ratio over every
    position, says so: "the cosine judged, 0.998815, is blind to scale; msaccucmp's cosine
    0.044796" read as though scale-blindness had made the cosine high (a random-init YOLOv8n,
    whose maps float16 flushed: the allowance had)."""
    judged, plain = m.value(metric), getattr(m, metric)
    ratio, tiny = guard_ratio(m, metric)
    figure = _fmt(judged) if metric == "cosine" else f"{judged:.6g}"  # 3e-8 too
    allowed = _fmt(judged) != _fmt(plain)  # the judged figure counts float16's subnormals equal
    what = f"the cosine judged, {figure}," if metric == "cosine" else f"{metric} {figure}"
    if allowed and not tiny:  # the ratio is over every position: where the judged figure came from
        what += (f" counts the {m.tiny_equal} position{_s(m.tiny_equal)} below float16's smallest"
                 f" normal on both sides, {CLOSE_WORDS}, as equal and")
    what += " is blind to scale" if metric == "cosine" else " meets its threshold"
    if allowed:
        what += f"; msaccucmp's {metric} {_fmt(plain)}"
    over = (f" with the {m.tiny_equal} position{_s(m.tiny_equal)} the {metric} judged counts as "
            f"equal (every position: {m.norm_ratio:.4g}x)" if tiny else "")
    return (f"scale: L2 norm {ratio:.4g}x the golden's{over}, outside {1 / tolerance:.3g}-"
            f"{tolerance:g}x ({what}; scale_tolerance= tunes this, --scale-tolerance on the "
            "command line)")


def one_subnormal_value(m) -> bool:
    """One value (a one-element tensor, a batch's sample) below float16's smallest normal on
    both sides, where float16 holds it to a bit or two or flushes it to 0: the ratio of the
    two is no scale (a tensor of many such values scaled alike still fails: a fault; audit 36
    D: a boundary probability of 2.98e-08 against the device's 1.19e-07, or 8.9e-08 against
    0, failed the scale guard at cosine 1.000000, alone and as a batch's sample)."""
    return (m.size == 1 and m.max_abs_golden is not None and m.max_abs_actual is not None
            and abs(m.max_abs_golden) < SIGN_FLOOR and abs(m.max_abs_actual) < SIGN_FLOOR)

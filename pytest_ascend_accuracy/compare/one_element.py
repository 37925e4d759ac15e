"""A one-element tensor judged by a cosine threshold.

Cosine tells only the sign of a one-element tensor (msaccucmp prints 1 for any two values of
one sign), and the scale guard lets its value move by up to 2x: silero-vad's one output, the
speech probability, 1.8x off (0.00164 against 0.00091) passed ``threshold=0.99`` (H110). Such a
tensor is judged instead by its relative error against the error the cosine threshold allows a
tensor of many elements: an error at right angles to the golden, of relative size r, gives
cosine 1/sqrt(1 + r^2), so threshold T allows r = sqrt(1/T^2 - 1) (0.142 at 0.99, 0.329 at
0.95). Values below float16's smallest normal on both sides are noise, as their sign is
(``metrics.SIGN_FLOOR``), and pass. A tensor of one value per sample along a known batch axis
(``graph.batch_axis``) is judged sample by sample, each as this rule judges it alone
(``batch_samples``): a batch of two Smart Turn clips passed at cosine 0.9996 a probability that
doubled, which the clip alone fails (audit 35); its fix is the threshold its largest relative
error needs (``fix_threshold``). A tensor whose first axis is not known to be the batch's
(``[50, 1, 1]``: a seq-first model's frames, review RB) keeps its cosine.
"""
from __future__ import annotations

import json
import math
import shlex
from typing import Mapping, Optional, Sequence, Tuple

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
    bound = allowed_error(thr.value)
    error, what = m.value("rel_l2"), "cosine tells only its sign; its relative error"
    if not error > bound:
        return ""
    return (f"{ONE_ELEMENT} {what} {error:.4g} is over the {bound:.4g} that cosine >= "
            f"{threshold_text(thr.value)} allows (an error of that size at right angles to a "
            f"golden of many elements gives that cosine); "
            + per_op_fix(fix_threshold(m), (op,)))


def fix_threshold(m: TensorMetrics) -> str:
    """The cosine threshold (its text, 6 decimals rounded down) that passes a tensor failing
    by ``one_element_failure``: the one its relative error needs (a batch's samples,
    ``batch_samples``: its largest, which passes every sample). Its cosine meets it: it met
    the threshold the error failed, which is above this one."""
    if m.samples is not None:
        from .sample_errors import largest_error

        error = largest_error(m.samples)[1]
        if error == error:  # (NaN: no sample the rule judges, none failed by it)
            return threshold_text(passing_threshold(error))
    return threshold_text(passing_threshold(m.value("rel_l2")))


#: where a one-element failure's reason gives its fix (``per_op_fix``)
FIX_AT = "; a cosine threshold of "


def per_op_fix(lower: str, ops: Sequence[str], entries: Optional[Mapping[str, object]] = None,
               others: Sequence[Tuple[str, str]] = ()) -> str:
    """The fix of a one-element failure whose passing cosine threshold is ``lower`` (its text):
    a per_op entry at ``lower`` for each of ``ops`` (the failing op, then those failing by the
    same error: one paste passes them all, ``report.one_element_groups``), and for each of
    ``others`` (``(op, its threshold's text)``: the other one-element failures of the check, at
    their own thresholds: pasted once, the fix passes every one of them, audit 35 section 6),
    spelled for a test, a YAML suite and the command line (``--per-op`` adds to the command's
    own); ``entries``: the whole ``per_op`` to paste in a test or suite (the check's own entries
    with these), default ``{op: lower}`` for each of ``ops`` and ``others``' own."""
    if not float(lower) > 0.0:
        return "no cosine threshold above 0 passes it"
    others = [(op, text) for op, text in others if op not in ops and float(text) > 0.0]
    if entries is None:
        entries = {**{op: float(lower) for op in ops},
                   **{op: float(text) for op, text in others}}
    from ..core.yaml_text import yaml_flow_map

    python = ", ".join(f"{json.dumps(k)}: {_python(v)}" for k, v in entries.items())
    cli = " ".join(f"--per-op {shlex.quote(f'{op}={text}')}"
                   for op, text in [(op, lower) for op in ops] + others)
    same = ", ".join(ops[1:])
    which = (f"this op and {same}, which fail{'s' if len(ops) == 2 else ''} by the same "
             "relative error, passes them" if same else "this op passes it")
    if others:
        n, many = len(ops) + len(others), len(others) > 1
        which += (f"; with the other one-element op{'s' if many else ''} that "
                  f"fail{'' if many else 's'} at {'their' if many else 'its'} own "
                  f"({', '.join(f'{op} {text}' for op, text in others)}), one paste "
                  f"passes all {n}")
    return (f"a cosine threshold of {lower} for {which}: per_op={{{python}}} in a test (YAML: "
            f"per_op: {yaml_flow_map(entries)}), {cli} on the command line")


def _python(value) -> str:
    """A per_op value as Python: a number, or ``{"metric": number}``."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(k)}: {threshold_text(v)}"
                               for k, v in value.items()) + "}"
    return threshold_text(value)

"""One paste for every one-element tensor that fails by the same value.

A one-element tensor is judged by its relative error (``compare.one_element``), and its failure
gives the per_op threshold that passes it. Where ``Identity`` nodes copy a one-element output
(silero_vad.onnx's speech probability: ``If_0``'s output, copied by ``Introduce_0_id0``), each
copy fails by the same error: pasting ``per_op={"If_0": 0.997592}`` failed the check again at
``Introduce_0_id0``, with the same one-element hint for it alone (an audit); ``(x - 1000) * 2``
failed at the Mul after the Sub's entry was pasted (the same relative error). ``grouped`` gives
each such failure the fix for all of them at once: one entry per op that the same threshold
passes, after the check's own per_op entries (pasted over them, they are kept), for a test, a
YAML suite and the command line.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, List

from ..compare.one_element import FIX_AT, ONE_ELEMENT, passing_threshold, per_op_fix
from ..compare.thresholds import threshold_text


def _lower(f) -> str:
    """The cosine threshold (its text) that passes one-element failure ``f``."""
    return threshold_text(passing_threshold(f.row.metrics.value("rel_l2")))


def grouped(verdict, rows=()):
    """``verdict`` with each one-element failure's fix naming every failing one-element op
    that the same threshold passes (a copy of its value, or a multiple: the same relative
    error), keyed as the check's per_op would name them (``tiny_float32.per_op_key``, given the
    compared ``rows``: an op with other outputs by its tensor), with the check's own entries;
    the verdict itself where no failure is one-element."""
    from ..compare.result import tensor_keyed
    from .tiny_float32 import per_op_key, with_own_entries

    ones = [f for f in verdict.failures
            if f.reason.startswith(ONE_ELEMENT) and FIX_AT in f.reason and f.row.metrics]
    if not ones:
        return verdict
    alike: Dict[str, List] = {}
    for f in ones:
        alike.setdefault(_lower(f), []).append(f)
    keyed = tensor_keyed(rows)
    fixed = {}
    for f in ones:
        lower = _lower(f)
        ops = list(dict.fromkeys(per_op_key(verdict, g.row, keyed)
                                 for g in [f] + [g for g in alike[lower] if g is not f]))
        entries = with_own_entries(verdict, {op: float(lower) for op in ops})
        head = f.reason[:f.reason.index(FIX_AT) + 2]
        fixed[id(f)] = replace(f, reason=head + per_op_fix(lower, ops, entries))
    return replace(verdict, failures=tuple(fixed.get(id(f), f) for f in verdict.failures))

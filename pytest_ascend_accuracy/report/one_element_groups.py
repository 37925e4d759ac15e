"""One paste for every one-element tensor that fails by the same value.

A one-element tensor is judged by its relative error (``compare.one_element``), and its failure
gives the per_op threshold that passes it. Where ``Identity`` nodes copy a one-element output
(silero_vad.onnx's speech probability: ``If_0``'s output, copied by ``Introduce_0_id0``), each
copy fails by the same error: pasting ``per_op={"If_0": 0.997592}`` failed the check again at
``Introduce_0_id0``, with the same one-element hint for it alone (an audit); ``(x - 1000) * 2``
failed at the Mul after the Sub's entry was pasted (the same relative error). ``grouped`` gives
each such failure the fix for all of them at once: one entry per op that the same threshold
passes, after the check's own per_op entries (pasted over them, they are kept), for a test, a
YAML suite and the command line. The fix carries the check's other one-element failures too, each
at its own threshold: Smart Turn's clip ``cut`` failed at three one-element ops (its last
MatMul, its DequantizeLinear and the Sigmoid, the model's output) and the fix named the first
alone; pasted, the next run offered the Sigmoid's entry (audit 35, section 6). One paste passes
them all now.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, List

from ..compare.one_element import FIX_AT, ONE_ELEMENT, fix_threshold, per_op_fix


def _lower(f) -> str:
    """The cosine threshold (its text) that passes one-element failure ``f``."""
    return fix_threshold(f.row.metrics)


def grouped(verdict, rows=()):
    """``verdict`` with each one-element failure's fix naming every failing one-element op
    that the same threshold passes (a copy of its value, or a multiple: the same relative
    error), then every other failing one-element op at its own threshold, keyed as the
    check's per_op would name them (``tiny_float32.per_op_key``, given the compared ``rows``:
    an op with other outputs by its tensor), with the check's own entries;
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
    keys = {id(f): per_op_key(verdict, f.row, keyed) for f in ones}
    fixed = {}
    for f in ones:
        lower = _lower(f)
        ops = list(dict.fromkeys(keys[id(g)]
                                 for g in [f] + [g for g in alike[lower] if g is not f]))
        others = list(dict.fromkeys((keys[id(g)], _lower(g)) for g in ones
                                    if keys[id(g)] not in ops))
        entries = with_own_entries(verdict, {**{op: float(lower) for op in ops},
                                             **{op: float(text) for op, text in others}})
        head = f.reason[:f.reason.index(FIX_AT) + 2]
        fixed[id(f)] = replace(f, reason=head + per_op_fix(lower, ops, entries, others))
    return replace(verdict, failures=tuple(fixed.get(id(f), f) for f in verdict.failures))

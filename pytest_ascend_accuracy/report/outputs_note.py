"""A failure whose values never reach the model's outputs says so.

onnx_asr's whisper front-end floors its log-mel at ``max - 8`` right after its ``Log``: the
device's -Inf (a ``Clip(min=1e-10)`` floor float16 flushes to 0) never reaches ``features``, which
matched the golden at cosine 1.000000, yet every realistic input failed "2 of 18 tensors" at
the Log with nothing saying the output was right (audit 33). The check still fails, as the
first op below the threshold is what it names; the line says which outputs pass their threshold
and by how much (rel_l2 beside the judged metric: a failure that only rescales an output passes
its cosine, a review), so a reader can weigh an intermediate failure against what it hands on.
"""
from __future__ import annotations

from typing import List


def outputs_lines(result, verdict, num) -> List[str]:
    """``["model outputs: y (cosine 1.000000; rel_l2 0.000412) passes its threshold; the check
    fails at ops before it"]`` where
    every compared row of a node producing a graph output (the golden's ``output_nodes``)
    passes and some other tensor fails; [] otherwise. It says what was measured, not that the
    failure does not reach them (a review: a failure that only rescales the output passes its
    cosine, 5.7% off). ``num``: the failure block's number format."""
    meta = result.meta.get("golden") if isinstance(result.meta, dict) else None
    outputs = {str(n) for n in (meta or {}).get("output_nodes", ()) or ()}
    if not outputs or verdict.passed:
        return []
    rows = [r for r in result.compared_rows if r.metrics is not None
            and outputs & {r.golden_name, *r.original_names}
            and not verdict.policy.is_ignored(r.names)]
    failing = {id(f.row) for f in verdict.failures}
    if not rows or any(id(r) in failing for r in rows):
        return []
    named = {(str(v[0]), f"output:{v[1]}"): str(t)
             for t, v in ((meta or {}).get("output_tensors") or {}).items()}
    shown = ", ".join(f"{r.label} ({_output_name(r, named)}{_figures(r, verdict.policy, num)})"
                      for r in rows[:4])
    more = f" and {len(rows) - 4} more" if len(rows) > 4 else ""
    one = len(rows) == 1 and not more
    return [f"model outputs: {shown}{more} pass{'es its' if one else ' their'} threshold"
            f"{'' if one else 's'}; the check fails at ops before {'it' if one else 'them'}"]


def _output_name(row, named) -> str:
    """``"output dense_6: "`` where the model names the output ``row`` compares otherwise than
    its op (keras2onnx's ``Add1`` makes ``dense_6``: an audit wrote per_op on ``dense_6``, the
    MatMul, reading the line's ``Add1`` as another op), else ""."""
    tensor = named.get((row.golden_name, row.golden_slot))
    return f"output {tensor}: " if tensor and tensor != row.golden_name else ""


def _figures(row, policy, num) -> str:
    """The row's judged metric (its own per_op entry's, where one judges it) and rel_l2."""
    metric = policy.threshold_for(row.names).metric
    said = f"{metric} {num(row.metrics.value(metric))}"
    if metric != "rel_l2" and "rel_l2" not in row.metrics.not_applicable:
        said += f"; rel_l2 {num(row.metrics.value('rel_l2'))}"
    return said


__all__ = ["outputs_lines"]

"""A failure whose values never reach the model's outputs says so.

onnx_asr's whisper front-end floors its log-mel at ``max - 8`` right after its ``Log``: the
device's -Inf (a ``Clip(min=1e-10)`` floor float16 flushes to 0) never reaches ``features``, which
matched the golden at cosine 1.000000, yet every realistic input failed "2 of 18 tensors" at
the Log with nothing saying the output was right (audit 33). The check still fails, as the
first op below the threshold is what it names; the line says which outputs pass and by how much,
so a reader can tell an intermediate failure the model absorbs from one it hands on.
"""
from __future__ import annotations

from typing import List


def outputs_lines(result, verdict, num) -> List[str]:
    """``["model outputs: y passes (cosine 1.000000): the failing values do not reach it"]``
    where every compared row of a node producing a graph output (the golden's
    ``output_nodes``) passes and some other tensor fails; [] otherwise. ``num``: the failure
    block's number format."""
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
    metric = verdict.policy.default.metric
    shown = ", ".join(f"{r.label} ({metric} {num(r.metrics.value(metric))})" for r in rows[:4])
    more = f" and {len(rows) - 4} more" if len(rows) > 4 else ""
    one = len(rows) == 1
    return [f"model outputs: {shown}{more} pass{'es' if one else ''}: the failing values do "
            f"not reach {'it' if one else 'them'}"]


__all__ = ["outputs_lines"]

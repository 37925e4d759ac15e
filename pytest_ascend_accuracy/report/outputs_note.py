"""A failure whose values never reach the model's outputs says so.

onnx_asr's whisper front-end floors its log-mel at ``max - 8`` right after its ``Log``: the
device's -Inf (a ``Clip(min=1e-10)`` floor float16 flushes to 0) never reaches ``features``, which
matched the golden at cosine 1.000000, yet every realistic input failed "2 of 18 tensors" at
the Log with nothing saying the output was right (audit 33). The check still fails, as the
first op below the threshold is what it names; the line says which outputs pass their threshold
and by how much (rel_l2 beside the judged metric: a failure that only rescales an output passes
its cosine, a review), so a reader can weigh an intermediate failure against what it hands on.
Where an output fails, the line says so with its figure: Smart Turn's only output, the
end-of-turn probability, 0.114 against the device's 0.221, failed by the one-element rule and the
block had no line about it, its one-element rows last in a list sorted by cosine (audit 35,
section 6): ``model outputs: node_sigmoid (output logits: one element 0.1142 -> 0.2208, relative
error 0.933) FAILS``. An output failed by another rule than its judged figure (NaN or Inf on one
side, integer values that differ, a scale off) gives the reason beside it: "cosine 1.000000 ...
FAILS" alone read as a contradiction (review RB4 of audit 35).
"""
from __future__ import annotations

from typing import List


def outputs_lines(result, verdict, num) -> List[str]:
    """``["model outputs: y (cosine 1.000000; rel_l2 0.000412) passes its threshold; the check
    fails at ops before it"]`` where
    every compared row of a node producing a graph output (the golden's ``output_nodes``)
    passes and some other tensor fails; where one fails, each output's figure with ``FAILS``
    or ``passes`` (``["model outputs: y (cosine 0.801234; rel_l2 0.603202) FAILS"]``); [] where
    the check passes or no output was compared. It says what was measured, not that the
    failure does not reach them (a review: a failure that only rescales the output passes its
    cosine, 5.7% off). ``num``: the failure block's number format."""
    meta = result.meta.get("golden") if isinstance(result.meta, dict) else None
    outputs = {str(n) for n in (meta or {}).get("output_nodes", ()) or ()}
    if not outputs or verdict.passed:
        return []
    rows = [r for r in result.compared_rows if r.metrics is not None
            and outputs & {r.golden_name, *r.original_names}
            and not verdict.policy.is_ignored(r.names)]
    failing = {id(f.row): f for f in verdict.failures}
    if not rows:
        return []
    named = {(str(v[0]), f"output:{v[1]}"): str(t)
             for t, v in ((meta or {}).get("output_tensors") or {}).items()}
    more = f" and {len(rows) - 4} more" if len(rows) > 4 else ""
    if any(id(r) in failing for r in rows):
        shown = ", ".join(f"{r.label} ({_output_name(r, named)}"
                          + (f"{_failed_figures(failing[id(r)], verdict.policy, num)}) FAILS"
                             if id(r) in failing else
                             f"{_figures(r, verdict.policy, num)}) passes")
                          for r in sorted(rows, key=lambda r: id(r) not in failing)[:4])
        return [f"model outputs: {shown}{more}"]
    shown = ", ".join(f"{r.label} ({_output_name(r, named)}{_figures(r, verdict.policy, num)})"
                      for r in rows[:4])
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


def _failed_figures(failure, policy, num) -> str:
    """A failing output's figure: a one-element one's values, golden -> device, and relative
    error; else as ``_figures``."""
    from ..compare.one_element import ONE_ELEMENT

    m = failure.row.metrics
    if m is None:
        return failure.reason
    from ..compare.batch_samples import failed_sample_figures

    if failed_sample_figures(failure):  # a batch's sample, by its index and values
        return failed_sample_figures(failure)
    if failure.reason.startswith(ONE_ELEMENT) and m.size == 1:
        golden, actual = _signed(m)
        return (f"one element {golden} -> {actual}, relative error "
                f"{m.value('rel_l2'):.3g}")
    figures = _figures(failure.row, policy, num)
    if m.mismatch or m.exact or failure.threshold.passed(failure.value) or \
            failure.value != failure.value:  # failed by another rule than its figure
        return f"{figures}: {failure.reason}"
    return figures


def _signed(m):
    """A one-element pair's (golden, actual) values as text: their magnitudes, signed by the
    means the metrics keep (``std``: ``"(mean_x;std_x),(mean_y;std_y)"``, 0 under 0.001) or,
    where one reads 0, by the other's and the cosine (1: one sign, -1: opposite); ``|v|`` where
    neither tells."""
    means = [part.strip("()").split(";")[0] for part in str(m.std).split("),(")]
    signs = [None, None]
    if len(means) == 2:
        for i, text in enumerate(means):
            if text.lstrip("-").strip("0.") and text.lower() != "nan":
                signs[i] = -1.0 if text.startswith("-") else 1.0
    flip = {1.0: 1.0, -1.0: -1.0}.get(m.cosine)
    for i in (0, 1):
        if signs[i] is None and signs[1 - i] is not None and flip is not None:
            signs[i] = signs[1 - i] * flip
    actual, golden = ((f"{s * v:.4g}" if s is not None else f"|{v:.4g}|")
                      for s, v in zip(signs, (m.max_abs_actual, m.max_abs_golden)))
    return golden, actual


__all__ = ["outputs_lines"]

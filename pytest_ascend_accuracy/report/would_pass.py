"""The "threshold that would pass" of a failure block's first failing op, and of the check.

The block printed the loosest threshold passing its first failing op. Audit 33 (PP-OCRv6 rec at
0.99999) pasted it, 0.999989, and the test failed again at the next op (0.9999888): 93 other
tensors failed, the lowest at 0.999956. Where other tensors fail, the figure says it is this
op's, and gives the check's too (``Verdict.passing_threshold``: the loosest default threshold
passing every failure, each one a miss of that threshold by its value alone, within the scale
guard); else it names a failure no threshold alone passes (a review: another op off the scale
guard, or judged by a per_op entry, made the check's figure fail pasted).
"""
from __future__ import annotations

from typing import Callable


def would_pass_text(f, verdict, num: Callable[[float], str],
                    reason: Callable[[object], str]) -> str:
    """``threshold that would pass: X`` for ``f`` (a ``Failure`` with a ``would_pass``), or
    where ``verdict`` holds other failures, ``threshold that would pass this op: X; the check:
    Y`` or ``...; no threshold alone passes the check (OP: REASON)`` (``reason``: a failure's
    short reason, as the block's table gives it); then, for a max_abs threshold within a few
    float16 steps of the golden's largest value, how many (``float16_steps_note``)."""
    return _threshold_text(f, verdict, num, reason) + float16_steps_note(f)


def float16_steps_note(f) -> str:
    """``; 0.5 is 2 float16 steps at |golden| up to 316.2 (step 0.25): ...`` where ``f`` fails
    a max_abs threshold of at most 4 steps of float16 at its golden's largest value, else "".
    NudeNet's boxes "within 0.5 px" (audit 34): values near 316, where float16's step is 0.25,
    failed by 0.956 on one photo and passed by 0.471 on an equally plausible float16 run; the
    block never said the threshold was float16's own resolution there."""
    import math

    m = f.row.metrics
    peak = getattr(m, "max_abs_golden", None) if m is not None else None
    if (f.threshold.metric != "max_abs" or not peak or not math.isfinite(peak)
            or peak < 2.0 ** -14 or peak > 65504):
        return ""
    step = 2.0 ** (math.floor(math.log2(peak)) - 10)
    steps = f.threshold.value / step
    if steps > 4:
        return ""
    return (f"; {f.threshold.value:g} is {steps:.3g} float16 step{'s' if steps != 1 else ''} at "
            f"|golden| up to {peak:.4g} (step {step:g}): float16 rounding alone moves such "
            f"values by up to half a step, and the order of a float16 sum by more, so whether "
            f"a float16 run meets it depends on rounding, not on the conversion: allow more, or "
            f"keep the ops computing these values in float32")


def rekeyed_per_op(verdict, key: str, maker: str) -> str:
    """The check's whole per_op as written (``compare.thresholds.written_per_op``) with ``key``
    keyed ``maker`` (a glob kept, ``maker`` put before it), in a test's, a YAML suite's and the
    shell's spelling (a final review: the note's lone ``per_op={'Add1': ...}``, pasted,
    dropped the check's other entries, and was Python in a YAML suite)."""
    from ..compare.thresholds import per_op_flags, per_op_python, written_per_op
    from ..core.yaml_text import yaml_flow_map

    entries = {}
    for name, value in written_per_op(verdict.policy).items():
        if name == key:
            entries[maker] = value
            if not any(c in key for c in "*?["):
                continue
        entries[name] = value
    return (f"per_op={{{per_op_python(entries)}}} (YAML: per_op: {yaml_flow_map(entries)}; "
            f"shell: {per_op_flags(entries)})")


def _threshold_text(f, verdict, num, reason) -> str:
    others = [g for g in getattr(verdict, "failures", ()) if g is not f]
    if not others:
        return f"threshold that would pass: {num(f.would_pass)}"
    mine = f"threshold that would pass this op: {num(f.would_pass)}"
    key = verdict.policy.threshold_key(f.row.names)
    if key is not None:  # its own per_op entry, which a glob may give other failing ops too
        return mine + _entry_text(f, key, others, verdict, num)
    check = verdict.passing_threshold
    if check is None or not f.threshold.advisable(check):  # (-1: a tensor pointing away)
        g = next((g for g in others if _blocks(g, verdict)), others[0])
        return (f"{mine}; no threshold alone passes the check ({g.row.label}: "
                f"{_why(g, verdict, reason)})")
    if num(check) == num(f.would_pass):  # the op's figure passes every failing tensor too
        return f"threshold that would pass: {num(check)}"
    return f"{mine}; the check: {num(check)}"


def _entry_text(f, key: str, others, verdict, num) -> str:
    """Where ``f``'s per_op entry ``key`` (a glob) judges other failing ops too: the figure
    that entry passes them all at, or that none does (audit 36 A: ``'p2o.Transpose.*':
    {max_abs: 0.01}`` failed four ops, and the one figure printed, pasted into the glob, still
    failed three of them); "" where it judges no other."""
    same = [g for g in others if verdict.policy.threshold_key(g.row.names) == key]
    if not same:
        return ""
    figures = [g.would_pass for g in [f] + same]
    metrics = {g.threshold.metric for g in [f] + same}
    if any(v is None for v in figures) or len(metrics) > 1:
        return f"; no figure for per_op {key!r} alone passes the {len(same) + 1} ops it judges"
    loosest = (min if f.threshold.higher_is_better else max)(figures)
    return f"; per_op {key!r}, judging {len(same) + 1} failing ops: {num(loosest)}"


def _blocks(g, verdict) -> bool:
    """Whether ``g`` is a failure no default threshold passes (``passing_threshold``'s test)."""
    from ..compare.scale_guard import guard_ratio

    m = g.row.metrics
    return (not g.fixable or verdict.policy.threshold_key(g.row.names) is not None
            or not g.threshold.advisable(g.would_pass)
            or (m is not None and not m.golden_zero
                and verdict.policy.off_scale(guard_ratio(m, g.threshold.metric)[0])))


def _why(g, verdict, reason) -> str:
    if verdict.policy.threshold_key(g.row.names) is not None:
        return "judged by its own per_op threshold"
    if g.fixable and not g.threshold.advisable(g.would_pass):
        return "it points away from the golden's, which no threshold above 0 passes"
    if g.fixable:
        return "outside the scale guard too"
    return reason(g)


__all__ = ["rekeyed_per_op", "would_pass_text"]

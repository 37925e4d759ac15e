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
    short reason, as the block's table gives it)."""
    others = [g for g in getattr(verdict, "failures", ()) if g is not f]
    if not others:
        return f"threshold that would pass: {num(f.would_pass)}"
    mine = f"threshold that would pass this op: {num(f.would_pass)}"
    if verdict.policy.threshold_key(f.row.names) is not None:  # its own per_op entry
        return mine
    check = verdict.passing_threshold
    if check is None or not f.threshold.advisable(check):  # (-1: a tensor pointing away)
        g = next((g for g in others if _blocks(g, verdict)), others[0])
        return (f"{mine}; no threshold alone passes the check ({g.row.label}: "
                f"{_why(g, verdict, reason)})")
    if num(check) == num(f.would_pass):  # the op's figure passes every failing tensor too
        return f"threshold that would pass: {num(check)}"
    return f"{mine}; the check: {num(check)}"


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


__all__ = ["would_pass_text"]

"""The "threshold that would pass" of a failure block's first failing op, and of the check.

The block printed the loosest threshold passing its first failing op. Audit 33 (PP-OCRv6 rec at
0.99999) pasted it, 0.999989, and the test failed again at the next op (0.9999888): 93 other
tensors failed, the lowest at 0.999956. Where other tensors fail, the figure says it is this
op's, and gives the check's too: the loosest threshold passing every failing tensor, where each
fails the same threshold by its value alone; else that no threshold passes the check.
"""
from __future__ import annotations

from typing import Callable, Sequence


def would_pass_text(f, failures: Sequence, num: Callable[[float], str]) -> str:
    """``threshold that would pass: X`` for ``f`` (a ``Failure`` with a ``would_pass``), or
    where ``failures`` (the verdict's) hold others, ``threshold that would pass this op: X; the
    check: Y`` or ``...; no threshold alone passes the check: N other failures fail otherwise (...)``."""
    others = [g for g in failures if g is not f]
    if not others:
        return f"threshold that would pass: {num(f.would_pass)}"
    thr = f.threshold
    by_value = [g.would_pass for g in others if g.threshold is thr and g.would_pass is not None
                and thr.advisable(g.would_pass)]
    mine = f"threshold that would pass this op: {num(f.would_pass)}"
    if len(by_value) < len(others):
        n = len(others) - len(by_value)
        return (f"{mine}; no threshold alone passes the check: {n} other failure"
                f"{'s fail' if n != 1 else ' fails'} otherwise (NaN/Inf, a per_op threshold, "
                f"the scale guard or an op not compared)")
    pick = min if thr.higher_is_better else max
    check = num(pick([f.would_pass, *by_value]))
    if check == num(f.would_pass):  # the op's figure passes every failing tensor too
        return f"threshold that would pass: {check}"
    return f"{mine}; the check: {check}"


__all__ = ["would_pass_text"]

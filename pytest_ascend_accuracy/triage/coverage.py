"""A failure on coverage, not accuracy (``triage.flow``): every failing row of the first run is an
op "not compared" (no golden tensor for it), so every compared tensor met the threshold. No
conversion mode changes which tensors the golden holds: the flow stops at once and says so, with
the check's own remedy (ignore the ops, or a golden that holds their outputs). It went through
four conversions and then said "check the operator implementations against the reference" of
ops nothing had been compared for (audit H110).

A failure that mixes such ops with value failures is diagnosed with them set aside
(``set_aside``): they fail under every mode, so no mode could pass and the flow ended "no
conversion mode restores accuracy" where keep_dtype fixed every value failure (F6). The modes
are judged as if they were ignored, and the verdict says so and gives the same remedy, to paste
beside the fix (``aside_note``)."""
from __future__ import annotations

from dataclasses import replace
from typing import List, Optional, Sequence

from ..compare.result import NOT_COMPARED, Verdict
from ..compare.thresholds import Policy
from ..report.ignore_spelling import ignore_flags, ignore_spelled, not_compared_ops
from .result import PLUGIN_BUDGET_OPTION


def uncompared(verdict: Verdict) -> List[str]:
    """The ops of ``verdict``'s failures where every one of them is not compared (each op
    once, in graph order); [] where it passed, failed as a whole, or a value failed."""
    if not all(f.reason.startswith(NOT_COMPARED) for f in verdict.failures):
        return []
    return set_aside(verdict)


def coverage_verdict(verdict: Verdict, budget_option: str) -> Optional[str]:
    """The diagnosis's verdict for a run that failed on coverage alone, else None; the remedy
    spelled for the caller (``budget_option`` tells the plugin's from the command's): the
    ignore list to paste (the check's own entries kept: a pasted list replaces them), or a
    golden that holds the ops' outputs."""
    hidden = uncompared(verdict)
    if not hidden:
        return None
    n = len(hidden)
    return (f"not diagnosed: the check failed on coverage, not accuracy: {n} op{_s(n)} not "
            f"compared ({_shown_why(verdict, hidden)}), and every tensor judged meets its "
            f"threshold; no conversion mode changes which tensors the golden holds, so none was "
            f"tried. To accept {'it' if n == 1 else 'them'} unchecked, ignore "
            f"{'it' if n == 1 else 'them'}: {_accept(verdict, hidden, budget_option)}; or compare "
            f"with a golden that holds {'its' if n == 1 else 'their'} outputs")


def set_aside(verdict: Verdict) -> List[str]:
    """The not-compared ops of a failure that has value failures too (each once, in graph
    order): the flow judges the modes without them (``aside_policy``); [] where there are none,
    or the verdict failed as a whole."""
    if verdict.passed or verdict.problem:
        return []
    return not_compared_ops(verdict)


def aside_policy(policy: Policy, aside: Sequence[str]) -> Policy:
    """``policy`` with the ``aside`` ops ignored, as the remedy pasted ignores them."""
    return replace(policy, ignore=tuple(dict.fromkeys(list(policy.ignore) + list(aside))))


def ignore_to_paste(verdict: Verdict, aside: Sequence[str]) -> List[str]:
    """The ignore list a test pastes: the check's own entries (a pasted list replaces them),
    then ``aside``."""
    return list(dict.fromkeys(list(verdict.policy.ignore) + list(aside)))


def aside_note(verdict: Verdict, aside: Sequence[str], budget_option: str, fixed: bool) -> str:
    """What the verdict of a diagnosis that set ``aside`` ops aside adds (``verdict``: the
    first run's, as the check judged it): which ops, why, and the check's remedy for them,
    which the fix (``fixed``: one was found) needs beside it."""
    n = len(aside)
    it, they, was = ("it", "it is", "was") if n == 1 else ("them", "they are", "were")
    return (f"; {n} op{_s(n)} not compared ({_shown_why(verdict, aside)}) {was} set aside: "
            f"{'it fails' if n == 1 else 'they fail'} by coverage, not accuracy, which "
            f"no conversion mode changes, so each mode was judged without {it}; the check fails "
            f"on {it} under any mode until {they} ignored"
            f"{', so paste this beside the fix' if fixed else ''}: "
            f"{_accept(verdict, aside, budget_option)}; or compare with a golden that holds "
            f"{'its' if n == 1 else 'their'} outputs")


def _shown_why(verdict: Verdict, ops: Sequence[str]) -> str:
    """``a, b: why`` of the not-compared ops ``ops``, six named at most."""
    from ..report.failure_kinds import naming_reason

    first = next(f for f in verdict.failures if f.reason.startswith(NOT_COMPARED))
    why = (naming_reason(verdict) or first.reason[len(NOT_COMPARED):].lstrip(": ")
           or "no golden tensor")
    n = len(ops)
    return ", ".join(ops[:6]) + (f", ... ({n} in all)" if n > 6 else "") + f": {why}"


def _accept(verdict: Verdict, ops: Sequence[str], budget_option: str) -> str:
    """The remedy that ignores ``ops``, spelled for the caller: the plugin's ignore list (the
    check's own entries kept), or the command's --ignore words."""
    names = ignore_to_paste(verdict, ops)
    if budget_option == PLUGIN_BUDGET_OPTION:
        return ignore_spelled(names)
    return f"add {ignore_flags(ops)} to the command (diagnose(..., ignore={names!r}) in Python)"


def _s(n: int) -> str:
    return "" if n == 1 else "s"

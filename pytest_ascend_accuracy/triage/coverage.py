"""A failure on coverage, not accuracy (``triage.flow``): every failing row of the first run is an
op "not compared" (no golden tensor for it), so every compared tensor met the threshold. No
conversion mode changes which tensors the golden holds: the flow stops at once and says so, with
the check's own remedy (ignore the ops, or a golden that holds their outputs). It went through
four conversions and then said "check the operator implementations against the reference" of
ops nothing had been compared for (audit H110)."""
from __future__ import annotations

import json
import shlex
from typing import List, Optional

from ..compare.result import NOT_COMPARED, Verdict
from .result import PLUGIN_BUDGET_OPTION


def uncompared(verdict: Verdict) -> List[str]:
    """The ops of ``verdict``'s failures where every one of them is not compared (each op
    once, in graph order); [] where it passed, failed as a whole, or a value failed."""
    if verdict.passed or verdict.problem or not verdict.failures:
        return []
    if not all(f.reason.startswith(NOT_COMPARED) for f in verdict.failures):
        return []
    return list(dict.fromkeys(f.row.op_name for f in verdict.failures))


def coverage_verdict(verdict: Verdict, budget_option: str) -> Optional[str]:
    """The diagnosis's verdict for a run that failed on coverage alone, else None; the remedy
    spelled for the caller (``budget_option`` tells the plugin's from the command's): the
    ignore list to paste (the check's own entries kept: a pasted list replaces them), or a
    golden that holds the ops' outputs."""
    from ..report.failure_kinds import naming_reason

    hidden = uncompared(verdict)
    if not hidden:
        return None
    first = next(f for f in verdict.failures if f.reason.startswith(NOT_COMPARED))
    why = (naming_reason(verdict) or first.reason[len(NOT_COMPARED):].lstrip(": ")
           or "no golden tensor")
    n = len(hidden)
    shown = ", ".join(hidden[:6]) + (f", ... ({n} in all)" if n > 6 else "")
    names = list(dict.fromkeys(list(verdict.policy.ignore) + hidden))
    if budget_option == PLUGIN_BUDGET_OPTION:
        accept = (f"@accuracy(ignore={names!r}) (YAML: ignore: "
                  f"[{', '.join(json.dumps(s) for s in names)}])")
    else:
        accept = (f"add {' '.join('--ignore ' + shlex.quote(s) for s in hidden)} to the "
                  f"command (diagnose(..., ignore={names!r}) in Python)")
    return (f"not diagnosed: the check failed on coverage, not accuracy: {n} op{_s(n)} not "
            f"compared ({shown}: {why}), and every tensor judged meets its threshold; no "
            f"conversion mode changes which tensors the golden holds, so none was tried. To "
            f"accept {'it' if n == 1 else 'them'} unchecked, ignore {'it' if n == 1 else 'them'}:"
            f" {accept}; or compare with a golden that holds {'its' if n == 1 else 'their'} "
            f"outputs")


def _s(n: int) -> str:
    return "" if n == 1 else "s"

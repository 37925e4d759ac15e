"""Step 4 of the debugging flow (fusion off), rule by rule: which of the fusion rules a
conversion applied must be switched off (``search_rules``), and which ops those rules fused
(``unfused``).

Switching every fusion rule off is a blunt fix (every fused op then runs on its own, slower);
the rules a conversion applied are searched instead, each try one conversion under the fix
found so far with fusion back on (``fix | Mode(fusion_rules_off=...)``): under the flow's own
mode when fusion off alone restores accuracy, and with the ``keep_dtype`` set (or high
precision) when fusion off needed it too (a BatchNorm variance past float16's range that only
shows once the BatchNorm is no longer folded into its Conv).

What a rule fuses comes from the om json of the two conversions (``ConvertedModel.om_json``,
the emulator's or ``atc --mode=1``'s): the groups of original ops fused into one device op in
the default conversion and not with the rules off.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from ..core.modes import Mode
from .runner import Evaluation, Runner, applied_rules
from .search import CountingPredicate, minimal_subset


def rules_off(fix: Mode, rules: Sequence[str], chosen) -> Mode:
    """``fix`` with the ``chosen`` ones of ``rules`` switched off (in ``rules``' order)."""
    return fix | Mode(fusion_rules_off=tuple(r for r in rules if r in chosen))


def search_rules(run: Runner, default: Evaluation, fix: Mode,
                 fix_passes_alone: bool) -> Tuple[List[str], List[str], int]:
    """(rules the default conversion applied, a 1-minimal set of them whose switching off
    under ``fix`` passes -- [] when none does, even all of them --, conversions tried).

    ``fix_passes_alone``: whether ``fix`` with every rule on passes (measured or known by the
    caller; the search starts from it). Raises ``BudgetExhausted`` when the budget runs out."""
    rules = applied_rules(run.backend, default.converted)
    if not rules:
        return rules, [], 0
    pred = CountingPredicate(lambda s: run.evaluate(rules_off(fix, rules, s),
                                                    keep_dump=False).passed)
    pred.know([], fix_passes_alone)
    if not pred(rules):
        return rules, [], pred.calls
    return rules, minimal_subset(rules, pred), pred.calls


def unfused(before, after) -> Optional[List[str]]:
    """The ops fused into one device op in conversion ``before`` and not in ``after``, each group
    as ``conv+bn+relu`` (first use order); None when a conversion has no om json to tell."""
    from ..errors import AscendAccuracyError

    paths = [getattr(c, "om_json", None) for c in (before, after)]
    if not all(paths):
        return None
    from ..dump.om_json import read_om_json

    try:
        fused_before, fused_after = (
            [tuple(op.original_names) for op in read_om_json(p).ops if len(op.original_names) > 1]
            for p in paths)
    except AscendAccuracyError:  # an unreadable om json: the caller says what changed instead
        return None
    kept = set(fused_after)
    return ["+".join(g) for g in dict.fromkeys(fused_before) if g not in kept]

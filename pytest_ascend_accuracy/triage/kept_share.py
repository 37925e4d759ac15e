"""A diagnosis whose fix keeps (nearly) every op in float32 says so, and what fails.

T2: torchvision Faster R-CNN's diagnosis ended ``RESTORED`` with a 953-op keep_dtype (957 from
the command, every op of the model), exit status 0: the whole network in float32 under
another name. Its first failure followed RPN TopKs whose differing indices only reorder near
ties (``report.after_selection``): every op after them compares by position, and only scores
made (nearly) exact, the ops before them kept, restore that order. So where the fix found keeps
at least ``NEARLY`` of the ops the default run's dump names (``MIN_OPS`` of them at least),
the verdict says how many of how many (``triage.report`` heads it ``RESTORED only by keeping N
of M ops in float32``), and names the selection where that is what fails, with the ignore
entries that judge the rest instead (``Diagnosis.ignore_instead``). Such a fix still passes
pasted: the command's exit status stays 0 (docs/cli.md), its text no longer reads as a float16
fix.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ..core.whole_model import MIN_OPS, NEARLY, nearly_all  # noqa: F401  (read here too)


def fix_keeps(keep: Sequence[str], fix_mode) -> tuple:
    """Every op the fix keeps: its mode's keep_dtype (the mode the diagnosis started from, a
    pasted hint's list, with ``keep``, what the search added) where it has one, else ``keep``.
    Audit 33: a CLI diagnosis starting from a 19-op list ended with all 20 ops kept, headed plain
    ``RESTORED``: only the one op it added was counted."""
    return tuple(dict.fromkeys((*(getattr(fix_mode, "keep_dtype", None) or ()), *keep)))


def kept_ops(keep: Sequence[str]) -> int:
    """How many ops ``keep`` names (its ``OpType::`` entries, which keep ops by type inside If
    branches, aside)."""
    from .branch_keep import is_type_entry

    return sum(1 for k in keep if not is_type_entry(k))


def with_whole_model(outcome: dict, runner, base) -> dict:
    """``outcome`` (``_Flow._walk``'s) with ``ops_total``, the ops the default run's dump names,
    and, where its keep_dtype fix keeps nearly all of them, its verdict saying so."""
    from .runner import framework_ops

    default = runner.memo.get(replace(base, label=None))
    if default is None:  # not even the first run finished (a budget of nothing)
        return outcome
    total = len(framework_ops(default)[0])
    keep = fix_keeps(outcome.get("keep_dtype") or (), outcome.get("fix_mode"))
    kept = kept_ops(keep)
    if not (outcome.get("restored_by") not in (None, "default") and keep
            and nearly_all(kept, total)):
        return {**outcome, "ops_total": total}
    note = (f"; that fix keeps {kept} of the {total} ops the run names in float32, the whole "
            f"model{'' if kept >= total else ', or nearly'}: it passes pasted, but the model "
            f"then runs in float32 wherever it matters, and no smaller set was found")
    cause, ignore = _selection_cause(default, runner)
    return {**outcome, "ops_total": total, "verdict": outcome["verdict"] + note + cause,
            "ignore_instead": ignore}


def _selection_cause(default, runner):
    """(What fails, where it is the order after TopKs whose differences are (near) ties, and
    the ignore entries of the ops after them; ("", ()) otherwise."""
    from ..report.after_selection import after_selection, first_names

    rows = default.result.rows
    found = after_selection(default.verdict, runner.golden, rows, runner.model)
    if found is None:
        return "", ()
    shown = first_names(found.selections)
    if found.itself:
        return (f"; what fails first is {shown}, whose indices are partly near ties (the same "
                f"elements within the device's own error, in another order: its row's note)",
                ())
    many = len(found.selections) > 1
    them = "them" if many else "it"
    return (f"; what fails is the order after {shown}, {'selections' if many else 'a selection'}"
            f" (TopK) whose differing indices all reorder ties or near ties: every op after "
            f"{them} compares by position, and keeping ops in float32 restores that only by "
            f"making the values ranked (nearly) exact; ignoring the {len(found.after)} ops after "
            f"{them} judges the rest instead"), found.entries

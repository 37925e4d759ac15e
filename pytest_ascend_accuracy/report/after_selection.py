"""The hint of a first failure after a selection whose order moved: a TopK whose differing
indices all only reorder ties or near ties (``compare.topk_near_ties``: the same elements
within the device's own error, listed in another order), or that TopK itself where only some
do.

T2: torchvision Faster R-CNN, calibrated, failed every mode after its RPN TopKs. Every op after
a selection compares its values position by position in the golden's order (a Gather of boxes
by its indices, the boxes' areas, the detections), so they fail with the order and not with
float16 rounding: the hint said "no op list is known to fix it", and ``--accuracy-diagnose``
kept all 953 ops in float32. What a user can do is judge the rest with those ops ignored, and
fix, apart, a float16 problem of their own among them: the RPN's box areas (up to 9.754e4)
overflow float16 at ``/roi_heads/box_roi_pool/Mul``, which the ignore hides. So the hint says
so plainly, gives the ``ignore`` entries (``after_entries``: the ops after the selections, a
``prefix/*`` pattern where every compared op under it is one) and, where ops after it leave
the float16 range, their own ``keep_dtype`` list, marked as not fixing the first failure.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

#: a TopK's indices row whose differences the compare forgave as (near) ties
ORDER_FLAGS = ("near_ties", "ties_reordered")
#: characters that make a name a glob pattern (``fnmatchcase``): no prefix of such a name
#: becomes a pattern
_GLOB = set("*?[]")


@dataclass(frozen=True)
class AfterSelection:
    """A first failure at or after selections whose order moved."""

    selections: Tuple[str, ...]  # the TopK rows' labels (``topk:output:1``)
    itself: bool  # the first failure is such a selection (some differences no near ties)
    after: Tuple[str, ...]  # the compared ops after them, model spelling, graph order
    entries: Tuple[str, ...]  # the ignore entries naming them (patterns where exact)
    failing: int  # failing rows among them
    elsewhere: Tuple[str, ...]  # failing ops not among them


def _reordered(row) -> bool:
    return (row.op_type.startswith("TopK") and row.slot == "output:1"
            and bool(set(ORDER_FLAGS) & set(row.flags)))


def after_selection(verdict, golden, rows: Sequence, model=None) -> Optional[AfterSelection]:
    """Whether ``verdict``'s first failure is a TopK whose indices are partly near ties, or an
    op after TopKs whose differing indices are all (near) ties (by the graph's edges: ``model``,
    else the golden's operand files); None where not, or where the edges are not known."""
    from ..compare.fp16_range import input_producers

    first = verdict.first
    if first is None or golden is None:
        return None
    row = first.row
    itself = _reordered(row) and "near_ties" in row.flags and bool(
        row.metrics is not None and row.metrics.unequal)
    chosen = [r for r in rows if _reordered(r) and (r is row or not (
        r.metrics is not None and r.metrics.unequal))]
    if not chosen or (not itself and _reordered(row)):
        return None
    producers = input_producers(golden, model)
    if producers is None:
        return None
    consumers: Dict[str, List[str]] = {}
    for op, fed_by in producers.items():
        for p in fed_by:
            consumers.setdefault(p, []).append(op)
    starts = [r.golden_name for r in chosen if r.golden_name]
    after, todo = set(), list(starts)
    while todo:
        for c in consumers.get(todo.pop(), ()):
            if c not in after:
                after.add(c)
                todo.append(c)
    if itself:
        after.add(row.golden_name)
    if not itself and not set(_framework(row)) & after:
        return None
    return _found(verdict, rows, chosen, itself, after)


def _framework(row) -> Tuple[str, ...]:
    """The model ops a row stands for: its original ops, else its golden op."""
    return tuple(row.original_names) or tuple(n for n in (row.golden_name,) if n)


def _found(verdict, rows, chosen, itself: bool, after: set) -> Optional[AfterSelection]:
    from .model_spelling import row_model_name

    mine, names = [], []
    for r in rows:
        own = [n for n in _framework(r) if n in after]
        if not own:
            continue
        mine.append(r)
        spelled = [n for n in r.original_names if n in after] or [row_model_name(r)]
        names.extend(n for n in spelled if n not in names)
    if not names:
        return None
    ids = {id(r) for r in mine}
    failing = [f for f in verdict.failures if id(f.row) in ids]
    elsewhere = list(dict.fromkeys(f.row.label for f in verdict.failures if id(f.row) not in ids))
    return AfterSelection(tuple(r.label for r in chosen), itself, tuple(names),
                          tuple(after_entries(names, [r for r in rows if id(r) not in ids])),
                          len(failing), tuple(elsewhere))


def after_entries(names: Sequence[str], others: Sequence) -> List[str]:
    """``names`` as ``ignore`` entries: the shortest ``prefix/*`` (``/roi_heads/*``) where no
    row of ``others`` (the compared rows not among them) has a name under that prefix, else the
    name itself, in ``names``' order."""
    taken = [n for r in others for n in r.names if n]
    out: List[str] = []
    for name in names:
        if any(_covers(e, name) for e in out):
            continue
        parts = name.split("/")
        entry = name
        for cut in range(2, len(parts)):
            prefix = "/".join(parts[:cut]) + "/"
            if _GLOB & set(prefix):
                break
            if not any(t.startswith(prefix) for t in taken):
                entry = prefix + "*"
                break
        out.append(entry)
    return out


def _covers(entry: str, name: str) -> bool:
    return entry == name or (entry.endswith("/*") and name.startswith(entry[:-1]))


def first_names(names: Sequence[str], limit: int = 3) -> str:
    """The first ``limit`` of ``names``, printable, then ``, ...`` where there are more."""
    from .printable import printable

    shown = ", ".join(printable(n) for n in names[:limit])
    return shown + (", ..." if len(names) > limit else "")


@dataclass(frozen=True)
class SelectionAdvice:
    """What ``hints.hint_for`` says where ``after_selection`` holds: ``reason``, ``advice`` and
    ``modes`` of its hint; at a selection itself, only ``lead``, said before the hint it
    would get."""

    reason: str = ""
    advice: str = ""
    modes: tuple = ()
    lead: str = ""


def selection_advice(verdict, golden, rows: Sequence, model, mode, ranges,
                     dump_kind: str) -> Optional[SelectionAdvice]:
    """The hint where ``after_selection`` holds, else None: after the selections, the
    ``ignore`` entries of what follows them, stating what that hides, and a ``keep_dtype`` list
    of the ops among them whose values leave the float16 range, marked as a float16 problem of
    their own; at a selection itself, what was found (its ``lead``)."""
    from .ignore_spelling import ignore_spelled

    found = after_selection(verdict, golden, rows, model)
    if found is None:
        return None
    if found.itself:
        return SelectionAdvice(lead=selection_lead(verdict))
    advice = (f"to judge the rest, ignore {ignored_what(found)}: "
              f"{ignore_spelled(found.entries)}; {hides(found)}")
    kept = kept_after(found, verdict, ranges, mode, dump_kind, rows)
    if kept is None:
        return SelectionAdvice(selection_reason(verdict, found), advice)
    advice += (f"; {apart_from_that(verdict, found, kept)}; keep "
               f"{'it' if len(kept[1]) == 1 else 'them'} in float32 beside the ignore")
    return SelectionAdvice(selection_reason(verdict, found), advice, (kept[0],))


#: what ignoring the ops after a selection hides (``sel``: "the selection(s)", ``them``)
HIDES = ("that hides every op after {sel} whatever its values, the model's outputs computed "
         "from {them} among them: judge those by what they mean in a check of your own (the same "
         "boxes matched by IoU, say)")


def hides(found: AfterSelection) -> str:
    """What ignoring the ops after the selections hides."""
    many = len(found.selections) > 1
    return HIDES.format(sel="the selections" if many else "the selection",
                        them="them" if many else "it")


def selection_lead(verdict) -> str:
    """What is said before the hint of a first failure that is such a selection itself."""
    return (f"{verdict.first.row.label}'s indices are partly near ties (the same elements "
            f"within the device's own error, in another order: its row's note says how many), "
            f"the others not, picks the device made otherwise by more than that error")


def selection_reason(verdict, found: AfterSelection) -> str:
    """Why the first failure after the selections is no float16 rounding."""
    many = len(found.selections) > 1
    notes = "their rows' notes say" if many else "its row's note says"
    return (f"the first failing op {verdict.first.row.label} comes after "
            f"{first_names(found.selections)}, {'selections' if many else 'a selection'} (TopK) "
            f"whose differing indices all reorder ties or near ties (the same elements within "
            f"the device's own error, in another order: {notes} how many); every op after a "
            f"selection is compared position by position in the golden's order, so it fails "
            f"with that order, not with float16 rounding, and no mode or op list fixes that "
            f"(keeping every op in float32 does only by making the scores exact)")


def ignored_what(found: AfterSelection) -> str:
    """``the N ops after it (every failing op is among them)``."""
    them = "them" if len(found.selections) > 1 else "it"
    n = len(found.elsewhere)
    among = ("every failing op is among them" if not n else
             f"{n} failing op{'s' if n != 1 else ''} elsewhere still fail{'' if n != 1 else 's'}"
             f": {first_names(found.elsewhere)}")
    return f"the {len(found.after)} ops after {them} ({among})"


def kept_after(found: AfterSelection, verdict, ranges, mode, dump_kind: str, rows):
    """(the mode keeping them, their names, the keep list's account) where every op the
    float16-range fix would keep comes after the selections, else None (nothing after them
    leaves the range, or something before them does, which its own hint names)."""
    from ..core.modes import DEFAULT, keep_dtype
    from .fp16_fix_ops import device_mode, keep_dtype_names

    mode = mode if mode is not None else DEFAULT
    names, _ = keep_dtype_names(verdict, ranges, device_mode(mode, dump_kind), rows)
    after = set(found.after)
    others = [n for n in names if n not in mode.keep_dtype]  # (kept by the test already)
    kept = [n for n in others if n in after]
    if not kept or len(kept) < len(others):
        return None
    return mode | keep_dtype(kept), tuple(kept), names.found


def apart_from_that(verdict, found: AfterSelection, kept) -> str:
    """The keep list's account, marked as a float16 problem that does not fix the first
    failure."""
    one = len(kept[1]) == 1
    return (f"apart from that, {kept[2]}: a float16 problem of {'its' if one else 'their'} own "
            f"after the selection{'s' if len(found.selections) > 1 else ''}, which the ignore "
            f"hides and which does not cause the first failure (pasted alone, the check still "
            f"fails at {verdict.first.row.label})")

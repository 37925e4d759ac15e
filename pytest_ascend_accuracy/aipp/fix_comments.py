"""The comment beside each corrected AIPP field, and a line for a mistake that spans fields.

:func:`.hints.why_changed` words a field from its old and new values (a channel order mix-up, a
std written for its reciprocal, a zeroed mean ...). Where it can only restate the value, the
source the search recovered it from (:func:`.norm_values.snap_normalisation`: a standard
statistic, the fit rounded) says more, and a value read through the device's colour conversion
says what that fit absorbed, so no fitted number is presented as the reference's own.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

from .config import AippOp, aipp_value_text
from .norm_values import WHOLE_TEXT, file_offset, swap_note, swapped_mean_std


@dataclass(frozen=True)
class FieldFix:
    """One field to change: ``key: old -> new`` and why."""

    key: str
    old: object
    new: object
    why: str

    def __str__(self) -> str:
        return f"{self.key}: {aipp_value_text(self.old)} -> {aipp_value_text(self.new)}"


def describe_fixes(op: AippOp, changes: Dict[str, object], size_why: str,
                   reasons: Dict[str, Tuple[str, str]]) -> Tuple[List[FieldFix], str]:
    """The fixes with their comments, and a line naming a mistake that spans fields ('' when
    none): mean and std swapped. A comment is the hint's (:func:`.hints.why_changed`) where it
    names a mistake, else the value's source (``reasons``), then what a CSC fit absorbed."""
    from .hints import why_changed

    note = ""
    n = op.channels
    corrected = op.with_values(changes)
    offsets = [float(corrected.get(f"mean_chn_{c}")) + float(corrected.get(f"min_chn_{c}"))
               for c in range(n)]
    scales = [float(corrected.get(f"var_reci_chn_{c}")) for c in range(n)]
    reasons = dict(reasons)
    if swapped_mean_std(op, offsets, scales):
        note = swap_note(op, offsets)
        for c in range(n):
            for key in (f"mean_chn_{c}", f"min_chn_{c}"):
                reasons[key] = (WHOLE_TEXT,
                                f"mean and std swapped: channel {c}'s mean is {offsets[c]:g}")
            reasons[f"var_reci_chn_{c}"] = (WHOLE_TEXT, f"mean and std swapped: channel {c}'s "
                                            f"std is {file_offset(op, c):g}, var_reci_chn its "
                                            f"reciprocal")
    fixes = []
    for key, new in changes.items():
        old = op.get(key)
        if old == new:
            continue
        source, after = reasons.get(key, ("", ""))
        if source == WHOLE_TEXT:
            why = after
        else:
            why = why_changed(op, key, new, changes, size_why, plain=source) + after
        fixes.append(FieldFix(key, old, new, why))
    return fixes, note

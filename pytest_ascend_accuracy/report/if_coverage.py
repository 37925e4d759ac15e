"""A passing check that judged most of its model only through the outputs of ``If`` operators.

The device runs an ``If`` whose condition is a value of the run as one operator and dumps its
outputs only; the golden ops of the branch that ran are counted ``inside If operators``
(``compare.rows.Coverage.in_ifs``), never compared. silero_vad.onnx's whole network (205 of the
209 ops that run) lies inside one: a pass compared 4 tensors, printed nothing about it, and
JUnit's ``accuracy_coverage`` read 1.0000 (an audit). The coverage fraction now counts only
compared ops and ops inside fused ops (``plugin.accuracy_check.coverage_fraction``), and a pass
where more than half the ops that ran are inside Ifs says so in one line, a
``JudgedThroughIfWarning`` at the test's line (as a pass on an edited model is said with
``ModelChangedWarning``); a failure's coverage line already counts them.
"""
from __future__ import annotations

from typing import Sequence

from ..core.ascend_optypes import IF_TYPES


class JudgedThroughIfWarning(UserWarning):
    """A passing check judged most of the model's ops only through the outputs of If operators
    (``filterwarnings = ignore::pytest_ascend_accuracy.report.if_coverage.
    JudgedThroughIfWarning`` silences it)."""


def in_if_note(coverage, rows: Sequence = (), label: str = "") -> str:
    """``<label>: 205 of 209 ops that ran were judged only through the outputs of If_0 (...)``
    where more than half of the golden ops that ran (not folded at conversion) are inside If
    operators (``coverage.in_ifs``); "" otherwise. ``rows``: the compared rows, whose If rows
    name the Ifs."""
    ran = coverage.golden_total - len(coverage.folded)
    inside = len(coverage.in_ifs)
    if ran <= 0 or inside * 2 <= ran:
        return ""
    ifs = list(dict.fromkeys(r.op_name for r in rows if getattr(r, "op_type", "") in IF_TYPES))
    named = (", ".join(ifs[:3]) + (f" (+{len(ifs) - 3} more)" if len(ifs) > 3 else "")
             if ifs else "its If operators")
    counted = len(coverage.compared) + len(coverage.fused)
    return (f"{label + ': ' if label else ''}{inside} of {ran} ops that ran were judged only "
            f"through the outputs of {named} (the device runs an If as one operator and dumps "
            f"none of its branch's tensors); accuracy_coverage {counted / ran:.4f} counts the "
            f"{counted} compared" + (" or inside fused ops" if coverage.fused else ""))

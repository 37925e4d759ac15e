"""Which ops a float16-range fix names, and why: failing ops whose golden operands or values
leave float16's range, named as ATC's ``--keep_dtype`` and ``keep_dtype(...)`` take them (the
model's own spelling, ``report.model_spelling``), and whether converting in high precision can
keep them in range (not on the Cube unit). Printed by ``failure_text.default_hint`` and
``hints.hint_for``."""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from ..compare.result import TensorCompare, Verdict
from ..core.fp16 import FP16_MAX
from .model_spelling import row_model_name
from .printable import printable


def fp16_range_rows(verdict: Verdict, *, nan_counts: Optional[bool] = None
                    ) -> List[TensorCompare]:
    """Failing rows that point at float16 range: golden values past 65504; and NaN or Inf in
    the actual tensor where the golden one is finite, where ``nan_counts`` (by default: where
    some row's golden passes 65504). NaN/Inf alone is no such evidence: a NaN a faulty op makes
    runs through every op after it (a PP-OCR trial: a 365-op keep_dtype hint that changed
    nothing), and an Inf from dividing by a value float16 rounded to 0 is not the dividing op's
    range (a docs trial: the hint named the ops after the rounding and repeated itself pasted);
    ``nonfinite_in_range`` says those failures' hint."""
    strong, weak = [], []
    for f in verdict.failures:
        m = f.row.metrics
        if m is None or not _floating(f.row.golden_dtype):  # an int32 accumulator past 65504
            continue  # is no float16 value (a quantised model's keep_dtype hint looped on it)
        if m.max_abs_golden > FP16_MAX:
            strong.append(f.row)
        elif m.mismatch and m.nonfinite_actual > m.nonfinite_golden:
            weak.append(f.row)
    if nan_counts is None:
        nan_counts = bool(strong)
    if not nan_counts:
        return strong
    keep = {id(r) for r in strong + weak}
    return [f.row for f in verdict.failures if id(f.row) in keep]


def _floating(dtype: str) -> bool:
    """A float dtype name (``float32``, ``bfloat16``), or one not known (older results)."""
    return not dtype or "float" in dtype


def keep_dtype_names(verdict: Verdict, range_inputs: Sequence = ()) -> Tuple[List[str], str]:
    """The ops a ``keep_dtype`` fix names, in the failures' (graph) order, and why: failing ops
    whose golden operands pass 65504 (``range_inputs``, ``compare.fp16_range.RangeFinding``)
    and failing ops whose values leave the float16 range (``fp16_range_rows``, by their original
    names where fused). Both kinds: an op whose input overflows usually fails first, with the
    ops after it failing on their own values, and keeping only one kind leaves the other
    failing. ``([], "")`` when neither."""
    # NaN/Inf rows count with a range finding, or where no golden was read at all (a saved
    # result: nothing tells an overflow from a value rounded to 0, and judge keeps the hint it
    # gave before; a review)
    rows = fp16_range_rows(verdict, nan_counts=True if range_inputs or not hasattr(
        range_inputs, "checked") else None)
    row_ids = {id(r) for r in rows}
    range_ops = {f.op for f in range_inputs}
    names: List[str] = []
    for f in verdict.failures:
        if id(f.row) in row_ids:
            picked = f.row.original_names or (f.row.op_name,)
        elif f.row.golden_name in range_ops:
            picked = (f.row.golden_name,)
        elif row_model_name(f.row) in range_ops:  # findings in the model's spelling
            picked = (row_model_name(f.row),)
        else:
            continue
        names.extend(n for n in picked if n not in names)
    names.extend(n for n in dict.fromkeys(f.op for f in range_inputs) if n not in names)
    reasons = []
    if range_inputs:
        found = "; ".join(printable(f.describe()) for f in range_inputs[:3])
        hidden = [n for n in getattr(range_inputs, "ignored", ()) if n in names]
        if hidden:  # ignored for the verdict: the user must read why the hint names them
            found += (f"; {', '.join(printable(n) for n in hidden[:3])} "
                      f"{'is' if len(hidden) == 1 else 'are'} ignored but feed"
                      f"{'s' if len(hidden) == 1 else ''} the failing ops")
        quiet = [n for n in getattr(range_inputs, "passing", ()) if n in names]
        if quiet:  # passes a loosened threshold: the user must read why the hint names it
            one = len(quiet) == 1
            found += (f"; {', '.join(printable(n) for n in quiet[:3])} "
                      f"meet{'s' if one else ''} the loosened threshold (the default check "
                      f"fails {'it' if one else 'them'}) but feed{'s' if one else ''} the "
                      "failing ops")
        what = ("operands" if all(str(f.slot).startswith("input") for f in range_inputs)
                else "values")
        reasons.append(f"golden {what} leave the float16 range ({found})")
    if rows:
        reasons.append("values leave the float16 range (NaN/Inf in the actual output or |golden| "
                       "> 65504)")
    return names, ", and ".join(reasons)


def high_precision_may_fix(verdict: Verdict, names: Sequence[str]) -> bool:
    """Whether converting in high precision can keep ``names`` (a keep_dtype fix's ops) within
    float16: not when one of them runs on the Cube unit (``CUBE_TYPES``), whose inputs stay
    float16 under high precision (a MatMul fused with a Mul by 1e5 still overflowed)."""
    from ..core.ascend_optypes import CUBE_TYPES

    wanted = set(names)
    for f in verdict.failures:
        r = f.row
        if r.op_type in CUBE_TYPES and wanted & {r.op_name, r.golden_name, *r.original_names}:
            return False
    return True

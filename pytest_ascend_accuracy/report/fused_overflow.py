"""A check that passed (or failed elsewhere) while a fused op hid a value past float16's range.

A fused operator computes its members' intermediate values in float32 and dumps only its
output (``backends.emulator.fusion``; on the device, ATC's fused kernel). Where the golden
shows such an inner value past 65504, an unfused run rounds it to float16: +-Inf, and what
follows changes. openWakeWord's hey_jarvis head squares a Gemm's centred output in a
hand-written LayerNorm: its ``Pow_5`` reached 1.178e5 on a loud clip, the default (fused) check
passed, and with fusion off the Inf made an ``If`` take its other branch (score 0.0001 -> 0.62).
Whether ATC fuses depends on the chip (``core.fusion_passes``: LayerNormFusionPass is
documented for the Atlas A2 products only) and the CANN version, which the check does not know:
so it says so, ``AtcFusionWarning`` at the test's line, naming the member, its golden peak,
the pass, and the mode (the test's, with fusion off) whose run shows the unfused values.

Only members whose output is not the fused op's output count (that one is dumped and
compared), and only fused ops the verdict did not fail (a failure there is shown already).
The golden's member outputs are read here, after the verdict: a handful of tensors.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from ..core.caller_warning import warn_at_caller
from ..core.fp16 import FP16_MAX
from ..core.fusion_passes import documented_for

class AtcFusionWarning(UserWarning):
    """A fused op of the checked run computed, in float32, a value the golden shows past
    float16's range: an unfused run (a chip or CANN version where ATC does not fuse) rounds it
    to Inf, so the check's verdict proves nothing for that op."""


@dataclass(frozen=True)
class FusedPeak:
    """One fused op of the run (``op``, dumped as ``op_type``) covering ``members``, whose inner
    member ``member``'s golden output reaches ``peak`` (past 65504); ``rules``: the passes
    that fuse such a group, as far as the dump's op types tell."""

    op: str
    op_type: str
    members: Tuple[str, ...]
    member: str
    peak: float
    rules: Tuple[str, ...]


def _peak(golden_op) -> float:
    """The largest finite |value| among ``golden_op``'s floating outputs (0 where none)."""
    peak = 0.0
    for t in golden_op.outputs:
        if not str(t.dtype).startswith(("float", "bfloat")):
            continue
        a = np.asarray(t.load(), dtype=np.float64)
        a = a[np.isfinite(a)]
        if a.size:
            peak = max(peak, float(np.abs(a).max()))
    return peak


def _rules(row, golden) -> Tuple[str, ...]:
    """The passes that fuse a group of these member types into ``row``'s op."""
    types = {getattr(golden.get(m), "op_type", "") for m in row.original_names}
    rules = []
    if row.op_type == "LayerNorm":
        rules.append("LayerNormFusionPass")
    if "Erf" in types:
        rules.append("GeluFusionPass")
    if "BatchNormalization" in types and "Conv" in types:
        rules.append("ConvBatchnormFusionPass")
    if "MatMul" in types and "Add" in types and row.op_type != "LayerNorm":
        rules.append("MatMulBiasAddFusionPass")
    if row.op_name not in row.original_names:  # a UB-fused op's name joins its parts'
        rules.append("ATbeMatmulElemwiseFusionPass" if types & {"MatMul", "Gemm"}
                     else "TbeCommonRules0FusionPass")
    return tuple(rules)


def fused_peaks(result, golden, verdict=None) -> List[FusedPeak]:
    """Inner members of the fused ops in ``result`` whose golden output passes 65504, in graph
    order; fused ops ``verdict`` failed are left out."""
    failing = {f.row.op_name for f in getattr(verdict, "failures", ()) or ()
               if getattr(f, "row", None) is not None}
    exits: Dict[str, set] = {}
    for row in result.rows:
        exits.setdefault(row.op_name, set()).add(row.golden_name)
    found, seen = [], set()
    for row in result.rows:
        if len(row.original_names) < 2 or row.op_name in seen or row.op_name in failing:
            continue
        seen.add(row.op_name)
        rules = None
        for member in row.original_names:
            op = golden.get(member) if member not in exits[row.op_name] else None
            if op is None:
                continue
            peak = _peak(op)
            if peak > FP16_MAX:
                rules = rules if rules is not None else _rules(row, golden)
                found.append(FusedPeak(row.op_name, row.op_type, tuple(row.original_names),
                                       member, peak, rules))
    return found


def _span(members: Tuple[str, ...]) -> str:
    return members[0] if len(members) == 1 else f"{members[0]}..{members[-1]}"


def fused_overflow_text(peaks: List[FusedPeak], label: str, fix: str) -> str:
    """The warning's text for ``peaks`` of model ``label``; ``fix``: what to paste for the
    unfused run (``modes=[FUSION_OFF]``)."""
    if not peaks:
        return ""
    first = peaks[0]
    same = [p for p in peaks if p.op == first.op]
    rules = " and ".join(first.rules) or "ATC's fusion"
    where = "; ".join(f"{r} is documented for {documented_for(r)}" for r in first.rules
                      if documented_for(r))
    named = ", ".join(f"{p.member} reaches {p.peak:.4g}" for p in same[:3]) + (
        f", +{len(same) - 3} more" if len(same) > 3 else "")
    others = sorted({p.op for p in peaks} - {first.op})
    more = (f" (and inside {len(others)} other fused op{'s' if len(others) != 1 else ''}: "
            f"{', '.join(others[:3])}{', ...' if len(others) > 3 else ''})" if others else "")
    return (f"model {label!r}: {rules} fuse{'s' if ' and ' not in rules else ''} "
            f"{_span(first.members)} into {first.op_type or 'one op'} {first.op!r} and "
            f"compute{'s' if ' and ' not in rules else ''} its inner values in float32; the "
            f"golden's {named}, past float16's 65504{more}: where ATC does not fuse them "
            f"(another chip or CANN version{'; ' + where if where else ''}), this op "
            f"overflows, so this check proves nothing for it; {fix} shows the unfused run")


def warn_fused_overflow(result, golden, verdict, mode=None, label: str = "",
                        one_model: bool = False, failure=None) -> Optional[str]:
    """``AtcFusionWarning`` at the test's line where ``fused_peaks`` finds a member; ``mode``:
    the test's ``Mode`` (None: the default), offered with fusion off; ``one_model``: the test
    converts other models too, so the fix is the ``ascend_model`` call's argument;
    ``failure``: the check's ``AccuracyFailure``, which gets the text as its last line where
    the warning is made an error (``-W error``: the failure's own text is kept). Returns the
    text (None: no warning)."""
    from ..core.modes import DEFAULT, FUSION_OFF

    peaks = fused_peaks(result, golden, verdict)
    if not peaks:
        return None
    unfused = (mode if mode is not None else DEFAULT) | FUSION_OFF
    fix = (f"in the ascend_model call of {label} alone, mode={unfused.python_expr()},"
           if one_model else f"modes=[{unfused.python_expr()}]")
    text = fused_overflow_text(peaks, label or "the model", fix)
    try:
        warn_at_caller(AtcFusionWarning(text))
    except AtcFusionWarning:
        if failure is None:
            raise
        failure.args = (f"{failure.args[0]}\nAtcFusionWarning: {text}",) + failure.args[1:]
    return text


__all__ = ["AtcFusionWarning", "FusedPeak", "fused_overflow_text", "fused_peaks",
           "warn_fused_overflow"]

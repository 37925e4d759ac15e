"""A check that passed (or failed elsewhere) while a fused op hid a value past float16's range.

A fused operator computes its members' intermediate values in float32 and dumps only its
output (``backends.emulator.fusion``; on the device, ATC's fused kernel). Where the golden
shows such an inner value past 65504, an unfused run rounds it to float16: +-Inf, and what
follows changes. openWakeWord's hey_jarvis head squares a Gemm's centred output in a
hand-written LayerNorm: its ``Pow_5`` reached 1.178e5 on a loud clip, the default (fused) check
passed, and with fusion off the Inf made an ``If`` take its other branch (score 0.0001 -> 0.62).
Whether ATC fuses depends on the chip and the CANN version (``core.fusion_passes``: an ONNX
LayerNorm is fused by LayerNormONNXFusionPass, whose 2025 ops-nn version runs on the Ascend 950
only), which the check does not know: so it says so, ``AtcFusionWarning`` at the test's line,
naming the member, its golden peak, the passes, and the mode (the test's, with fusion off)
whose run shows the unfused values, as Python (with its import) and as YAML.

Only members whose output is not the fused op's output count (that one is dumped and
compared), only fused ops the verdict did not fail (a failure there is shown already), and,
where the converter recorded the run (``FusedOpFacts``: the emulator's plan), only members an
unfused run of the test's mode rounds to float16 (under ``HIGH_PRECISION`` a LayerNorm's Pow
runs in float32: nothing overflows there) and the passes it recorded (the golden's op types are
empty). Nothing is said where the test's own modes hold the unfused mode: that run judges the
unfused values. The golden outputs of the members counted are read after the verdict, each by
one minimum and one maximum (``_peak``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple

import numpy as np

from ..core.caller_warning import warn_at_caller
from ..core.fp16 import FP16_MAX
from ..core.fusion_passes import atc_pass, documented_for


class AtcFusionWarning(UserWarning):
    """A fused op of the checked run computed, in float32, a value the golden shows past
    float16's range: an unfused run (a chip or CANN version where ATC does not fuse) rounds it
    to Inf, so the check's verdict proves nothing for that op."""


@dataclass(frozen=True)
class FusedOpFacts:
    """What the run's converter recorded of one fused op (``backends.emulator.unfused_precision``
    reads the emulator's plan): the passes that fused it (the emulator's rule names), each
    member's ONNX type, and the members whose output an unfused run of the test's mode rounds
    to float16 (the others run in float32 there: nothing of theirs overflows)."""

    rules: Tuple[str, ...]
    types: Dict[str, str]
    rounded: FrozenSet[str]


@dataclass(frozen=True)
class FusedPeak:
    """One fused op of the run (``op``, dumped as ``op_type``) covering ``members``, whose inner
    member ``member`` (of ONNX type ``member_type``; "" unknown) has a golden output reaching
    ``peak`` (past 65504); ``rules``: the passes that fuse such a group (the emulator's names)."""

    op: str
    op_type: str
    members: Tuple[str, ...]
    member: str
    peak: float
    rules: Tuple[str, ...]
    member_type: str = ""


def _peak(golden_op) -> float:
    """The largest finite |value| among ``golden_op``'s floating outputs (0 where none): a
    minimum and a maximum over the stored values, no copy; the finite values are picked out
    only where one of them is not finite (a review: float64 copies and masks of every member
    made a 24-LayerNorm check 60% slower)."""
    peak = 0.0
    for t in golden_op.outputs:
        if not str(t.dtype).startswith(("float", "bfloat")):
            continue
        a = np.asarray(t.load())
        if not a.size:
            continue
        lo, hi = float(a.min()), float(a.max())
        if not (np.isfinite(lo) and np.isfinite(hi)):
            a = a[np.isfinite(a)]
            if not a.size:
                continue
            lo, hi = float(a.min()), float(a.max())
        peak = max(peak, abs(lo), abs(hi))
    return peak


#: the dumped type of a fused op -> the pass that makes it, for a run without a converter's
#: record (a device dump): its op types are ATC's
_BY_TYPE = {"LayerNorm": "LayerNormFusionPass", "Gelu": "GeluFusionPass"}


def _rules(row) -> Tuple[str, ...]:
    """The passes that fuse ``row``'s op, as far as its dumped type and name tell."""
    rules = [_BY_TYPE[row.op_type]] if row.op_type in _BY_TYPE else []
    if row.op_name not in row.original_names:  # a UB-fused op's name joins its parts'
        rules.append("ATbeMatmulElemwiseFusionPass" if "MatMul" in row.op_type
                     else "TbeCommonRules0FusionPass")
    return tuple(rules)


def fused_peaks(result, golden, verdict=None,
                facts: Optional[Mapping[str, FusedOpFacts]] = None) -> List[FusedPeak]:
    """Inner members of the fused ops in ``result`` whose golden output passes 65504, in graph
    order; fused ops ``verdict`` failed are left out, and, where ``facts`` (the converter's
    record, by op) are given, members an unfused run does not round to float16 (their golden
    outputs are not read)."""
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
        fact = facts.get(row.op_name) if facts is not None else None
        if facts is not None and fact is None:
            continue  # (not fused in the converter's record)
        rules = fact.rules if fact is not None else _rules(row)
        inner = [m for m in row.original_names if m not in exits[row.op_name]]
        peaks = _member_peaks(golden, inner, fact)
        for member in inner:
            if member in peaks and peaks[member] > FP16_MAX and (
                    fact is None or member in fact.rounded):
                found.append(FusedPeak(row.op_name, row.op_type, tuple(row.original_names),
                                       member, peaks[member], rules,
                                       fact.types.get(member, "") if fact is not None else ""))
    return found


#: a LayerNorm's members bounded by its Pow's output p (``LayerNormFusionPass``): |x - mean| is
#: sqrt(p), the variance and the epsilon's sum at most max p (+ eps <= 0.1: rounded, not past
#: 65520), their root sqrt(max p), the normalised values at most sqrt(n) in magnitude; and the
#: mean of x at most max |x|, x an op's output the run dumps. Only the Pow (and the Mul by
#: gamma, which a gamma may take anywhere) are read, the others where the Pow passes 65504.
_LN_READ_FIRST = ("Pow", "Mul")


def _member_peaks(golden, members, fact: Optional[FusedOpFacts]) -> Dict[str, float]:
    """The golden peaks of the ``members`` worth reading: where ``fact`` knows them, members
    an unfused run rounds (and, of a LayerNorm, those ``_LN_READ_FIRST`` does not bound)."""
    def read(names):
        ops = {m: golden.get(m) for m in names}
        return {m: _peak(op) for m, op in ops.items() if op is not None}

    if fact is None:
        return read(members)
    wanted = [m for m in members if m in fact.rounded]
    if "LayerNormFusionPass" not in fact.rules or not wanted:
        return read(wanted)
    first = read(m for m in members if fact.types.get(m) in _LN_READ_FIRST)
    if not any(fact.types.get(m) == "Pow" for m in first) or any(
            v > FP16_MAX for m, v in first.items() if fact.types.get(m) == "Pow"):
        first.update(read(m for m in wanted if m not in first))
    return first


def _span(members: Tuple[str, ...]) -> str:
    return members[0] if len(members) == 1 else f"{members[0]}..{members[-1]}"


def fused_overflow_text(peaks: List[FusedPeak], label: str, fix: str) -> str:
    """The warning's text for ``peaks`` of model ``label``; ``fix``: what to paste for the
    unfused run (``modes=[FUSION_OFF] (from ...; YAML: ...)``)."""
    if not peaks:
        return ""
    first = peaks[0]
    same = [p for p in peaks if p.op == first.op]
    passes = [atc_pass(r) for r in first.rules]
    rules = " and ".join(passes) or "ATC's fusion"
    s = "s" if len(passes) < 2 else ""
    where = "; ".join(f"{r} is documented for {documented_for(r)}" for r in passes
                      if documented_for(r))
    named = ", ".join(f"{p.member} reaches {p.peak:.4g}" for p in same[:3]) + (
        f", +{len(same) - 3} more" if len(same) > 3 else "")
    others = sorted({p.op for p in peaks} - {first.op})
    more = (f" (and inside {len(others)} other fused op{'s' if len(others) != 1 else ''}: "
            f"{', '.join(others[:3])}{', ...' if len(others) > 3 else ''})" if others else "")
    into = f"{_span(first.members)} into {first.op_type or 'one op'} {first.op!r}"
    folded = ("ConvBatchnormFusionPass" in first.rules
              and all(p.member_type == "Conv" for p in same))
    if folded:  # no inner value: the BatchNormalization goes into the Conv's weights
        what = (f"{rules} fold{s} {into}: the BatchNormalization is folded into the Conv's "
                f"weights, so the Conv's own output is never computed")
        lost = "its output is rounded to float16 and overflows"
    else:
        what = f"{rules} fuse{s} {into} and compute{s} its inner values in float32"
        lost = "this op overflows"
    return (f"model {label!r}: {what}; the golden's {named}, past float16's 65504{more}: "
            f"where ATC does not fuse them (another chip or CANN version"
            f"{'; ' + where if where else ''}), {lost}, so this check proves nothing for it; "
            f"{fix} shows the unfused run")


def _fix(unfused, label: str, one_model: bool) -> str:
    """The unfused mode as pasted: Python with its import line and, for the marker, YAML."""
    names = unfused.python_imports()
    imported = f"from pytest_ascend_accuracy import {', '.join(names)}" if names else ""
    if one_model:
        return (f"in the ascend_model call of {label} alone, mode={unfused.python_expr()}"
                + (f" ({imported})" if imported else "") + ",")
    return (f"modes=[{unfused.python_expr()}] ("
            + (f"{imported}; " if imported else "") + f"YAML: modes: [{unfused.yaml_form()}])")


def warn_fused_overflow(result, golden, verdict, mode=None, label: str = "",
                        one_model: bool = False, failure=None, *,
                        facts: Optional[Mapping[str, FusedOpFacts]] = None,
                        test_modes: Iterable = ()) -> Optional[str]:
    """``AtcFusionWarning`` at the test's line where ``fused_peaks`` finds a member; ``mode``:
    the test's ``Mode`` (None: the default), offered with fusion off; ``one_model``: the test
    converts other models too, so the fix is the ``ascend_model`` call's argument;
    ``failure``: the check's failure (anything with ``args``), which gets the text as its last
    line where the warning is made an error (``-W error``: the failure's own text is kept);
    ``facts``: the converter's record of the fused ops (``FusedOpFacts``); ``test_modes``: the
    test's own modes: where they hold the unfused mode, nothing is said (that run of the test
    judges the unfused values itself, and says so where they fail). Returns the text (None: no
    warning)."""
    from ..core.modes import DEFAULT, FUSION_OFF

    unfused = (mode if mode is not None else DEFAULT) | FUSION_OFF
    if any(replace(m, label=None) == replace(unfused, label=None) for m in test_modes):
        return None
    peaks = fused_peaks(result, golden, verdict, facts)
    if not peaks:
        return None
    text = fused_overflow_text(peaks, label or "the model", _fix(unfused, label, one_model))
    try:
        warn_at_caller(AtcFusionWarning(text))
    except AtcFusionWarning:
        if failure is None:
            raise
        failure.args = (f"{failure.args[0]}\nAtcFusionWarning: {text}",) + failure.args[1:]
    return text


__all__ = ["AtcFusionWarning", "FusedOpFacts", "FusedPeak", "fused_overflow_text", "fused_peaks",
           "warn_fused_overflow"]

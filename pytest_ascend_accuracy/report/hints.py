"""The "next step" of a failed check, in the failing test's own mode, as text a user pastes.

A hint is a contract (tests/plugin/test_hints_contract.py applies each kind verbatim):

- ``keep_dtype`` (values or golden operands leave the float16 range): the ops to keep in float32,
  printed as the mode to paste into ``modes=[...]`` (``FUSION_OFF | keep_dtype([...])`` when the
  test ran ``fusion_off``) and as the YAML ``modes:`` entry; with the test's mode plus
  high precision as the alternative. Applied, the failing ops pass.
- ``modes`` (no overflow seen): the test's mode with fusion off, and with buffer reuse off, to
  compare; applied, they convert and run, and say whether a fusion pass or buffer reuse is
  the cause.
- ``problem`` (nothing matched): how to make the dumps comparable.

Names are the model's own (never the sanitized spelling of dump file names).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

KEEP_DTYPE, MODES, PROBLEM = "keep_dtype", "modes", "problem"


@dataclass(frozen=True)
class Hint:
    """A next step: ``kind``, the reason, and the modes it suggests (first one is the fix)."""

    kind: str
    reason: str
    modes: tuple = ()  # Mode values, the suggested one first
    advice: str = ""

    def lines(self) -> List[str]:
        """The ``next step:`` block: the reason, then each mode as Python and as YAML."""
        if not self.modes:
            return [f"next step: {self.reason}{': ' + self.advice if self.advice else ''}"]
        out = [f"next step: {self.reason}; {self.advice}:"]
        for k, mode in enumerate(self.modes):
            lead = "  " if k == 0 else "  or "
            out.append(f"{lead}modes=[{mode.python_expr()}]")
            out.append(f"    YAML: modes: [{mode.yaml_form()}]")
        names = list(dict.fromkeys(n for m in self.modes for n in m.python_imports()))
        out.append(f"  (from pytest_ascend_accuracy import {', '.join(names)})")
        return out

    def text(self) -> str:
        return "\n".join(self.lines())

    def one_line(self) -> str:
        """The same advice on one line (JUnit property, terminal summary)."""
        if not self.modes:
            return self.reason + (f": {self.advice}" if self.advice else "")
        return f"{self.reason}; {self.advice}: " + " or ".join(
            f"modes=[{m.python_expr()}]" for m in self.modes)


def next_step(verdict, range_inputs: Sequence = (), mode=None) -> Hint:
    """The hint for a failed ``verdict`` of a test converted under ``mode`` (a ``Mode``)."""
    from ..core.modes import BUFFER_OFF, DEFAULT, FUSION_OFF, HIGH_PRECISION, keep_dtype
    from .failure_text import fp16_range_rows, printable

    mode = mode if mode is not None else DEFAULT
    if verdict.problem:
        return Hint(PROBLEM, "check that both dumps come from the same model and run",
                    advice="pass the om json (om_json= / --om-json) so fused ops find their "
                           "original names, or map op names with mapping= / --mapping")
    rows = fp16_range_rows(verdict)
    names: List[str] = []
    if range_inputs and not rows:
        names = list(dict.fromkeys(f.op for f in range_inputs))
        found = "; ".join(printable(f.describe()) for f in range_inputs[:3])
        reason = f"golden operands leave the float16 range ({found})"
    elif rows:
        for r in rows:
            for n in (r.original_names or (r.op_name,)):
                if n not in names:
                    names.append(n)
        reason = ("values leave the float16 range (NaN/Inf in the actual output or |golden| > "
                  "65504)")
    if names:
        suggested = [mode | keep_dtype(names)]
        if not mode.is_high_precision:
            suggested.append(mode | HIGH_PRECISION)
        return Hint(KEEP_DTYPE, reason, tuple(suggested),
                    advice="keep these ops in float32" + (
                        ", or convert in high precision" if len(suggested) > 1 else ""))
    compare = [m for m in (mode | FUSION_OFF, mode | BUFFER_OFF) if m != mode]
    if not compare:
        return Hint(MODES, "no float16 overflow seen, and fusion and buffer reuse are already off",
                    advice="run with --accuracy-diagnose to search for the ops to keep in float32")
    return Hint(MODES, "no float16 overflow seen",
                tuple(compare), advice="compare with these modes to see whether a fusion pass or "
                                       "buffer reuse causes the first failure")


def hint_for(verdict, golden, mode=None) -> Hint:
    """``next_step`` with the golden operands of the failing ops checked for float16 range."""
    from ..compare.fp16_range import golden_inputs_past_fp16

    ranges = golden_inputs_past_fp16(
        golden, (f.row.golden_name for f in verdict.failures if f.row.golden_name))
    return next_step(verdict, ranges, mode)

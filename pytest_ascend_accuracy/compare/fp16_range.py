"""Which golden operands of failing operators leave the float16 range.

An fp16 overflow does not always show in an operator's *output*: a BatchNormalization whose
running variance is 1e9 (the real PP-OCRv4 detector has one) turns that operand into inf when
ATC converts it to float16, and the output merely collapses. Looking at the golden *inputs* of
the first failing operators (weights included, as golden dumps record them) finds that case;
only a few small tensors are read, and only after a comparison failed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, List

import numpy as np

from ..dump.dtypes import value_dtype
from ..dump.model import DumpSet

from ..core.fp16 import FP16_MAX  # noqa: E402  (one definition, in core)


@dataclass(frozen=True)
class RangeFinding:
    """A golden operand of op ``op`` (slot ``input:k``) whose values reach past 65504."""

    op: str
    slot: str
    max_abs: float

    def describe(self) -> str:
        return f"{self.op} {self.slot} reaches |{self.max_abs:.4g}|"


def golden_inputs_past_fp16(golden: DumpSet, op_names: Iterable[str], *, limit: int = 3
                            ) -> List[RangeFinding]:
    """Findings for the golden inputs of the first ``limit`` of ``op_names`` found in ``golden``."""
    found: List[RangeFinding] = []
    seen = 0
    for name in op_names:
        op = golden.get(name)
        if op is None:
            continue
        seen += 1
        for t in op.inputs:
            if not value_dtype(t.dtype).kind == "f":
                continue
            try:
                values = np.asarray(t.load())
            except Exception:  # unreadable operand: the comparison already reported its file
                continue
            finite = values[np.isfinite(values)]
            peak = float(np.max(np.abs(finite))) if finite.size else 0.0
            if peak > FP16_MAX:
                found.append(RangeFinding(op.name, t.slot, peak))
        if seen >= limit:
            break
    return found

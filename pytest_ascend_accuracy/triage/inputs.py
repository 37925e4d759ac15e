"""Step 5 of the debugging flow: did the device see the inputs the golden run saw?

The model's inputs as the device saw them (an ``Aipp`` op's output, else the inputs of the ops
that read a graph input, tied through the om json's input references) are compared with the
golden inputs. They may differ by float16 rounding only; anything more is a pre-processing or
AIPP configuration mismatch, described as ``golden * a + b`` when a linear fit explains it.
Float16 rounding includes what float16 cannot hold: a golden value past its range that reaches
the device as +-inf (or +-65504, saturating), one below its normal range that reaches it as 0 or
a subnormal. Those positions are named and left to the precision step (``keep_dtype`` of the
consumer, high precision), never blamed on pre-processing; the figures are of the others.
No conversion is needed, so triage runs it right after the default conversion fails.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..core.fp16 import FP16_MAX
from .result import OpLine, StepResult, fmt as _fmt

#: an input seen by the device may differ from the golden one by float16 rounding only
INPUT_REL_L2_TOLERANCE = 1e-2
#: float16's smallest normal value; below it float16 holds subnormals, then 0
FP16_TINY = 2.0 ** -14


def input_check(converted, dump, inputs: Mapping[str, np.ndarray]):
    """Compare the inputs the device saw with the golden inputs (no conversion needed)."""
    from ..compare.metrics import compute_metrics

    pairs = _input_tensors(converted, dump, inputs)
    if not pairs:
        return StepResult("data", "", None, "no dumped tensor could be tied to a model input")
    lines, bad, lossy_notes = [], [], []
    for label, tensor, name in pairs:
        seen = np.asarray(tensor.load(), dtype=np.float64).reshape(-1)
        want = np.asarray(inputs[name], dtype=np.float64).reshape(-1)
        if seen.size != want.size:
            bad.append(f"{name} reaches {label} with {seen.size} values, golden has {want.size}")
            continue
        lossy, lossy_note = _float16_lossy(seen, want)
        rest = ~lossy
        # the figures are of the positions judged: those float16 can hold
        m = compute_metrics(seen[rest], want[rest], kl=False) if rest.any() else None
        ok = m is None or (not m.mismatch and (m.rel_l2 <= INPUT_REL_L2_TOLERANCE or m.all_zero))
        note = "" if ok else _linear_fit_note(seen[rest], want[rest])
        if lossy_note:
            lossy_notes.append(f"input {name!r}: {lossy_note}")
        nan = float("nan")
        figures = (nan,) * 3 if m is None else (m.value("cosine"), m.rel_l2, m.max_abs)
        lines.append(OpLine(label, name, *figures,
                            "; ".join(n for n in (note, lossy_note) if n)))
        if not ok:
            figures = (f"NaN/Inf on one side only at {m.mismatch} position(s)" if m.mismatch
                       else f"rel-L2 {_fmt(m.rel_l2)}")
            bad.append(f"input {name!r} as seen by {label}: {figures}{note and ', ' + note}"
                       + (f" ({lossy_note})" if lossy_note else ""))
    if bad:
        return StepResult("data", "", False, "; ".join(bad),
                          failing=tuple(line.op for line in lines if line.note), table=tuple(lines))
    return StepResult("data", "", True,
                      f"{len(lines)} input tensor(s) match the golden inputs "
                      f"(rel-L2 <= {INPUT_REL_L2_TOLERANCE:g})"
                      + "".join(f"; {n}" for n in lossy_notes), table=tuple(lines))


def _float16_lossy(seen: np.ndarray, want: np.ndarray):
    """(mask, note): the positions where the device holds the golden input as float16 does and
    float16 cannot hold it -- past its range as +-inf or +-65504 (saturating), below its normal
    range as 0 or a subnormal -- and a note naming them ("" when there are none)."""
    with np.errstate(all="ignore"):
        as16 = want.astype(np.float16).astype(np.float64)
    big = np.abs(want) > FP16_MAX
    small = (want != 0) & (np.abs(want) < FP16_TINY)
    over = big & ((seen == as16) | (seen == np.sign(want) * FP16_MAX))
    under = small & ((seen == as16) | (seen == 0))
    parts = []
    if over.any():
        held = "+-inf" if np.isinf(seen[over]).any() else "+-65504"
        parts.append(f"{int(over.sum())} value(s) past float16's range (|golden| up to "
                     f"{np.abs(want[over]).max():.4g}) reach the device as {held}")
    if under.any():
        parts.append(f"{int(under.sum())} value(s) below float16's normal range (|golden| down "
                     f"to {np.abs(want[under]).min():.3g}) reach it as 0 or subnormals")
    if not parts:
        return over, ""
    return over | under, ("; ".join(parts) + ": float16 rounding of the input, left to the "
                          "precision step (keep_dtype, high precision)")


def _input_tensors(converted, dump, inputs: Mapping[str, np.ndarray]):
    """(label, TensorRef, input name) for each dumped tensor that carries a model input: an
    ``Aipp`` op's output, else the inputs of ops that read a graph input (om json refs)."""
    om_path = getattr(converted, "om_json", None)
    if not om_path:
        return []
    from ..dump.om_json import read_om_json

    graph = read_om_json(om_path)
    out = []
    for op in graph.ops:
        rec = dump.get(op.name)
        if rec is None:
            continue
        for i, ref in enumerate(op.inputs):
            src = ref.rpartition(":")[0]
            if src in inputs:
                if op.type == "Aipp" and rec.outputs:
                    out.append((f"{op.name}:output:0", rec.outputs[0], src))
                elif i < len(rec.inputs):
                    out.append((f"{op.name}:input:{i}", rec.inputs[i], src))
    seen, unique = set(), []
    for label, tensor, name in out:  # one check per input is enough: its first consumer
        if name not in seen:
            seen.add(name)
            unique.append((label, tensor, name))
    return unique


def _linear_fit_note(seen: np.ndarray, want: np.ndarray) -> str:
    """Describe the device input as ``golden * a + b`` when that fits (a mean/scale mistake)."""
    finite = np.isfinite(seen) & np.isfinite(want)
    x, y = want[finite], seen[finite]
    if x.size < 2 or np.ptp(x) == 0:
        return ""
    a, b = np.polyfit(x, y, 1)
    resid = y - (a * x + b)
    scale = max(float(np.sqrt(np.mean(y ** 2))), 1e-12)
    if np.sqrt(np.mean(resid ** 2)) <= 1e-2 * scale:
        shift = "" if abs(b) <= 1e-3 * scale else f" {'+' if b >= 0 else '-'} {abs(b):.4g}"
        return f"looks like golden * {a:.4g}{shift} (check mean/scale)"
    return "not a linear transform of the golden input (check channel order, layout, resize)"

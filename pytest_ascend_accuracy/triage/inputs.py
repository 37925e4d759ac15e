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

from typing import Dict, Mapping

import numpy as np

from ..core.fp16 import FP16_MAX
from .result import OpLine, StepResult, fmt as _fmt

#: an input seen by the device may differ from the golden one by float16 rounding only
INPUT_REL_L2_TOLERANCE = 1e-2
#: float16's smallest normal value; below it float16 holds subnormals, then 0
FP16_TINY = 2.0 ** -14


def input_check(converted, dump, inputs: Mapping[str, np.ndarray]):
    """Compare the inputs the device saw with the golden inputs (no conversion needed)."""
    pairs = _input_tensors(converted, dump, inputs)
    if not pairs:
        return StepResult("data", "", None, "no dumped tensor could be tied to a model input")
    lines, bad, lossy_notes = [], [], []
    for label, tensor, name in pairs:
        seen = np.asarray(tensor.load(), dtype=np.float64).reshape(-1)
        if seen.size != np.size(inputs[name]):
            bad.append(f"{name} reaches {label} with {seen.size} values, golden has "
                       f"{np.size(inputs[name])}")
            continue
        seen_as = judge_input(seen, inputs[name])
        if seen_as.lossy_note:
            lossy_notes.append(f"input {name!r}: {seen_as.lossy_note}")
        lines.append(OpLine(label, name, *seen_as.figures,
                            "; ".join(n for n in (seen_as.note, seen_as.lossy_note) if n)))
        if seen_as.differs:
            bad.append(f"input {name!r} as seen by {label}: {seen_as.differs}")
    if bad:
        return StepResult("data", "", False, "; ".join(bad),
                          failing=tuple(line.op for line in lines if line.note), table=tuple(lines))
    return StepResult("data", "", True,
                      f"{len(lines)} input tensor(s) match the golden inputs "
                      f"(rel-L2 <= {INPUT_REL_L2_TOLERANCE:g})"
                      + "".join(f"; {n}" for n in lossy_notes), table=tuple(lines))


class InputSeen:
    """How the device saw one golden input: ``differs`` ("" where only float16 rounding tells
    them apart, else the figures and what the difference looks like), ``figures`` (cosine,
    rel-L2, max abs of the positions float16 can hold), ``note`` (the linear-fit reading of a
    difference) and ``lossy_note`` (what float16 could not hold, left to the precision step)."""

    def __init__(self, differs: str, figures, note: str, lossy_note: str):
        self.differs, self.figures, self.note, self.lossy_note = differs, figures, note, lossy_note


def judge_input(seen, golden) -> InputSeen:
    """Judge ``seen`` (the values a device op was fed) against ``golden`` (the golden input it
    carries), of the same size: they may differ by float16 rounding only."""
    from ..compare.metrics import compute_metrics

    shape = np.shape(golden)
    seen = np.asarray(seen, dtype=np.float64).reshape(-1)
    want = np.asarray(golden, dtype=np.float64).reshape(-1)
    lossy, lossy_note = _float16_lossy(seen, want)
    rest = ~lossy
    # the figures are of the positions judged: those float16 can hold
    m = compute_metrics(seen[rest], want[rest], kl=False) if rest.any() else None
    ok = m is None or (not m.mismatch and (m.rel_l2 <= INPUT_REL_L2_TOLERANCE or m.all_zero))
    note = "" if ok else _linear_fit_note(seen, want, rest, shape)
    nan = float("nan")
    figures = (nan,) * 3 if m is None else (m.value("cosine"), m.rel_l2, m.max_abs)
    differs = ""
    if not ok:
        differs = ((f"NaN/Inf on one side only at {m.mismatch} position(s)" if m.mismatch
                    else f"rel-L2 {_fmt(m.rel_l2)}") + (f", {note}" if note else "")
                   + (f" ({lossy_note})" if lossy_note else ""))
    return InputSeen(differs, figures, note, lossy_note)


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


def _linear_fit_note(seen: np.ndarray, want: np.ndarray, judged: np.ndarray, shape) -> str:
    """Describe the device input as ``golden * a + b`` when that fits (a mean/scale mistake),
    else, for an NCHW input, channel by channel (an AIPP file's ``mean_chn_i``/``var_reci_chn_i``
    are per channel: ``var_reci`` written as the std scales each channel by its own std**2)."""
    fit = _fit(seen[judged], want[judged])
    if fit is not None:
        return f"looks like golden * {_ab(*fit)} (check mean/scale)"
    if len(shape) == 4 and 1 < shape[1] <= 4 and seen.size == int(np.prod(shape)):
        def channel(v, c):
            return np.moveaxis(v.reshape(shape), 1, 0)[c].reshape(-1)

        fits = [_fit(channel(seen, c)[channel(judged, c)], channel(want, c)[channel(judged, c)])
                for c in range(shape[1])]
        if all(f is not None for f in fits):
            each = ", ".join(f"channel {c}: golden * {_ab(*f)}" for c, f in enumerate(fits))
            return (f"looks like a per-channel scale and shift, {each} (check the mean and "
                    f"scale of each channel: mean_chn_i, min_chn_i, var_reci_chn_i)")
    return "not a linear transform of the golden input (check channel order, layout, resize)"


def _fit(seen: np.ndarray, want: np.ndarray):
    """``(a, b, scale)`` where ``seen`` is ``want * a + b`` within 1% of its RMS, else None."""
    finite = np.isfinite(seen) & np.isfinite(want)
    x, y = want[finite], seen[finite]
    if x.size < 2 or np.ptp(x) == 0:
        return None
    a, b = np.polyfit(x, y, 1)
    resid = y - (a * x + b)
    scale = max(float(np.sqrt(np.mean(y ** 2))), 1e-12)
    return (a, b, scale) if np.sqrt(np.mean(resid ** 2)) <= 1e-2 * scale else None


def _ab(a: float, b: float, scale: float) -> str:
    shift = "" if abs(b) <= 1e-3 * scale else f" {'+' if b >= 0 else '-'} {abs(b):.4g}"
    return f"{a:.4g}{shift}"


def golden_graph_inputs(golden, model, names) -> Dict[str, np.ndarray]:
    """The graph inputs ``names`` as the golden run read them: each one's first reader's input
    in ``golden`` (a golden this package computes holds it; a stored golden only when written
    with ``--accuracy-store-inputs``). An input the golden does not hold is left out."""
    from ..compare.fp16_range import ModelEdges

    readers = ModelEdges(model).edges()[0]  # {node name: its input tensor names}, graph order
    out: Dict[str, np.ndarray] = {}
    for name in names:
        for node, tensors in readers.items():
            if name not in tensors:
                continue
            record = golden.get(node)
            slot = tensors.index(name)
            held = [t for t in (record.inputs if record is not None else ()) if t.index == slot]
            if held:
                out[name] = np.asarray(held[0].load())
                break
    return out

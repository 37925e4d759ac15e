"""A failing op the ONNX model itself computes in float16 (its golden is float16, the model
types that output float16): high precision and keep_dtype leave such an op float16 (ATC's
--precision_mode; the emulator does the same), so no mode makes it match its float16 golden, and
the hints that would keep it in float32 or probe it with high precision say so instead
(``hints.next_step``, ``failure_text.default_hint``, ``triage.model_float16``).

A failure that is float16's own rounding there (``rounding_hint``: a max_abs figure and bound
within a few float16 steps at the golden's largest value) names no mode either: IMG.LY's ISNet
(float16 weights, audit 35) failed ``/Sigmoid`` at max_abs 0.001465 (3 float16 steps near 0.97)
against a bound of 0.0002, and its hint offered ``modes=[FUSION_OFF]`` and "--accuracy-diagnose
... names a small set of ops to keep in float32"; fusion off failed at 0.000977 (2 steps: the
emulator's fused ops round fewer intermediates to float16, F8), high precision repeated
0.001465, force_fp32 gave 0.000852 (float32 against the float16 golden), and the diagnosis said
no mode can. What can: the threshold that would pass, or a float32 export.

force_fp32 (cube_fp16in_fp32out) does raise a float16 op: "For vector operators, float32 is
forcibly selected for operators supporting both float16 and float32, even if the original
precision is float16" (ATC --precision_mode, hiascend.com canncommercial 800
atlasatcparam_16_0068), and the emulator does the same (``backends.emulator.float16_model.
RAISING_MODES``: ISNet's ``/Sigmoid`` is dumped ``float32 (golden float16)`` there); it is still
judged against the golden the model rounded to float16, so the words say it computes the op in
float32, not that it stays float16 (audit 35 F5: "which high precision and keep_dtype leave
float16" read as "stays float16" under force_fp32)."""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

from ..compare.result import TensorCompare, Verdict
from .printable import printable


#: what a hint says of a failing op the ONNX model itself computes in float16 (``in_float16``):
#: high precision (allow_fp32_to_fp16) and keep_dtype keep a float16 op float16 (ATC's
#: --precision_mode; the emulator does the same: ``backends.emulator.float16_model``), so the
#: "convert in high precision" probe of an attention export in float16 failed as the default
#: did, and said nothing (H337)
FLOAT16_MODEL_REASON = ("the ONNX model itself computes {label} in float16 (its golden is "
                        "float16), which high precision and keep_dtype leave float16 (no mode "
                        "makes it match its float16 golden); force_fp32 raises a float16 op (not "
                        "a Cast's float16 target) to float32, still judged against that float16 "
                        "golden")
#: (a model.half() export has no Cast to drop: the words say where one is, F29's finding)
FLOAT16_MODEL_ADVICE = ("export the model in float32 (or, where the model casts to float16 "
                        "before {label}, drop that Cast) and check that export: against its "
                        "float32 golden, a failure names the ops to keep in float32, or the "
                        "mode, that fix it")


def in_float16(row: Optional[TensorCompare], model=None) -> bool:
    """Whether ``row``'s op is one the ONNX model computes in float16: its golden is float16
    (onnxruntime ran the op in the model's dtype) and ``model`` (the ONNX model the golden ran:
    a path, ModelProto or ``compare.fp16_range.ModelEdges``) types that output float16. Not
    where the model is not known or does not name the op: a float16 golden alone is no proof (a
    float32 model's golden stored as float16 by another tool lost the high-precision probe that
    worked, and was told "the ONNX model itself computes conv1 in float16": a review, H341)."""
    if model is None or _output_key(row) is None:
        return False
    return _typed_float16(row, _output_types(getattr(model, "model", model)))


def _output_key(row: Optional[TensorCompare]):
    """``(golden op name, output index)`` of a row with a float16 golden output, else None."""
    if row is None or str(row.golden_dtype) != "float16" or not row.golden_name:
        return None
    slot = str(row.golden_slot or "output:0")
    return (row.golden_name, int(slot.split(":")[1] or 0)) if slot.startswith("output:") else None


def _typed_float16(row, types: dict) -> bool:
    """Whether ``row`` (a float16 golden output) is typed float16 in ``types``
    (``_output_types``)."""
    key = _output_key(row)
    return key is not None and types.get(key) == 10  # onnx.TensorProto.FLOAT16


def _output_types(model) -> dict:
    """``{(node name as the golden names it, output index): ONNX element type}`` of ``model``,
    ``{}`` where it cannot be read."""
    from ..graph.onnx_graph import tensor_info
    from ..graph.prepare import prepare_model

    try:
        proto = prepare_model(model, require_static=False, weights_by_reference=True).model
        info = tensor_info(proto)
    except Exception:  # a model gone or unreadable since the check ran: the golden's dtype
        return {}
    return {(n.name, k): info[o][0] for n in proto.graph.node for k, o in enumerate(n.output)
            if o in info}


def float16_model_text(label: str, lead: str) -> Tuple[str, str]:  # (FLOAT16_MODEL_*)
    """(reason, advice) of a hint for a failing op at ``label`` the model computes in float16
    (``in_float16``), ``lead`` what fails there."""
    shown = printable(label)
    return (f"{lead}; " + FLOAT16_MODEL_REASON.format(label=shown),
            FLOAT16_MODEL_ADVICE.format(label=shown))


def _source_model(result):
    """The ONNX model a stored golden records (``result.meta["diagnose"]``) where the file is
    there, else None."""
    import os

    source = ((getattr(result, "meta", None) or {}).get("diagnose") or {}).get("model")
    return source if source and os.path.isfile(str(source)) else None


def float16_hint(verdict: Verdict, names: Sequence[str], range_inputs: Sequence = (),
                 result=None) -> str:
    """``failure_text.default_hint``'s text where its hint would keep ``names`` in float32 or
    probe a NaN/Inf with high precision at an op the model computes in float16
    (``in_float16``, the model the one a stored golden records: ``result.meta["diagnose"]``),
    or where every failure is float16's own rounding at such ops (``rounding_hint``), else
    ""."""
    from .failure_kinds import nonfinite_failure, nonfinite_reason

    model = _source_model(result)
    row = verdict.first.row if verdict.first is not None else None
    lead = getattr(names, "found", "")
    if not names:
        failure = nonfinite_failure(verdict) if hasattr(range_inputs, "checked") else None
        row = failure.row if failure is not None else None
        lead = nonfinite_reason(row, range_inputs) if row is not None else ""
        if row is None:  # no NaN/Inf: float16's own rounding at such ops names no mode either
            half = rounding_hint(verdict, _seen(verdict, range_inputs), model)
            return ": ".join((half["reason"], half["advice"])) if half else ""
    if row is None or not in_float16(row, model):
        return ""
    return ": ".join(float16_model_text(row.label, lead))


def _seen(verdict: Verdict, range_inputs: Sequence) -> str:
    """What ``default_hint`` says it looked at where no overflow explains a failure."""
    from .failure_kinds import per_op_only
    from .overflow_seen import SAVED_NOT_CHECKED, no_overflow_seen
    from .fp16_fix_ops import flushed_after_first

    seen = (no_overflow_seen(range_inputs) if hasattr(range_inputs, "checked")
            else SAVED_NOT_CHECKED)  # (judge: a saved result holds no golden tensor)
    return seen + flushed_after_first(verdict, range_inputs) + per_op_only(verdict)


def first_in_float16(verdict: Verdict, hint, result) -> bool:
    """Whether a failure block's first failing op is one the model computes in float16: as its
    hint says (a ``hints.Hint`` of kind ``float16_model``, the plugin's), else by the model a
    stored golden records (``_source_model``)."""
    if getattr(hint, "kind", None) is not None:
        return hint.kind == "float16_model"
    first = verdict.first
    return first is not None and in_float16(first.row, _source_model(result))


#: how many float16 steps, at the golden's largest value, a failing max_abs figure and its bound
#: may be for the failure to be float16's own rounding (``would_pass.float16_steps_note``'s 4)
ROUNDING_STEPS = 4


def _step(peak: float) -> float:
    """float16's step at ``peak`` (a normal value)."""
    import math

    return 2.0 ** (math.floor(math.log2(peak)) - 10)


def rounding_failures(verdict: Verdict, model) -> bool:
    """Whether every failure of ``verdict`` is float16's own rounding at an op ``model`` (the ONNX
    model the golden ran) computes in float16 (``in_float16``): a max_abs figure that some
    threshold passes, it and its bound within ``ROUNDING_STEPS`` float16 steps at the golden's
    largest value (``would_pass.float16_steps_note`` says so of the bound)."""
    from .would_pass import float16_steps_note

    if model is None or not verdict.failures:
        return False
    for f in verdict.failures:
        m = f.row.metrics
        if (f.would_pass is None or f.threshold.metric != "max_abs" or m is None
                or _output_key(f.row) is None or not float16_steps_note(f)
                or not f.value <= ROUNDING_STEPS * _step(m.max_abs_golden)):
            return False
    types = _output_types(getattr(model, "model", model))  # read once for every failure
    return all(_typed_float16(f.row, types) for f in verdict.failures)


#: the way out ``would_pass.float16_steps_note`` ends in, and what it reads where the model
#: computes the op in float16 itself (no mode keeps such an op in float32: audit 35 F5)
KEEP_TAIL = "keep the ops computing these values in float32"
MODEL_TAIL = ("export the model in float32 (the ONNX model itself computes these values in "
              "float16, its golden too)")


def model_rounding_note(text: str, half: bool) -> str:
    """``text`` (a figure's "threshold that would pass" note) with its way out for an op the
    model computes in float16 (``half``) in place of keeping ops in float32."""
    return text[:-len(KEEP_TAIL)] + MODEL_TAIL if half and text.endswith(KEEP_TAIL) else text


def rounding_hint(verdict: Verdict, seen: str, model) -> Optional[dict]:
    """``{"reason": ..., "advice": ...}`` of the hint for a failure that is float16's own
    rounding at an op the model computes in float16 (``rounding_failures``), ``seen`` leading
    the reason (no overflow seen, the per_op entries that fail); None otherwise. No mode: none
    gives that op float32 values to compare, and fusion off only moves where float16 rounds
    (the module doc); the way out is the threshold that would pass, or a float32 export."""
    if not rounding_failures(verdict, model):
        return None
    f = verdict.first
    label = printable(f.row.golden_name or f.row.label)  # the model's op (not a fused one's)
    steps = f.value / _step(f.row.metrics.max_abs_golden)
    if str(f.row.op_type) in ("Cast", "CastLike"):  # a mode keeps a conversion's target
        raised = "force_fp32 keeps a Cast's float16 target too"
    elif str(f.row.dtype) == "float32":
        raised = ("this run's mode raised it to float32, as its dtypes say, still judged "
                  "against the model's float16 rounding")
    else:
        raised = ("force_fp32 raises it to float32, still judged against the model's float16 "
                  "rounding")
    reason = (f"{seen}; the ONNX model itself computes {label} in float16 (its golden is "
              f"float16), and its max_abs is {steps:.3g} float16 step{'' if steps == 1 else 's'} "
              f"there: float16's own rounding, which no conversion mode removes (high precision "
              f"and keep_dtype leave a float16 op float16, {raised}, and fusion off only moves "
              "where float16 rounds), so no mode is offered")
    each = ("the threshold that would pass, printed above" if len(verdict.failures) == 1 else
            "each failing op's figure (the first's printed above as the threshold that would "
            "pass this op)")
    return {"reason": reason,
            "advice": f"allow max_abs up to {each}, or " + FLOAT16_MODEL_ADVICE.format(label=label)}


__all__ = ["FLOAT16_MODEL_ADVICE", "FLOAT16_MODEL_REASON", "KEEP_TAIL", "MODEL_TAIL",
           "ROUNDING_STEPS", "first_in_float16", "float16_hint", "float16_model_text", "in_float16",
           "model_rounding_note", "rounding_failures", "rounding_hint"]

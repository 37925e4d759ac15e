"""A failing op the ONNX model itself computes in float16 (its golden is float16, the model
types that output float16): high precision and keep_dtype leave such an op float16 (ATC's
--precision_mode; the emulator does the same), so no mode makes it match its float16 golden, and
the hints that would keep it in float32 or probe it with high precision say so instead
(``hints.next_step``, ``failure_text.default_hint``, ``triage.model_float16``)."""
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
                        "makes it match its float16 golden)")
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
    if row is None or str(row.golden_dtype) != "float16" or not row.golden_name:
        return False
    slot = str(row.golden_slot or "output:0")
    if model is None or not slot.startswith("output:"):
        return False
    elem = _output_types(getattr(model, "model", model)).get(
        (row.golden_name, int(slot.split(":")[1] or 0)))
    return elem == 10  # onnx.TensorProto.FLOAT16


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


def float16_hint(verdict: Verdict, names: Sequence[str], range_inputs: Sequence = (),
                 result=None) -> str:
    """``failure_text.default_hint``'s text where its hint would keep ``names`` in float32 or
    probe a NaN/Inf with high precision at an op the model computes in float16
    (``in_float16``, the model the one a stored golden records: ``result.meta["diagnose"]``),
    else ""."""
    import os

    from .failure_kinds import nonfinite_failure, nonfinite_reason

    source = ((getattr(result, "meta", None) or {}).get("diagnose") or {}).get("model")
    model = source if source and os.path.isfile(str(source)) else None
    row = verdict.first.row if verdict.first is not None else None
    lead = getattr(names, "found", "")
    if not names:
        failure = nonfinite_failure(verdict) if hasattr(range_inputs, "checked") else None
        row = failure.row if failure is not None else None
        lead = nonfinite_reason(row, range_inputs) if row is not None else ""
    if row is None or not in_float16(row, model):
        return ""
    return ": ".join(float16_model_text(row.label, lead))


__all__ = ["FLOAT16_MODEL_ADVICE", "FLOAT16_MODEL_REASON", "float16_hint", "float16_model_text",
           "in_float16"]

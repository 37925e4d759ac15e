"""A golden that overflows float16 itself: said, not passed in silence.

Where the ONNX model computes in float16 (an export in float16, or a Cast to float16 before a
MatMul), onnxruntime's golden overflows exactly where the device does: both hold the same
infinity, which the compare counts as equal (``compare.metrics``: an attention mask's ``-inf``
must compare equal). A mixed-precision export whose fp16 MatMul overflowed then passed with
every downstream row one-hot and nothing in the terminal, only ``OverFlow YES`` in the CSV of
``--accuracy-report`` (a trial). ``GoldenOverflowWarning`` names those ops: their infinities are
the model's own, and the check cannot judge those positions. A float32 golden's infinities,
and a float16 golden's ``-Inf`` (an attention mask's), are not warned about.

What follows is judged, and may differ: onnxruntime's CPU provider computes most float16 ops
(MatMul, Mul, Softmax, ...) with float32 kernels and drops the Cast pairs between two of them,
so its next float16 op can read the value before it overflowed, where the device (and the
emulator, ``backends.emulator.float16_model``) reads the infinity: a float16 attention export
whose scores overflow holds +-Inf at its MatMul on both sides, and a finite Softmax in the
golden against NaN on the device (a trial). The warning says so, and its advice fits both a
float16 export (export in float32) and a Cast to float16 in a float32 model (drop it).

``MaskStandInWarning`` says the other rule that counts unequal values as equal: a golden of
±float32 max (Hugging Face's ``torch.finfo(torch.float32).min`` attention mask) against the
device's infinity or saturated float16 value of the same sign (``compare.mask_stand_in``). A
check of a GPT-2 or BERT export then passes where it failed at the mask's ``Where``, and says
which positions it did not judge.
"""
from __future__ import annotations

from typing import List

from ..core.caller_warning import warn_at_caller

#: golden dtypes whose infinities are the model's own float16 overflow
_NARROW = ("float16", "bfloat16")
#: the start of the message: ``-W 'ignore:the golden itself holds infinities'`` silences it
MESSAGE_START = "the golden itself holds infinities"


#: the start of the stand-in's message: ``-W 'ignore:mask stand-in compared as equal'``
STAND_IN_START = "mask stand-in compared as equal"


class MaskStandInWarning(UserWarning):
    """Positions where the golden holds ±float32 max (a framework's stand-in for an infinity in
    an attention mask) and the device the infinity (or float16's saturated value) of the same
    sign were compared as equal."""


class GoldenOverflowWarning(UserWarning):
    """The golden (onnxruntime on the ONNX model) holds, in a float16 op, the same infinities as
    the device: the model overflows float16 in the framework itself."""


def overflowing_rows(result) -> List:
    """The rows (graph order) whose golden is float16 or bfloat16 and holds ``+Inf`` where the
    actual does too (positions compared as equal). ``-Inf`` alone is not taken: a float16
    attention mask's ``-inf`` is deliberate, and a correct fp16 export warned at every check of
    every mode (a review); an overflow to ``-Inf`` only is not said."""
    return [r for r in result.rows
            if r.metrics is not None and getattr(r.metrics, "matched_inf", 0)
            and getattr(r.metrics, "posinf_golden", 0) and getattr(r.metrics, "posinf_actual", 0)
            and str(r.golden_dtype or r.dtype) in _NARROW]


def golden_overflow_text(result, filter_advice: bool = True) -> str:
    """The warning's text for ``result``, or "" where no float16 golden overflows;
    ``filter_advice``: end with the ``-W`` filter that silences it (pytest's option: the CLI,
    which has no such option, prints the text as its own line without it, a review)."""
    rows = overflowing_rows(result)
    if not rows:
        return ""
    named = _named(rows, lambda r: f"{r.metrics.posinf_golden} of {r.metrics.size} positions "
                                   f"+Inf, {r.golden_dtype or r.dtype}")
    return (f"{MESSAGE_START} where the device does, compared as equal: {named}. The "
            f"ONNX model computes in float16 there and the op's float16 output overflowed in "
            f"onnxruntime too (|x| > 65504), so those positions are not judged. The ops after "
            f"them are, and may differ: onnxruntime's CPU computes most float16 ops in float32 "
            f"and can pass the next one the value before it overflowed where the device passes "
            f"the infinity, so a failure further on can come from this overflow. Compute those "
            f"ops in float32 in the model (export it in float32, or drop the Cast to float16 "
            f"before them) or keep their values in float16's range"
            + (f". Deliberate ones are fine: -W 'ignore:{MESSAGE_START}' silences this"
               if filter_advice else ""))


def stand_in_text(result, filter_advice: bool = True) -> str:
    """The ``MaskStandInWarning``'s text for ``result``, or "" where no row holds the stand-in
    (``TensorMetrics.stand_in``); ``filter_advice`` as for ``golden_overflow_text``."""
    rows = [r for r in result.rows if r.metrics is not None
            and getattr(r.metrics, "stand_in", 0)]
    if not rows:
        return ""
    named = _named(rows, lambda r: f"{r.metrics.stand_in} of {r.metrics.size} positions")
    return (f"{STAND_IN_START}: {named}. The golden holds float32's -max (-3.4e38, as "
            f"torch.finfo(torch.float32).min gives an attention mask) or +max there and the "
            f"device the infinity of that sign (float16 cannot hold the value; a chip "
            f"converting in saturation mode gives +-65504): both mask alike, so those "
            f"positions are not judged; every other position is"
            + (f". -W 'ignore:{STAND_IN_START}' silences this" if filter_advice else ""))


def _named(rows, what) -> str:
    """``op (what), ...`` of the first three ``rows``, then ``+N more``."""
    more = f", +{len(rows) - 3} more" if len(rows) > 3 else ""
    return ", ".join(f"{r.op_name} ({what(r)})" for r in rows[:3]) + more


def warn_golden_overflow(result) -> None:
    """``GoldenOverflowWarning`` with ``golden_overflow_text(result)``, and
    ``MaskStandInWarning`` with ``stand_in_text(result)``, where there is one, at the test's
    own line (``core.caller_warning``)."""
    text = golden_overflow_text(result)
    if text:
        warn_at_caller(GoldenOverflowWarning(text))
    text = stand_in_text(result)
    if text:
        warn_at_caller(MaskStandInWarning(text))


__all__ = ["GoldenOverflowWarning", "MESSAGE_START", "MaskStandInWarning", "STAND_IN_START",
           "golden_overflow_text", "overflowing_rows", "stand_in_text", "warn_golden_overflow"]

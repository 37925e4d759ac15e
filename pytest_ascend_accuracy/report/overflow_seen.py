"""What a "next step" says it looked at where no float16 overflow explains a failure
(``failure_text.default_hint``, ``hints.next_step``, ``float16_model``'s rounding hint); apart
from ``failure_text``, which reads it, so a module ``failure_text`` imports reads it too."""
from __future__ import annotations

from typing import Sequence


#: ``judge``'s reason: it reads a saved result, whose golden operands no one looked at
SAVED_NOT_CHECKED = ("no float16 overflow in the failing values; their golden operands were not "
                     "checked (a saved result holds no golden tensors)")


def no_overflow_seen(range_inputs: Sequence = ()) -> str:
    """Why a hint found nothing to keep in float32: no float16 overflow seen, or -- when the
    golden held none of the failing ops' inputs (``compare.fp16_range.RangeFindings.checked``
    0) -- that their operands were not looked at, which a golden with inputs would allow."""
    unlooked = ("; the ignored ops' operands were not looked at (the golden tells no edges "
                "to the failures: the ONNX model, or a golden of op outputs and inputs as the "
                "cache holds it, would)" if getattr(range_inputs, "ignored_unlooked", False)
                else "")
    from .if_branches import unlooked_note

    unlooked += unlooked_note(range_inputs)  # a failing If's branch not read: said
    if getattr(range_inputs, "checked", None) == 0:
        return ("no float16 overflow in the failing values; their golden operands were not "
                "checked (the golden holds no inputs of the failing ops: a golden dumped with "
                "its operators' inputs shows whether one leaves the float16 range)" + unlooked)
    return "no float16 overflow seen" + unlooked


__all__ = ["SAVED_NOT_CHECKED", "no_overflow_seen"]

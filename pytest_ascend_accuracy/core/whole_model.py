"""When a keep_dtype list is the whole model, or nearly: the rule a diagnosis's fix
(``triage.kept_share``) and a failure's keep_dtype hint (``report.hints``) share."""
from __future__ import annotations

#: the share of the ops a run names from which a keep list is the whole model "or nearly"
NEARLY = 0.9
#: the fewest ops a model has for that to be said: in a smaller one any fix of two ops is most
#: of it, which says nothing (a 2-op attention whose two ops were each measured needed)
MIN_OPS = 5


def nearly_all(kept: int, total: int) -> bool:
    """Whether keeping ``kept`` of ``total`` ops is the whole model, or nearly."""
    return total >= MIN_OPS and kept >= NEARLY * total


def whole_model_note(kept: int, total: int) -> str:
    """`` (N of the M ops the run names: the whole model in float32; ...)`` after a failure's
    keep_dtype advice where the list keeps nearly all of them, else "" (audit 33: PP-OCRv6 rec
    fed 0..255 pixels got a 231-op list, most of the model, printed as any fix)."""
    if not nearly_all(kept, total):
        return ""
    return (f" ({kept} of the {total} ops the run names: the whole model"
            f"{'' if kept >= total else ', or nearly'} in float32; --accuracy-diagnose "
            f"searches for a smaller set)")


__all__ = ["MIN_OPS", "NEARLY", "nearly_all", "whole_model_note"]

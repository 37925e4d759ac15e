"""Names as one terminal line shows them: control characters escaped, long names cut (op names
come from models and dump files, and may hold newlines or escape sequences)."""
from __future__ import annotations

from typing import Optional


def printable(text: str, width: Optional[int] = None, *, tail: bool = False) -> str:
    """A name made safe for one terminal line: control characters escaped, long names cut, at
    the end, or at the start where ``tail`` (an op name, whose end tells it from its
    neighbours: a jax2tf export's rows all read ``jax2tf_get_logits_/pjit_get_logits_/...``,
    audit 33)."""
    out = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
                  for ch in str(text))
    if width is not None and len(out) > width:
        out = "..." + out[len(out) - width + 3:] if tail else out[:width - 3] + "..."
    return out

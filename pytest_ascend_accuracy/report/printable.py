"""Names as one terminal line shows them: control characters escaped, long names cut (op names
come from models and dump files, and may hold newlines or escape sequences)."""
from __future__ import annotations

from typing import Optional


def printable(text: str, width: Optional[int] = None) -> str:
    """A name made safe for one terminal line: control characters escaped, long names cut."""
    out = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
                  for ch in str(text))
    if width is not None and len(out) > width:
        out = out[:width - 3] + "..."
    return out

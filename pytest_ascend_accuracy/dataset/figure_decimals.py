"""How many decimals a dataset figure prints with (no numpy here: the xdist controller prints
the dataset lines of its workers' checks without computing any metric)."""
from __future__ import annotations

import math
from typing import Tuple


def apart_decimals(*pairs: Tuple[float, float]) -> int:
    """The fewest decimals, 4 at least, at which the two figures of every pair that differ
    print differently: "drop 0.0000 > max_drop 0.0000" hid a real drop of 0.00004."""
    for decimals in range(4, 18):
        if all(a == b or not (math.isfinite(a) and math.isfinite(b))
               or _unsigned_zero(f"{a:.{decimals}f}") != _unsigned_zero(f"{b:.{decimals}f}")
               for a, b in pairs):
            return decimals
    return 17


def _unsigned_zero(text: str) -> str:
    """'-0.0000' as '0.0000': a drop of -0.00000002 printed so reads as none."""
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def figure_text(value: float, decimals: int = 4) -> str:
    """``value`` with ``decimals`` decimals (``apart_decimals``); nan and inf as Python says."""
    return f"{value:.{decimals}f}" if math.isfinite(value) else str(value)


__all__ = ["apart_decimals", "figure_text"]

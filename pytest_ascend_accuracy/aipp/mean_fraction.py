"""The advice for a fractional ``mean_chn_N``: ``mean_chn`` is a whole number (0..255 for U8
input, :mod:`.ranges`), so the fraction goes in ``min_chn_N`` (0..255), which is subtracted too.
Where the block sets ``min_chn_N`` already, the fraction is added to it: the advice said to put
the fraction there, and pasted it replaced the file's own value (a ``mean_chn_0: 123.5`` beside
``min_chn_0: 0.175``, the ImageNet mean 123.675, was told "0.5 in min_chn_0": 0 of 4 images then
agreed)."""
from __future__ import annotations

import math
from typing import List, Optional

from .ranges import offset_advice, offset_fields
from .textformat import Tok, aipp_value_text, parse_float


def min_chn_in_block(key: str, values, rest: List[Tok], close: str) -> Optional[float]:
    """The block's ``min_chn_N`` for a ``mean_chn_N`` key: parsed already, or given later in
    the block (``rest``: its tokens from here), else None."""
    if not key.startswith("mean_chn_"):
        return None
    name = "min_chn_" + key[-1]
    if name in values:
        return values[name]
    for k, t in enumerate(rest[:-2]):
        if t.kind == "punct" and t.text == close:
            break
        if t.text == name and rest[k + 1].text == ":":
            return parse_float(rest[k + 2].text)
    return None


def split_mean_hint(key: str, s: str, min_now: Optional[float] = None) -> str:
    """For a fractional ``mean_chn``: how the device's registers hold that offset (the fraction
    added to the block's own ``min_chn``, ``min_now``: it was told to replace it)."""
    if not key.startswith("mean_chn_"):
        return ""
    try:
        value = float(s)
    except ValueError:
        return ""
    if value != value or abs(value) == float("inf"):
        return ""
    whole, frac = int(math.floor(value)), round(value - math.floor(value), 6)
    total = value + (min_now or 0.0)
    lead = (" (mean_chn is the device's whole-number register, 0..255 for U8 input; the "
            "fraction goes in min_chn, 0..255, which is subtracted too: ")
    fields = offset_fields(total, snap=False)
    if fields is None:
        return lead + offset_advice(int(key[-1]), total) + ")"
    mean, low = fields
    name = f"min_chn_{key[-1]}"
    if not min_now:
        min_text = f"{aipp_value_text(low)} in {name}"
    elif mean == whole:
        min_text = (f"add {aipp_value_text(frac)} to {name} ({aipp_value_text(min_now)} -> "
                    f"{aipp_value_text(low)})")
    else:
        min_text = f"{aipp_value_text(low)} in {name} (not {aipp_value_text(min_now)})"
    return lead + f"put {mean} in {key} and {min_text})"

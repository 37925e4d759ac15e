"""The leading numbers of a version string, the one rule every version comparison here uses
(CANN toolkits, onnxruntime, pytest-xdist): ``8.0.RC2`` -> (8, 0), ``7.0.0.alpha003`` ->
(7, 0, 0), ``1.21.0rc1`` -> (1, 21), ``3.2.1.dev5+g1`` -> (3, 2, 1); () when there is none."""
from __future__ import annotations

import re
from typing import Tuple


def version_numbers(text) -> Tuple[int, ...]:
    """The dot-separated numeric parts of ``text`` up to the first that is not a number."""
    parts = []
    for piece in str(text).strip().split("+")[0].split("."):
        if not re.fullmatch(r"\d+", piece):
            break
        parts.append(int(piece))
    return tuple(parts)


__all__ = ["version_numbers"]

"""What feeds a failing op, as the hints keep it in float32: the ops computing a flipped integer
output (``hints.integer_upstream``) or a tiny float32 one (``tiny_float32.float16_upstream``)."""
from __future__ import annotations

from dataclasses import dataclass

#: the most ops a hint lists to keep in float32 ahead of a flipped integer or a tiny float32
#: output; more: diagnose
CHAIN_LIMIT = 8


@dataclass(frozen=True)
class Upstream:
    """What feeds a failing output: ``cube``, the Cube-unit ops among the ops computing it (high
    precision still feeds them float16); ``chain``, the ops to keep in float32 by their model
    names, in graph order (an integer output's: those ops and the failing op, empty where the
    graph's edges are not known; a tiny float32 output's: its float16 producers)."""

    cube: tuple = ()
    chain: tuple = ()

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


def feeding_ops(row, golden, model=None):
    """(``row``'s own op names in the model: its original ops, else its golden op; the ops
    upstream of them by the graph's edges, ``{name: ONNX type}``, None where the edges are not
    known: ``compare.fp16_range.ops_upstream`` from ``model`` or ``golden``'s operand files)."""
    from ..compare.fp16_range import ops_upstream

    own = tuple(row.original_names) or tuple(n for n in (row.golden_name,) if n)
    return own, (ops_upstream(golden, own, model=model) if golden is not None and own else None)

"""The ops before a flushed value that must stay float32 with the op making it.

``compare.fp16_range`` names, for an operand float16 flushes to 0, the op producing it, and
goes on through ops that hand values on (``zero_singular.carries``) and Concats. basic-pitch's
log-magnitude is ``Log(Square(Sqrt(ReduceSum(Pow(c, 2)))) + 1e-10)`` (Transposes between): a
CQT bin's ``|c|^2`` of 1.9e-8 is flushed at ``Pow`` and ``Sum`` already, and ``Sqrt`` of the
flushed 0 is 0 where the golden has 1.4e-4 (a normal float16), so the list kept ``add`` and the
``Log`` but left ``Pow``, ``Sum``, ``Sqrt`` and ``Square`` in float16: pasted, it failed (audit
34). From an operand singular at 0 (a Log's) the walk goes on past the op making the value,
input by input, to an op whose golden output holds a value float16 flushes, or whose own operands
do (the ``Sqrt`` of a flushed ``Sum``: its output is normal, the 0 it gets is not), looking
through ops that hand values on and ops that only scale them by constants (``Mul(mag, 0.5)``,
``Div(mag, n_fft)``: a review found the walk stopped there, and the list failed pasted). Each
op found is named with its own figure: what it holds that float16 flushes, or the flushed
values it takes (``through``). It stops at ops on the Cube unit (Conv, MatMul, Gemm: a sum over
many products, which a few flushed terms barely move; they run on float16 inputs in every mode
anyway), at constants and at Concats (basic-pitch's CQT stacks nine octaves' Conv outputs, each
with a few values of 1e-9 no later op needs: the list grew from 50 ops to 115, where diagnose
kept 6); where it stops at one of those that holds or takes flushed values, it says so
(``Walk.stopped``), and the hint that the list may still fail. Ops that hand on a graph input
holding flushed values are kept (nothing before them can be).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from ..core.ascend_optypes import is_cube
from ..dump.dtypes import value_dtype
from ..dump.layout import op_by_model_name
from ..dump.model import DumpSet
from .golden_edges import operands_in_graph, producer_in_graph
from .zero_singular import carries, flushed_peak_any

#: op types the walk never enters: no computation of their own to keep, or a join of many
_NOT_KEPT = frozenset({"Constant", "ConstantOfShape", "Shape", "Size", "Range", "Concat",
                       "ConcatD", "ConcatV2", "ConcatV2D", "Pack", "Stack"})
#: elementwise ops that pass a tensor on scaled or shifted where their other operands are
#: constants (a window's or n_fft's normalisation between a magnitude and its square)
_SCALERS = frozenset({"Mul", "Div", "Add", "Sub", "Neg", "Abs", "RealDiv"})

#: ``(op, slot, peak, through)``: an op to keep, the slot whose values tell why, the largest
#: |value| there float16 flushes (None: it holds none, and ``through`` says what it is
#: computed from)
Found = Tuple[str, str, Optional[float], str]


class Walk:
    """``stopped``: where the walk stopped at a value float16 flushes that it does not follow
    (a Concat, a Cube op, a graph input), said as a clause; "" where it did not."""

    def __init__(self):
        self.stopped = ""


def flush_makers(golden: DumpSet, name: str, graph, walk: Optional[Walk] = None) -> List[Found]:
    """The ops feeding op ``name`` (not a carrier nor a Concat: those ``fp16_range._carried_from``
    follows) that hold or take a value float16 flushes, each input's seen through ops that
    hand values on or scale them by constants, those ops first (module docstring)."""
    if not graph:
        return []
    out: List[Found] = []
    for k in range(len(graph[0].get(name, ()))):
        chain: List[Tuple[str, str]] = []
        made = producer_in_graph(golden, name, f"input:{k}", graph)
        while made is not None and _passes(golden, made[0], graph):
            chain.append(made)
            made = producer_in_graph(golden, made[0], "input:0", graph)
        held = _held(golden, made) if made is not None else None
        takes = None if made is None or held is not None else _taken(golden, made, graph)
        if made is not None and _takes_part(graph, made) and (held or takes):
            through = takes[1] if takes else ""
            out += [_own(golden, c, through or f"{made[0]} {made[1]}") for c in chain]
            out.append((made[0], takes[0] if takes else made[1],
                        held if held is not None else takes[2], through))
            continue
        own = [_own(golden, c, "") for c in chain] if made is None else []
        if any(f[2] is not None for f in own):  # the carriers of a graph input holding the
            out += own  # flushed values (a review: the Transpose reading it was left out)
        if made is not None and (held or takes or _joins_flushed(golden, made[0], graph)) \
                and walk is not None and not walk.stopped:
            walk.stopped = (f"; the walk up from the flushed value stopped at "
                            f"{made[0]} (a {graph[3].get(made[0], 'op')}), which holds, "
                            f"takes or joins values float16 flushes too: ops before it are not "
                            f"listed")
    return list(dict.fromkeys(out))


def _joins_flushed(golden: DumpSet, op: str, graph) -> bool:
    """Whether ``op``, a Concat, joins a tensor whose maker holds or takes a flushed value (a
    review: ``Square(Concat(Sqrt(sum1), Sqrt(sum2)))``, its roots normal, its sums flushed)."""
    if graph[3].get(op, "") not in ("Concat", "ConcatD", "ConcatV2", "ConcatV2D"):
        return False
    for k in range(len(graph[0].get(op, ()))):
        made = producer_in_graph(golden, op, f"input:{k}", graph)
        if made is not None and _takes_part(graph, made) and (
                _held(golden, made) is not None or _taken(golden, made, graph) is not None):
            return True
    return False


def _passes(golden: DumpSet, op: str, graph) -> bool:
    """Whether ``op`` hands its first input on (a carrier), or scales it by constants only."""
    kind = graph[3].get(op, "")
    if carries(kind):
        return True
    if kind not in _SCALERS:
        return False
    inputs = graph[0].get(op, ())
    computed = [t for t in inputs if t and t not in graph[2] and t in graph[1]
                and graph[3].get(graph[1][t][0], "") not in ("Constant", "ConstantOfShape")]
    return len(computed) == 1 and inputs[:1] == computed[:1]


def _takes_part(graph, made: Tuple[str, str]) -> bool:
    kind = graph[3].get(made[0], "")
    return kind not in _NOT_KEPT and not is_cube(kind)


def _held(golden: DumpSet, made: Tuple[str, str]) -> Optional[float]:
    """The largest |value| of ``made``'s golden output that float16 flushes, or None."""
    op = op_by_model_name(golden, made[0])
    for t in op.outputs if op is not None else ():
        if t.slot == made[1] and value_dtype(t.dtype).kind == "f":
            return _peak(t.load)
    return None


def _taken(golden: DumpSet, made: Tuple[str, str], graph) -> Optional[Tuple[str, str, float]]:
    """``(input:k, "its maker's slot", peak)`` of the first operand of ``made``'s op holding a
    value float16 flushes, or None."""
    for slot, load in operands_in_graph(golden, made[0], graph):
        peak = _peak(load)
        if peak is not None:
            maker = producer_in_graph(golden, made[0], slot, graph)
            return slot, (f"{maker[0]} {maker[1]}" if maker else slot), peak
    return None


def _own(golden: DumpSet, made: Tuple[str, str], through: str) -> Found:
    peak = _held(golden, made)
    return made[0], made[1], peak, "" if peak is not None else through


def _peak(load) -> Optional[float]:
    try:
        values = np.asarray(load())
    except Exception:  # unreadable: the comparison already reported its file
        return None
    return flushed_peak_any(values)


__all__ = ["Found", "Walk", "flush_makers"]

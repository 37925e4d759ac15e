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
many products, which a few flushed terms barely move), keeping one whose own output holds the
flushed value (a re-review: its keep list passed pasted only with the MatMul), at constants
and at Concats (basic-pitch's CQT stacks nine octaves' Conv outputs, each
with a few values of 1e-9 no later op needs: the list grew from 50 ops to 115, where diagnose
kept 6); where it stops at one of those that holds or takes flushed values, it says so
(``Walk.stopped``), and the hint that the list may still fail. Ops that hand on a graph input
holding flushed values are kept (nothing before them can be).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

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
    (a Concat, a Cube op), said as a clause; "" where it did not. Figures read once per walk
    (a re-review: a chain of 100 scales took 8.7 s, each op walking it again)."""

    def __init__(self):
        self.stopped = ""
        self.memo: Dict[tuple, object] = {}


def flush_makers(golden: DumpSet, name: str, graph, walk: Optional[Walk] = None) -> List[Found]:
    """The ops feeding op ``name`` (not a carrier nor a Concat: those ``fp16_range._carried_from``
    follows) that hold or take a value float16 flushes, each input's seen through ops that
    hand values on or scale them by constants, those ops first (module docstring)."""
    if not graph:
        return []
    walk = walk if walk is not None else Walk()
    out: List[Found] = []
    for k in range(len(graph[0].get(name, ()))):
        chain, made = _through_passers(golden, name, f"input:{k}", graph)
        held = _held(golden, made, walk) if made is not None else None
        takes = None if made is None or held is not None else _taken(golden, made, graph, walk)
        cube_holds = made is not None and held is not None and is_cube(graph[3].get(made[0], ""))
        if made is not None and (takes_part(graph, made) and (held or takes) or cube_holds):
            through = takes[1] if takes else ""
            out += [_own(golden, c, graph, walk, through or f"{made[0]} {made[1]}")
                    for c in chain]
            out.append((made[0], takes[0] if takes else made[1],
                        held if held is not None else takes[2], through))
            continue
        # the ops of the chain up to the last that holds or takes a flushed value itself: a
        # scale by a constant holding tiny values (a re-review: Mul(relu, k), k[0] = 1e-8),
        # the carriers of a graph input holding them (a review)
        own = [_own(golden, c, graph, walk, "") for c in chain]
        last = max((i for i, f in enumerate(own) if f[2] is not None), default=-1)
        out += own[:last + 1]
        if made is not None and (held or takes or _joins_flushed(golden, made[0], graph, walk)) \
                and not walk.stopped:
            walk.stopped = (f"; the walk up from the flushed value stopped at {made[0]} (a "
                            f"{graph[3].get(made[0], 'op')}), which holds, takes or joins values "
                            f"float16 flushes too: it and the ops computing its inputs are not "
                            f"listed")
    return list(dict.fromkeys(out))


def walked_on(golden: DumpSet, found: Found, graph, walk: Walk) -> List[Found]:
    """What the walk reaches past ``found``, an op ``flush_makers`` returned: the makers before
    it, where it is no op of a chain (those were walked with it; a chain's carriers walked
    again went on into the Concat it stopped at: basic-pitch's list grew to 222 ops)."""
    if _passes(found[0], graph) is not None or is_cube(graph[3].get(found[0], "")):
        return []  # (a Cube op making the flushed value is kept; its inputs are not walked)
    return flush_makers(golden, found[0], graph, walk)


def _through_passers(golden: DumpSet, name: str, slot: str, graph):
    """``(chain, made)``: the ops feeding ``name``'s ``slot`` that hand values on or scale them
    by constants, nearest first, and the first op past them (None: a graph input), among the
    ops the golden holds."""
    return passing_chain(name, slot, graph, lambda op, at: producer_in_graph(golden, op, at,
                                                                             graph))


def passing_chain(name: str, slot: str, graph, producer=None):
    """``(chain, made)`` as ``_through_passers``, where ``producer(op, slot)`` gives the
    ``(op, output:k)`` feeding ``op``'s ``slot`` (by default the model's edges alone:
    ``graph_producer``): the ops a value is carried through to ``name``, and the op making it
    (``report.operand_makers`` walks a kept op's badly rounded operand back so)."""
    producer = producer or (lambda op, at: graph_producer(op, at, graph))
    chain: List[Tuple[str, str]] = []
    made = producer(name, slot)
    while made is not None and len(chain) < 256:
        on = _passes(made[0], graph)
        if on is None:
            break
        chain.append(made)
        made = producer(made[0], f"input:{on}")
    return chain, made


def graph_producer(name: str, slot: str, graph) -> Optional[Tuple[str, str]]:
    """``(op, output:k)`` making the tensor in ``name``'s ``slot`` (``input:k``) by the model's
    edges (``golden_edges.graph_edges``), None for a graph input or a weight."""
    tensors = graph[0].get(name, ())
    k = int(slot.split(":")[1])
    made = graph[1].get(tensors[k]) if k < len(tensors) else None
    return None if made is None else (made[0], f"output:{made[1]}")


def _joins_flushed(golden: DumpSet, op: str, graph, walk: Walk) -> bool:
    """Whether ``op``, a Concat, joins a tensor whose maker, past ops handing values on, holds
    or takes a flushed value (a review: ``Square(Concat(Sqrt(sum1), Sqrt(sum2)))``, its roots
    normal, its sums flushed; a re-review: a Transpose between a root and the Concat)."""
    if graph[3].get(op, "") not in ("Concat", "ConcatD", "ConcatV2", "ConcatV2D"):
        return False
    for k in range(len(graph[0].get(op, ()))):
        _, made = _through_passers(golden, op, f"input:{k}", graph)
        if made is not None and takes_part(graph, made) and (
                _held(golden, made, walk) is not None
                or _taken(golden, made, graph, walk) is not None):
            return True
    return False


def _passes(op: str, graph) -> Optional[int]:
    """The input index ``op`` hands on: 0 for a carrier, the one computed input of a scale by
    constants or graph inputs (either side: tf2onnx writes ``Mul(0.5, mag)``), the one graph
    input of a scale of it by constants, else None."""
    kind = graph[3].get(op, "")
    if carries(kind):
        return 0
    if kind not in _SCALERS:
        return None
    inputs = graph[0].get(op, ())
    computed = [k for k, t in enumerate(inputs) if t and t not in graph[2] and t in graph[1]
                and graph[3].get(graph[1][t][0], "") not in ("Constant", "ConstantOfShape")]
    graph_inputs = [k for k, t in enumerate(inputs) if t and t not in graph[2]
                    and t not in graph[1]]
    if computed:  # another op's output, scaled by constants or a graph input (a gain fed at
        return computed[0] if len(computed) == 1 else None  # run time: a final review)
    return graph_inputs[0] if len(graph_inputs) == 1 else None  # (a graph input, rescaled)


def takes_part(graph, made: Tuple[str, str]) -> bool:
    """Whether ``made``'s op computes a value of its own a keep list can keep: not a constant,
    a shape, a join of many (``_NOT_KEPT``), nor a Cube op (a sum over many products)."""
    kind = graph[3].get(made[0], "")
    return kind not in _NOT_KEPT and not is_cube(kind)


def _held(golden: DumpSet, made: Tuple[str, str], walk: Walk) -> Optional[float]:
    """The largest |value| of ``made``'s golden output that float16 flushes, or None."""
    key = ("held", made)
    if key not in walk.memo:
        op = op_by_model_name(golden, made[0])
        walk.memo[key] = next((_peak(t.load) for t in (op.outputs if op is not None else ())
                               if t.slot == made[1] and value_dtype(t.dtype).kind == "f"), None)
    return walk.memo[key]


def _taken(golden: DumpSet, made: Tuple[str, str], graph,
           walk: Walk) -> Optional[Tuple[str, str, float]]:
    """``(input:k, where it comes from, peak)`` of the first operand of ``made``'s op holding
    a value float16 flushes (a weight, another op's output, or a graph input the golden holds
    as the op's input: a re-review's ``Mul(x, 1e4)`` of a flushed input), or None."""
    key = ("taken", made[0])
    if key in walk.memo:
        return walk.memo[key]
    found = None
    for slot, load in operands_in_graph(golden, made[0], graph):
        peak = _peak(load)
        if peak is not None:
            maker = producer_in_graph(golden, made[0], slot, graph)
            found = slot, (f"{maker[0]} {maker[1]}" if maker else "a weight"), peak
            break
    op = op_by_model_name(golden, made[0]) if found is None else None
    for t in op.inputs if op is not None else ():
        tensors = graph[0].get(made[0], ())
        k = int(t.slot.split(":")[1]) if t.slot.startswith("input:") else -1
        if 0 <= k < len(tensors) and tensors[k] not in graph[1] and tensors[k] not in graph[2] \
                and value_dtype(t.dtype).kind == "f":
            peak = _peak(t.load)
            if peak is not None:
                found = t.slot, f"graph input {tensors[k]}", peak
                break
    walk.memo[key] = found
    return found


def _own(golden: DumpSet, made: Tuple[str, str], graph, walk: Walk, through: str) -> Found:
    """An op of a chain with its own figure: what it holds that float16 flushes, else what it
    takes, else what it is computed from (``through``)."""
    peak = _held(golden, made, walk)
    if peak is not None:
        return made[0], made[1], peak, ""
    takes = _taken(golden, made, graph, walk)
    if takes is not None:
        return made[0], takes[0], takes[2], takes[1]
    return made[0], made[1], None, through


def _peak(load) -> Optional[float]:
    try:
        values = np.asarray(load())
    except Exception:  # unreadable: the comparison already reported its file
        return None
    return flushed_peak_any(values)


__all__ = ["Found", "Walk", "flush_makers", "graph_producer", "passing_chain", "takes_part",
           "walked_on"]

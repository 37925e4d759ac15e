"""The ops before a flushed value that must stay float32 with the op making it.

``compare.fp16_range`` names, for an operand float16 flushes to 0, the op producing it, and
goes on through ops that hand values on (``zero_singular.carries``) and Concats. basic-pitch's
log-magnitude is ``Log(Square(Sqrt(ReduceSum(Pow(c, 2)))) + 1e-10)`` (Transposes between): a
CQT bin's ``|c|^2`` of 1.9e-8 is flushed at ``Pow`` and ``Sum`` already, and ``Sqrt`` of the
flushed 0 is 0 where the golden has 1.4e-4 (a normal float16), so the list kept ``add`` and the
``Log`` but left ``Pow``, ``Sum``, ``Sqrt`` and ``Square`` in float16: pasted, it failed (audit
34). Past the op making the value the walk goes on, input by input, to an op whose golden
output holds a value float16 flushes, or whose own operands do (the ``Sqrt`` of a flushed
``Sum``: its output is normal, the 0 it gets is not), looking through ops that hand values on.
It stops at ops on the Cube unit (Conv, MatMul, Gemm: a sum over many products, which a few
flushed terms barely move; they run on float16 inputs in every mode anyway), at constants and
at Concats (``_NOT_KEPT``); the walk from the singular op itself still follows a Concat.
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
#: tensors (basic-pitch's CQT stacks nine octaves' Conv outputs, each with a few values of
#: 1e-9 that no later op needs: the list grew from 50 ops to 115, where diagnose kept 11)
_NOT_KEPT = frozenset({"Constant", "ConstantOfShape", "Shape", "Size", "Range", "Concat",
                       "ConcatD", "ConcatV2", "ConcatV2D", "Pack", "Stack"})


def flush_makers(golden: DumpSet, name: str, graph) -> List[Tuple[str, str]]:
    """``(op, output:k)`` of the ops feeding op ``name`` (not a carrier nor a Concat: those
    ``fp16_range._carried_from`` follows) that hold or take a value float16 flushes: each
    input's maker, seen through ops that hand values on, the carriers first."""
    if not graph:
        return []
    out: List[Tuple[str, str]] = []
    for k in range(len(graph[0].get(name, ()))):
        chain = []
        made = producer_in_graph(golden, name, f"input:{k}", graph)
        while made is not None and carries(graph[3].get(made[0], "")):
            chain.append(made)
            made = producer_in_graph(golden, made[0], "input:0", graph)
        if made is None or not _takes_part(golden, made, graph):
            continue
        out += [*chain, made]
    return list(dict.fromkeys(out))


def _takes_part(golden: DumpSet, made: Tuple[str, str], graph) -> bool:
    """Whether the op of ``made`` holds a value float16 flushes in that output, or, not on the
    Cube unit, in one of its operands."""
    kind = graph[3].get(made[0], "")
    if kind in _NOT_KEPT or is_cube(kind):
        return False
    op = op_by_model_name(golden, made[0])
    outputs = [t.load for t in (op.outputs if op is not None else ()) if t.slot == made[1]
               and value_dtype(t.dtype).kind == "f"]
    if any(_flushes(load) for load in outputs):
        return True
    return any(_flushes(load) for _, load in operands_in_graph(golden, made[0], graph))


def _flushes(load) -> bool:
    values: Optional[np.ndarray]
    try:
        values = np.asarray(load())
    except Exception:  # unreadable: the comparison already reported its file
        return False
    return flushed_peak_any(values) is not None


__all__ = ["flush_makers"]

"""What a float16-range keep list must keep before a quantiser it adds (``operand_makers``): the
ops making, in float16, the values that quantiser rounds to integer codes.

``operand_makers`` keeps the DynamicQuantizeLinear making a kept layer's ``x_scale`` where a
kept quantiser further on requantises what the layer computes. That quantiser reads the layer's
input, and where an earlier layer makes that input (the overflow starting in layer 2, not in the
layer reading the graph input), the pasted run still makes it in float16: rounding to integer
codes turns float16's rounding of any value (up to 2**-11 of it) into whole code steps at some
positions, and the quantiser's ``x_scale`` (max - min over 255) moves with it. Review RD of
audit 35 (``x -> 3 x [DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul(Mul(x_scale, w_scale))
-> Add -> Relu]``, layer 2's accumulator past 65504): the printed 13-op list kept ``l2_quant``
reading layer 1's Relu in float16 and failed pasted (max_abs 3.06 > 0.001, |golden| up to 581);
with all of layer 1 kept too it passed (``tests/plugin/test_keep_list_requant_reads_pasted.py``).

The walk goes up every input of the quantiser, transitively, and keeps each op the run outputs
in float16 there, a Cube op too: ATC's ``--keep_dtype`` keeps the listed ops' original precision
by name, whatever their type, and "if the computation precision is not supported by the Ascend
AI Processor, the system automatically uses the high precision supported by the operators"
(CANN 8.5 ATC reference, hiascend.com/document/detail/en/canncommercial/850/devaids/atctool/
atlasatcparam_16_0074.html); the emulator keeps any listed op in float32. It goes on through
ops the run outputs in another dtype (an integer ConvInteger: its codes are a quantiser's
rounding of float values before it; an op output in float32 already, which still takes what
float16 ops before it made) without keeping them, and stops at graph inputs, weights, ops
already kept and ops whose values do not depend on float values (``EXACT_TYPES``: a constant, a
shape). Where the ops to keep would pass
the walks' bound (``operand_makers.ADD_LIMIT``: most of a small network, a long stretch of a
large one), it keeps none of them and the fix says it may still fail, offering the ways to find
one by running (``fp16_fix_ops.KeepNames.partial``)."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Set

#: op types whose output does not depend on float values before them (the walk stops there)
EXACT_TYPES = frozenset({"Constant", "ConstantOfShape", "Shape", "Size", "Range", "EyeLike"})


def float16_reads(graph, quantiser: str, kept: Set[str], keep_name: Dict[str, str],
                  outputs_float16: Callable[[str], Optional[bool]],
                  left_out=()) -> List[str]:
    """The ops (golden names, nearest first) making in float16 the values ``quantiser`` reads,
    up its inputs transitively (module docstring), none of ``kept`` nor ``left_out`` (by their
    keep_dtype names in ``keep_name``).
    ``graph``: ``golden_edges.graph_edges``' shape; ``outputs_float16(op)``: whether the run
    outputs an op in float16 (None: the run names none of its outputs, kept on the chance where
    ``keep_name`` names it)."""
    from collections import deque

    inputs, producers, _, types = graph
    found: List[str] = []
    seen: Set[str] = {quantiser}
    todo = deque([quantiser])
    while todo:
        op = todo.popleft()
        for t in inputs.get(op, ()):
            made = producers.get(t) if t else None
            if made is None or made[0] in seen:
                continue  # a graph input or a weight: nothing before it to keep
            up = made[0]
            seen.add(up)
            if up in kept or types.get(up, "") in EXACT_TYPES:
                continue
            if up in keep_name and keep_name[up] not in left_out \
                    and outputs_float16(up) is not False:
                found.append(up)
            todo.append(up)
    return found


def reads_reason(groups: Sequence[tuple]) -> str:
    """The reason's part for ``float16_reads``' finds: ``groups`` of ``(quantiser's keep name,
    its input's op, [ops kept])``."""
    from .printable import printable

    text = ""
    for quantiser, fed_by, ops in groups[:2]:
        shown = ", ".join(printable(n) for n in ops[:3]) + (", ..." if len(ops) > 3 else "")
        they = "they make" if len(ops) > 1 else "it makes"
        text += (f"; {shown} kept too: the kept {printable(quantiser)} rounds "
                 f"{printable(fed_by)}'s output to integer codes, which {they} in float16 in "
                 "this run, where float16's rounding of it moves whole code steps")
    if len(groups) > 2:
        text += f" (and {len(groups) - 2} more such quantisers)"
    return text


def reads_stopped_reason(quantiser: str, count: int, limit: int) -> str:
    """The reason's part where ``float16_reads`` found ``count`` ops, more than the ``limit``
    the walks add to a list."""
    from .printable import printable

    return (f"; pasted, the list may still fail: the kept {printable(quantiser)} rounds to "
            f"integer codes values that {count} ops before it make in float16, more than a list "
            f"takes on for it (at most {limit} added)")


__all__ = ["EXACT_TYPES", "float16_reads", "reads_reason", "reads_stopped_reason"]

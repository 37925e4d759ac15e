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
one by running (``fp16_fix_ops.KeepNames.partial``).

Only where the check judges some tensor by its largest error (max_abs, max_rel:
``WORST_POSITION``): a code step moves the few positions where a value lies near a rounding
boundary, which decides a maximum but barely an aggregate. Review RK of audit 36 (K3): at the
default cosine check the lists printed without these ops already passed pasted (4 small layers
then an overflow: 13 ops pass, the walk made it 37; RD's model at cosine 0.999: 13 pass, 19
printed; 6 small layers: 13 pass, and the hint said they may still fail); at RD's ``max_abs``
0.001 the 13 fail (3.06) and the 19 pass. There it walks from each quantiser the list keeps as
well as those ``operand_makers`` adds, and up through kept ops (a kept ``Add`` joining a side
branch the run makes in float16 into a kept quantiser's input: without the branch the list
failed pasted, 3.18 > 2), and a quantiser the list does not keep that kept values reach
(``unkept_quantiser``: the Relu after an overflow only below -65504 turns it to 0, so the next
layer's quantiser carries no Inf; a QuantizeLinear's int8 codes never do) makes the fix say it
may still fail (keeping that quantiser and what it reads was not enough there, high precision
passed)."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Set

#: op types whose output does not depend on float values before them (the walk stops there)
EXACT_TYPES = frozenset({"Constant", "ConstantOfShape", "Shape", "Size", "Range", "EyeLike"})
#: metrics decided by a tensor's worst position: one code step there can fail the check
WORST_POSITION = frozenset({"max_abs", "max_rel"})


def float16_reads(graph, quantiser: str, kept: Set[str], keep_name: Dict[str, str],
                  outputs_float16: Callable[[str], Optional[bool]],
                  left_out=(), through_kept=False) -> List[str]:
    """The ops (golden names, nearest first) making in float16 the values ``quantiser`` reads,
    up its inputs transitively (module docstring), none of ``kept`` nor ``left_out`` (by their
    keep_dtype names in ``keep_name``).
    ``graph``: ``golden_edges.graph_edges``' shape; ``outputs_float16(op)``: whether the run
    outputs an op in float16 (None: the run names none of its outputs, kept on the chance where
    ``keep_name`` names it); ``through_kept``: go on up through kept ops (a kept quantiser's
    input: a kept join adds a branch the run still makes in float16, review RK K2) instead of
    stopping there."""
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
            if types.get(up, "") in EXACT_TYPES or up in kept and not through_kept:
                continue
            if up not in kept and up in keep_name and keep_name[up] not in left_out \
                    and outputs_float16(up) is not False:
                found.append(up)
            todo.append(up)
    return found


def worst_position_judged(policy) -> bool:
    """Whether ``policy`` (a ``Verdict``'s) judges some tensor by its worst position
    (``WORST_POSITION``), where one code step decides the verdict; True where no policy tells."""
    if policy is None:
        return True
    return any(t.metric in WORST_POSITION
               for t in (policy.default, *(t for _, t in policy.per_op)))


def unkept_quantiser(graph, kept: Set[str], snapping) -> Optional[tuple]:
    """``(quantiser, kept op)``: the first quantiser (op types ``snapping``, in the model's order)
    the list does not keep that kept values reach, through any ops but ``EXACT_TYPES``, and a
    kept op they come from; None where none. The run rounds what it reads to float16 before the
    codes (a QuantizeLinear's int8 output is never a row a list keeps, nor one the Inf runs
    through), so some codes may differ by a step pasted (review RK K1)."""
    from collections import deque

    inputs, producers, _, types = graph
    readers: Dict[str, List[str]] = {}
    for op, ts in inputs.items():
        for t in ts:
            if t in producers:
                readers.setdefault(producers[t][0], []).append(op)
    origin = {op: op for op in inputs if op in kept}
    todo = deque(origin)
    while todo:
        op = todo.popleft()
        for r in readers.get(op, ()):
            if r not in origin and types.get(r, "") not in EXACT_TYPES:
                origin[r] = origin[op]
                todo.append(r)
    order = list(inputs)
    found = [q for q in order if q in origin and q not in kept
             and types.get(q, "") in snapping]
    return (found[0], origin[found[0]]) if found else None


def unkept_reason(quantiser: str, source: str) -> str:
    """The reason's part for ``unkept_quantiser``' find."""
    from .printable import printable

    return (f"; pasted, the list may still fail: {printable(quantiser)}, which the list does "
            f"not keep, rounds to integer codes values made from the kept {printable(source)}'s "
            "output, in float16 in this run, and the check judges a tensor by its largest "
            "error, which one code step can decide")


def reads_reason(groups: Sequence[tuple]) -> str:
    """The reason's part for ``float16_reads``' finds: ``groups`` of ``(quantiser's keep name,
    its input's op, [ops kept])``."""
    from .printable import printable

    text = ""
    for quantiser, fed_by, ops in groups[:2]:
        shown = ", ".join(printable(n) for n in ops[:3]) + (", ..." if len(ops) > 3 else "")
        they = "these ops compute it, and what it is made from," if len(ops) > 1 else \
            "it computes it"
        text += (f"; {shown} kept too: the kept {printable(quantiser)} rounds "
                 f"{printable(fed_by)}'s output to integer codes, and {they} in float16 in "
                 "this run, where float16's rounding moves whole code steps, which the check's "
                 "largest error can show")
    if len(groups) > 2:
        text += f" (and {len(groups) - 2} more such quantisers)"
    return text


def reads_stopped_reason(quantiser: str, count: int, limit: int, added: int = 0) -> str:
    """The reason's part where ``float16_reads`` found ``count`` ops, which with the ``added``
    ops the walks added already pass the ``limit`` they add to a list (review RK K4)."""
    from .printable import printable

    already = f" with the {added} added already" if added else ""
    return (f"; pasted, the list may still fail: the kept {printable(quantiser)} rounds to "
            f"integer codes values that {count} ops before it make in float16, which{already} "
            f"pass the {limit} ops the walks add to a list")


__all__ = ["EXACT_TYPES", "WORST_POSITION", "float16_reads", "reads_reason",
           "reads_stopped_reason", "unkept_quantiser", "unkept_reason", "worst_position_judged"]

"""What a float16-range keep_dtype fix must keep beside an overflowing Cube op it keeps: the ops
that compute its operands in float16. Kept in float32, the op no longer overflows, but it still
takes operands float16 rounded, and values past 65504 magnify that rounding: T1's ViT with its
q/k weights x1000 (attention scores 7.6e4-9.2e4) got a 58-op list from the attention MatMul on,
without the float16 q_proj/k_proj MatMuls feeding it; pasted in high precision it failed at the
Softmax (cosine 0.985768: score errors of 63-74 on scores of 7.9e4 flipped a row), and the
diagnosis' fix, keeping q_proj, passed.

The list keeps the nearest ops on each operand's path that the run outputs in float16 (walking
up through ops it outputs in float32, or does not dump), up to and including the Cube op that
computes the operand. Where float16 values lie further up still (a float16 Conv embedding the
patches, under a float32 LayerNorm), their rounding reaches the kept ops too, which no list
confined to them removes: the fix then says it may still fail (``KeepNames.partial``)."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from ..compare.result import TensorCompare, Verdict
from ..core.fp16 import FP16_MAX
from .printable import printable

#: how many ops the walk from one kept op visits, and how many producers a list takes on: past
#: them, none is added and the fix says it may still fail
VISIT_LIMIT = 64
ADD_LIMIT = 32


def overflowing_cube_ops(verdict: Verdict, range_inputs: Sequence, names: Sequence[str],
                         by_name: Dict[str, TensorCompare]) -> List[Tuple[str, List[str]]]:
    """``[(kept op, its golden names)]``: the ops of ``names`` that run on the Cube unit and
    whose golden output passes 65504 (an ``output`` overflow finding, or a failing row's own
    |golden|), in ``names``' order."""
    from ..compare.fp16_range import OVERFLOW
    from .failure_kinds import on_cube

    big = {f.op for f in range_inputs
           if f.kind == OVERFLOW and str(f.slot).startswith("output")}
    big |= {n for f in verdict.failures if f.row.metrics is not None
            and f.row.metrics.max_abs_golden > FP16_MAX
            for n in (f.row.golden_name, *f.row.original_names) if n}
    out, seen = [], set()
    for name in names:
        row = by_name.get(name)
        golden = [n for n in dict.fromkeys(
            (name, *((row.golden_name, *row.original_names) if row is not None else ()))) if n]
        if row is None or id(row) in seen or not on_cube(row) or not set(golden) & big:
            continue
        seen.add(id(row))
        out.append((name, golden))
    return out


def float16_producers(verdict: Verdict, range_inputs: Sequence, names: Sequence[str],
                      rows: Sequence[TensorCompare], row_names) -> Tuple[dict, Optional[tuple]]:
    """``({producer op: the kept op it feeds}, further)``: the ops computing the operands of each
    overflowing Cube op of ``names`` (``overflowing_cube_ops``) that the run outputs in float16
    and ``names`` does not keep, by their model names; ``further``: ``(kept op, label)`` of the
    first float16 op found further up (beyond those), or ``(kept op, "")`` where its walk went
    past ``VISIT_LIMIT`` or ``ADD_LIMIT`` (none of its producers is added), else None.
    ``rows``: the compared rows; the edges from ``range_inputs.feeding()`` (``({}, None)`` where
    not known). ``row_names(row)``: the names a keep_dtype fix may name a row's op by."""
    from .failure_kinds import failures_then_rows, on_cube

    feeding = range_inputs.feeding() if hasattr(range_inputs, "feeding") else None
    if not feeding:
        return {}, None
    by_name: Dict[str, TensorCompare] = {}
    for r in failures_then_rows(verdict, rows):
        for n in row_names(r):
            if n:
                by_name.setdefault(n, r)
    kept = set(names)
    added: dict = {}
    further = None
    for name, golden in overflowing_cube_ops(verdict, range_inputs, names, by_name):
        found, beyond = _walk(golden, feeding, by_name, kept, row_names, on_cube)
        if found is None or len(added) + len(found) > ADD_LIMIT:
            further = further or (name, "")
            continue
        for row in found:
            for n in _model_names(row):
                added.setdefault(n, name)
        if further is None and beyond is not None:
            further = (name, beyond.label)
    return added, further


def _model_names(row: TensorCompare) -> Tuple[str, ...]:
    """The names a keep_dtype fix keeps ``row``'s op by: its original ops where fused, else its
    model name."""
    from .model_spelling import row_model_name

    return tuple(row.original_names) or (row_model_name(row) or row.op_name,)


def _walk(start: Sequence[str], feeding, by_name, kept, row_names, on_cube):
    """(the rows the run outputs in float16 on the paths up from ``start``'s operands, to the
    first Cube op on each, none kept; the first float16 row found beyond those, or None), or
    (None, None) past ``VISIT_LIMIT`` ops."""
    found: List[TensorCompare] = []
    seen = set(start)
    todo = [(p, False) for g in start for p in feeding.get(g, ())]
    beyond = None
    while todo:
        op, past = todo.pop(0)
        if op in seen or op in kept:
            continue
        seen.add(op)
        if len(seen) > VISIT_LIMIT:
            return None, None
        row = by_name.get(op)
        if row is not None and set(row_names(row)) & kept:
            continue
        half = row is not None and row.dtype == "float16"
        mine = half and any(r is row for r in found)  # another member of a fused one found
        if half and past and not mine:  # float16 rounding the kept ops cannot shed
            beyond = beyond or row
            continue
        if half and not mine:
            found.append(row)
        todo += [(p, past or (half and on_cube(row))) for p in feeding.get(op, ())]
    return found, beyond


def producers_reason(added: dict, further: Optional[tuple]) -> str:
    """The reason's part for ``float16_producers``' result (``""`` where nothing was found)."""
    text = ""
    if added:
        ops = list(added)
        shown = ", ".join(printable(n) for n in ops[:3]) + (", ..." if len(ops) > 3 else "")
        fed = ", ".join(printable(n) for n in dict.fromkeys(added.values()))
        they, their = ("it computes", "its") if len(ops) == 1 else ("they compute", "their")
        text += (f"; {shown} kept too: float16 in this run, {they} the operands of "
                 f"{fed}, whose values pass 65504, where {their} rounding is magnified")
    if further:
        kept, label = further
        where = (f"float16 values further up ({printable(label)}, float16 in this run)" if label
                 else "float16 ops too many to list")
        text += (f"; pasted, the list may still fail: the operands of {printable(kept)}, whose "
                 f"values pass 65504, are computed from {where}, whose rounding they magnify")
    return text

"""Whether a float16-range keep_dtype fix can work at all: an op it keeps in float32 that takes
an operand from an op it does not keep, output in float16 by the failing run with golden values
all below float16's smallest normal (2**-14), takes that operand rounded already, which no list
confined to the failing ops gives back.

A random-init YOLOv8n (ultralytics export, BatchNorm statistics at init) failed first at
/model.9/cv2/conv/Conv, its operand from /model.9/Concat flushing to 0; the hint kept that Conv,
the Concat and two ops after them. Pasted, the first failure moved to the kept Concat (float32,
cosine 0.541978: its float16 inputs from /model.9/cv1/act/Mul and three MaxPools, all below
2**-14 and failing the check by their plain cosine, 0.305025 for the Mul, though passing by
float16's allowance for values that small), and each later hint moved it one op earlier. An
SSDlite kept its first failing Conv+Relu the same way and failed there (cosine 0.933781). Such a
fix is named, never offered (``fp16_fix_ops.keep_dtype_names``: ``KeepNames.unexplained``), and
the hint points to the diagnosis, which finds a mode by running it."""
from __future__ import annotations

from typing import List, Sequence, Tuple

from ..compare.result import TensorCompare, Verdict
from .printable import printable


def rounded_feeds(verdict: Verdict, feeding, names: Sequence[str], row_names,
                  rows: Sequence[TensorCompare] = ()) -> List[Tuple[str, str, TensorCompare]]:
    """``[(kept op, producer, its row)]``, in ``names``' order: each op of ``names`` (a keep_dtype
    fix) and an op whose output it takes (``feeding``: ``{golden op: its producers}``,
    ``compare.fp16_range.input_producers``; nothing where None) that ``names`` does not keep,
    whose row (among ``rows``, the compared rows, and the failures') the run output in float16,
    its golden values all below float16's smallest normal and not all 0, and that fails the
    check by its plain figure (it fails, or passes only by float16's allowance for such values:
    ``compare.tiny_values``). ``row_names(row)``: the names a keep_dtype fix may name a row's op
    by (``fp16_fix_ops._row_names``)."""
    from .failure_kinds import failures_then_rows, tiny_and_failing

    if not feeding:
        return []
    failed = {id(f.row) for f in verdict.failures}
    by_name: dict = {}
    for r in failures_then_rows(verdict, rows):
        for n in row_names(r):
            if n:
                by_name.setdefault(n, r)
    kept = set(names)
    found = []
    for name in names:
        own = by_name.get(name)
        golden = dict.fromkeys((name, *((own.golden_name, *own.original_names) if own else ())))
        producers = dict.fromkeys(p for g in golden if g for p in feeding.get(g, ()))
        for producer in producers:
            row = by_name.get(producer)
            # float16 rounds it (bfloat16 keeps float32's exponent range), below its normals
            if (row is None or row is own or set(row_names(row)) & kept or row.dtype != "float16"
                    or not tiny_and_failing(row, verdict.policy, id(row) in failed)):
                continue
            found.append((name, producer, row))
    return found


def rounded_reason(verdict: Verdict, found: str,
                   fed: Sequence[Tuple[str, str, TensorCompare]]) -> str:
    """The reason of a hint whose keep_dtype fix keeps ops fed rounded values (``rounded_feeds``,
    not empty; ``found``: what leaves the float16 range where, ``fp16_fix_ops.found_at``): what
    was found, which op takes values rounded by which ops it does not keep, and that no op list
    is known to fix it."""
    kept, first, row = fed[0]
    producers = list(dict.fromkeys(p for n, p, _ in fed if n == kept))
    shown = ", ".join(printable(p) for p in producers[:3]) + (
        ", ..." if len(producers) > 3 else "")
    metric = verdict.policy.threshold_for(row.names).metric
    figure = getattr(row.metrics, metric)
    many = len(producers) > 1
    # a row the check passed by float16's allowance for tiny values: its plain figure is below
    # the threshold, the check is not failed ("failing the check" read wrong: T3's detector)
    failed = any(f.row is row for f in verdict.failures)
    judged = ("failing the check" if failed else "below the threshold, the check passing it "
              "only by float16's allowance for values that small")
    return (f"{found}, but keeping them in float32 is no fix: {printable(kept)} takes values "
            f"float16 rounded already from {shown}, not kept (float16 in this run, golden "
            f"values below float16's smallest normal: {printable(first)}'s at most "
            f"|{row.metrics.max_abs_golden:.3g}|, its plain {metric} {figure:.6f} {judged}"
            f"{', as the others do' if many else ''}), which no op list confined to the "
            "failing ops restores: no op list is known to fix it")

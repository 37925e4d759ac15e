"""What a float16-range keep_dtype fix must keep beside a kept op that multiplies a kept value by
an operand from an op it leaves in float16: the ops making that operand, where float16's
rounding of it is what the kept op then computes with.

Two cases, each from what failed pasted:

- float16 holds the operand badly: its golden values all lie below float16's smallest normal
  (2**-14, where float16 keeps 10 bits or fewer of a value, 1 to 3 at 1e-7), or pass 65504.
  ``x -> DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul(Mul(x_scale, w_scale))`` with a
  scale product of 7.8e-8 (float16: 6.0e-8) and the accumulator's Cast past 65504: the hint kept
  the Cast and the ops after it; pasted, the kept Mul multiplied by the ruined scale and the
  bias Add after it failed (cosine 0.992564 < 0.999;
  ``tests/plugin/test_keep_list_scales_pasted.py``).
- the kept value is requantised further on, by a DynamicQuantizeLinear or QuantizeLinear the
  list keeps: rounding to integer codes turns any error at all, float16's 2**-12 of a normal
  scale included, into whole code steps at some positions, which each later requantisation
  spreads. IMG.LY's dynamically quantised ISNet (audit 35): its first scale product,
  ``/conv_in/Conv_quant_scales_mul``, is 1.02e-4 (normal; 53 of its 119 scale products are
  below the normals, as low as 3.3e-6); the hint kept the accumulator's Cast and the 842 ops its
  Inf runs through, and pasted failed at the matte's /Sigmoid (max_abs 0.097 > 1/255); with
  ``/conv_in/Conv_quant_scales_mul`` kept too it failed by 0.078 (``input_QuantizeLinear``'s
  ``x_scale``, float16, rescaling the first layer against its bias), with it and
  ``input_QuantizeLinear`` kept it passed.

The walk goes up from such an operand through the ops that carry it on (Reshape, Cast, a scale
by constants: ``compare.flush_chain.passing_chain``, the flush list's walk) to the op making it,
and keeps those of them the run outputs in float16 there (a Cast of an int32 accumulator, not
the integer ConvInteger before it). Keeping only the ops holding values below the normals was
the 0.078 above. A maker this walk does not keep (a Cube op, a join: ``flush_chain.takes_part``,
an operand's maker being kept for its inputs, which a kept Cube op still takes in float16 on
310P/910 chips: ``triage.cube_keeps``) is not kept, and the fix says it may still fail;
``requant_reads``' walk, keeping ops for their outputs, does keep a Cube op.

Only where the kept op takes a kept value too, which the bad operand scales: a kept op whose
own input is a float16 network's subnormal activations takes values no list confined to the
failing ops restores (``rounded_upstream``); and an operand that is only added moves the output
by at most float16's step at that operand: a Conv's, ConvTranspose's or Gemm's bias (input 2,
Gemm's ``C``, ``SCALED_SLOTS``) is such an operand, and so is a kept value there (review RD of
audit 35: ``Conv(kept, W, Mul(ReduceMean(x), 1e-6))`` added the bias's Mul and ReduceMean, and
said the Conv multiplied the kept values by them).

A quantiser this adds, or one the list keeps, reads values too, which an earlier layer or a
branch may make in float16: where the check judges a tensor by its largest error, the ops making
them are kept with it, and a quantiser the list does not keep rounding kept values makes the fix
say it may still fail (``requant_reads``)."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

from ..compare.result import TensorCompare, Verdict
from ..core.fp16 import FP16_MAX
from .printable import printable

#: ONNX op types whose output scales with each operand: an operand's relative error is the
#: output's (for an Add it is an absolute error, at most float16's step at that operand)
SCALING_TYPES = frozenset({"Mul", "Div", "MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum"})
#: the input slots of a ``SCALING_TYPES`` op that multiply (or divide) each other, where not all:
#: a Conv's and a Gemm's bias (input 2) is only added
SCALED_SLOTS = {"Conv": (0, 1), "ConvTranspose": (0, 1), "Gemm": (0, 1)}
#: ONNX op types that round a value to integer codes: an input error of any size moves some
SNAPPING_TYPES = frozenset({"DynamicQuantizeLinear", "QuantizeLinear"})
#: how many ops the walks add to one list: past it, none more is added and the fix says it
#: may still fail
ADD_LIMIT = 32


class Made(dict):
    """``{op to keep (its keep_dtype name): (kept op it feeds, the operand's op, why)}``, in the
    order found, ``why`` ``|peak|`` of an operand float16 holds badly or the kept quantiser
    requantising the product; ``stopped``: where a walk ended at a maker it does not keep (a Cube
    op, a join) or went past ``ADD_LIMIT``, as ``(kept op, maker, its type)`` (its type
    ``READS`` where ``requant_reads``' walk did), else None; ``verbs``: ``{(kept op, operand's
    op): how it scales the kept values by the operand}``; ``reads``: ``[(a quantiser added, its
    input's op, [ops added making what it reads in float16])]`` (``requant_reads``), their
    entries' ``why`` ``READS``; ``reads_stopped``: ``(quantiser, how many ops, how many added
    before)`` where what it reads passed ``ADD_LIMIT``, else None."""

    stopped: Optional[Tuple[str, str, str]] = None
    reads_stopped: Optional[Tuple[str, int, int]] = None
    #: ``(quantiser, kept op)``: a quantiser the list does not keep rounding values made from
    #: a kept op's (``requant_reads.unkept_quantiser``), else None
    unkept: Optional[Tuple[str, str]] = None

    def __init__(self):
        super().__init__()
        self.verbs: Dict[Tuple[str, str], str] = {}
        self.reads: List[tuple] = []


#: ``Made``'s ``why`` of an op kept for the values a quantiser it adds reads
READS = ("reads",)


def operand_makers(verdict: Verdict, names: Sequence[str], rows: Sequence[TensorCompare],
                   model, left_out=(), feeding=None) -> Made:
    """The ops making an operand of each op of ``names`` (a keep_dtype fix, model names) that
    scales a kept value by it, where the run rounds it to float16 and that matters (module
    docstring), and of each op this adds, by their keep_dtype names, except ``left_out``.
    ``rows``: the compared rows (the failures' where empty); ``model``: the ONNX model the golden
    ran (a path, ModelProto or ``ModelEdges``), else what ``feeding()`` returns (``{golden op:
    the ops whose outputs it takes}``, ``RangeFindings.feeding``: a golden's own operand files,
    all ``ascend-accuracy compare`` of the plugin's cached golden has); nothing where neither
    tells."""
    from ..compare.flush_chain import passing_chain, takes_part
    from ..compare.golden_edges import graph_edges
    from .failure_kinds import failures_then_rows

    found = Made()
    every = failures_then_rows(verdict, rows)
    graph = graph_edges(model) if model is not None else None
    edges = feeding() if (not graph or not graph[0]) and feeding is not None else None
    if edges:
        graph = _feeding_graph(edges, every)
    if not graph or not graph[0]:
        return found
    types = graph[3]
    by_slot: Dict[Tuple[str, str], TensorCompare] = {}
    keep_name: Dict[str, str] = {}  # golden op name -> the name keep_dtype takes
    for r in every:
        if r.golden_name:
            by_slot.setdefault((r.golden_name, r.golden_slot), r)
            keep_name.setdefault(r.golden_name, _keep_name(r))
        for n in r.original_names:  # a fused op's members, each kept by its own name
            keep_name.setdefault(n, n)
    wanted = set(names)
    kept = {g for g, n in keep_name.items() if n in wanted} | (wanted & set(graph[0]))
    snapped = _requantised(graph, kept)
    first = set(kept)
    todo = [g for g in graph[0] if g in kept]
    added: List[str] = []
    while todo:
        name = todo.pop(0)
        if types.get(name, "") not in SCALING_TYPES:
            continue
        slots = SCALED_SLOTS.get(types[name])
        made = [graph[1].get(t) if slots is None or k in slots else None
                for k, t in enumerate(graph[0].get(name, ()))]
        if not any(m is not None and m[0] in kept for m in made):
            continue  # no kept value flows in: rounded_upstream's case, not this one
        for k, m in enumerate(made):
            row = by_slot.get((m[0], f"output:{m[1]}")) if m is not None else None
            why = _why(row, snapped.get(name)) if m is not None and m[0] not in kept else None
            if why is None:
                continue
            chain, maker = passing_chain(name, f"input:{k}", graph)
            ops = [c for c in chain if c[0] not in kept]
            if maker is not None and maker[0] not in kept:
                if takes_part(graph, maker):
                    ops.append(maker)
                elif found.stopped is None:
                    found.stopped = (name, maker[0], types.get(maker[0], "op"))
            ops = [o for o, slot in ops if o in keep_name and keep_name[o] not in left_out
                   and _float16_at(by_slot.get((o, slot)))]
            if len(found) + len(ops) > ADD_LIMIT:
                found.stopped = found.stopped or (name, "", "")
                return found
            for op in ops:
                kept.add(op)
                todo.append(op)
                added.append(op)
                if name in snapped:
                    snapped[op] = snapped[name]
                found.setdefault(keep_name[op], (keep_name.get(name, name), m[0], why))
            found.verbs.setdefault((keep_name.get(name, name), m[0]), _verb(types[name], k))
    from .requant_reads import unkept_quantiser, worst_position_judged

    if not worst_position_judged(getattr(verdict, "policy", None)):
        return found  # (code steps at some positions: no aggregate metric tells them, RK K3)
    _with_reads(found, graph, [*(a for a in added if types.get(a, "") in SNAPPING_TYPES),
                               *(g for g in graph[0] if g in first and g not in left_out
                                 and types.get(g, "") in SNAPPING_TYPES)],
                kept, keep_name, every, left_out)
    unkept = unkept_quantiser(graph, kept, SNAPPING_TYPES)
    if unkept:
        found.unkept = tuple(keep_name.get(n, n) for n in unkept)
        found.stopped = found.stopped or (unkept[0], "", READS)
    return found


def _verb(kind: str, k: int) -> str:
    """How an op of type ``kind`` scales the kept values by its operand in input ``k``, "{}"
    for the operand's op: a Div divides (review RD of audit 35, R4), the others multiply."""
    if kind != "Div":
        return "multiplies the kept values by {}'s output"
    return ("divides the kept values by {}'s output" if k else
            "divides {}'s output by the kept values")


def _with_reads(found: Made, graph, quantisers: Sequence[str], kept: Set[str],
                keep_name: Dict[str, str], rows: Sequence[TensorCompare], left_out) -> None:
    """Add to ``found`` the ops making in float16 what each of ``quantisers`` (ops it added,
    then those kept already) reads (``requant_reads``), through kept ops, or say where they
    pass ``ADD_LIMIT``."""
    from .requant_reads import float16_reads

    dtypes: Dict[str, Set[str]] = {}
    for r in rows:
        if r.golden_name and r.golden_slot.startswith("output:"):
            dtypes.setdefault(r.golden_name, set()).add(r.dtype)
    for q in quantisers:
        ops = float16_reads(graph, q, kept, keep_name,
                            lambda op: "float16" in dtypes[op] if op in dtypes else None,
                            left_out, through_kept=True)
        if len(found) + len(ops) > ADD_LIMIT:
            found.stopped = found.stopped or (q, "", READS)
            found.reads_stopped = (keep_name.get(q, q), len(ops), len(found))
            return
        if ops:
            fed = next((graph[1][t][0] for t in graph[0].get(q, ()) if t in graph[1]), "")
            kept.update(ops)
            found.reads.append((keep_name.get(q, q), fed, [keep_name[o] for o in ops]))
            for op in ops:
                found.setdefault(keep_name[op], (keep_name.get(q, q), fed, READS))


def _feeding_graph(feeding, rows: Sequence[TensorCompare]):
    """``graph_edges``' shape from ``feeding`` and the rows' op types: each op's inputs are the
    ops feeding it (its weights and graph inputs unlisted: a scale by a weight hands its one
    computed input on), each taken at the output the run has in float16 (a
    DynamicQuantizeLinear's x_scale, not its uint8 codes), else its first."""
    types: Dict[str, str] = {}
    half: Dict[str, int] = {}
    for r in rows:
        if r.golden_name and r.op_type:
            types.setdefault(r.golden_name, r.op_type)
        if r.golden_name and r.dtype == "float16" and r.golden_slot.startswith("output:"):
            half.setdefault(r.golden_name, int(r.golden_slot.split(":")[1]))
    producers = {p: (p, half.get(p, 0)) for ops in feeding.values() for p in ops}
    return {op: list(ops) for op, ops in feeding.items()}, producers, {}, types


def _keep_name(row: TensorCompare) -> str:
    from .model_spelling import row_model_name

    return row_model_name(row) or row.golden_name


def _float16_at(row: Optional[TensorCompare]) -> bool:
    """Whether the run outputs ``row``'s tensor in float16 (None, no row of that slot: kept on
    the chance, as the op is one the run names)."""
    return row is None or row.dtype == "float16"


def _why(row: Optional[TensorCompare], quantiser: Optional[str]):
    """Why an operand in ``row`` (output in float16 by the run) must be made in float32: its
    golden's largest |value| where float16 holds it badly (all below its smallest normal, not
    all 0, or past 65504), else the kept ``quantiser`` requantising the product; None where
    neither, or the run does not output it in float16."""
    from ..compare.tiny_values import FP16_TINY

    m = row.metrics if row is not None else None
    if m is None or row.dtype != "float16":
        return None
    if 0 < m.max_abs_golden < FP16_TINY or m.max_abs_golden > FP16_MAX:
        return float(m.max_abs_golden)
    return quantiser


def _requantised(graph, kept: Set[str]) -> Dict[str, str]:
    """``{kept op: the nearest kept quantiser its output reaches through kept ops}``
    (``SNAPPING_TYPES``), in the model's order."""
    from collections import deque

    inputs, producers, _, types = graph
    out: Dict[str, str] = {}
    todo = deque((op, op) for op in inputs if op in kept and types.get(op, "") in SNAPPING_TYPES)
    while todo:
        op, quantiser = todo.popleft()
        for t in inputs.get(op, ()):
            made = producers.get(t)
            if made is not None and made[0] in kept and made[0] not in out:
                out[made[0]] = quantiser
                todo.append((made[0], quantiser))
    return out


def makers_reason(found: Made) -> str:
    """The reason's part for ``operand_makers``' result ("" where nothing was found)."""
    from .requant_reads import reads_reason, reads_stopped_reason, unkept_reason

    text = ""
    by_operand: Dict[Tuple[str, str], List[str]] = {}
    whys = {}
    for op, (kept, operand, why) in found.items():
        if why is READS:
            continue  # (requant_reads' part, after these)
        by_operand.setdefault((kept, operand), []).append(op)
        whys[(kept, operand)] = why
    for (kept, operand), ops in list(by_operand.items())[:2]:
        why = whys[(kept, operand)]
        shown = ", ".join(printable(n) for n in ops[:3]) + (", ..." if len(ops) > 3 else "")
        they = "they make" if len(ops) > 1 else "it makes"
        verb = found.verbs.get((kept, operand), "multiplies the kept values by {}'s output")
        text += (f"; {shown} kept too: {printable(kept)} {verb.format(printable(operand))}, "
                 f"which {they} in float16 in this run")
        if isinstance(why, str):
            text += (f", and the kept {printable(why)} requantises the product, where float16's "
                     "rounding of it (2**-12) moves whole code steps")
        else:
            text += (f" (golden |{why:.3g}|, "
                     + ("past 65504)" if why > FP16_MAX else
                        "below float16's smallest normal: float16 keeps few of its bits)"))
    if len(by_operand) > 2:
        text += f" (and {len(by_operand) - 2} more such operands)"
    text += reads_reason(found.reads)
    if found.reads_stopped:
        quantiser, count, added = found.reads_stopped
        text += reads_stopped_reason(quantiser, count, ADD_LIMIT, added)
    if found.unkept:
        text += unkept_reason(*found.unkept)
    if found.stopped is not None and found.stopped[2] is not READS:
        kept, maker, kind = found.stopped
        text += (f"; pasted, the list may still fail: {printable(kept)} multiplies kept values "
                 + (f"by an operand float16 rounds, made by {printable(maker)} (a {kind}), "
                    "which the list does not keep" if maker else
                    "by operands float16 rounds, made by more ops than the list takes on"))
    return text


__all__ = ["ADD_LIMIT", "Made", "READS", "SCALED_SLOTS", "SCALING_TYPES", "SNAPPING_TYPES",
           "makers_reason", "operand_makers"]

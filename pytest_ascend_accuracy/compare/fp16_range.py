"""Which golden values of failing operators leave the float16 range: past 65504, or so small
that float16 flushes them to zero.

An fp16 overflow does not always show in an operator's *output*: a BatchNormalization whose
running variance is 1e9 (the real PP-OCRv4 detector has one) turns that operand into inf when
ATC converts it to float16, and the output merely collapses. Looking at the golden *inputs* of
the first failing operators (weights included, as golden dumps record them) finds that case;
only a few small tensors are read, and only after a comparison failed.

Underflow is the other end: a non-zero value below half of float16's smallest subnormal
(2**-24, about 5.96e-8) rounds to 0 (round-to-nearest-even, as the emulator and ATC's
force_fp16 round every operator's inputs and outputs). A ``Mul(x, 1e-30)`` then outputs 0, and
the ``Mul(.., 1e30)`` after it gets 0 (0 * inf: NaN), so both ops must stay float32: a failing
op's golden operand that underflows names that op *and the op producing it* (found through the
golden's own files, or ``model``), and a failing op's golden output that underflows names the
op. Not every tiny value is a finding: values in float16's subnormal range (up to ~6.1e-5) lose
precision but stay non-zero and are never counted, exact zeros never count, and a tensor counts
only when the values flushing to zero carry so much of it that the flushed tensor alone would
fail the default check (cosine with itself < 0.95: a weight with a few 1e-9 entries is no
finding). An operand that enters its op's output only by addition or selection (``Add(var,
1e-12)``, ``Concat``) counts only where that output underflows as well: elsewhere flushing it
moves the output by less than float16 resolves.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Tuple

import numpy as np

from ..dump.dtypes import value_dtype
from ..dump.layout import op_by_model_name
from ..dump.model import DumpSet

from ..core.ascend_optypes import IF_TYPES, finished_types  # noqa: E402
from ..core.check_defaults import DEFAULT_THRESHOLD  # noqa: E402
from ..core.fp16 import FP16_MAX  # noqa: E402  (one definition, in core)
from .flush_chain import Walk, flush_makers, walked_on  # noqa: E402
from .golden_edges import (ModelEdges, graph_edges, operands_in_graph,  # noqa: E402,F401
                           producer_in_graph, producers_by_file)  # (ModelEdges: read here too)
from .quiet_rows import quiet_rows  # noqa: E402
from .zero_singular import (carries, flushed_into_singular, flushed_peak_any,  # noqa: E402
                            singular_operand)

OVERFLOW, UNDERFLOW = "overflow", "underflow"

#: ops whose output takes an operand's values only by adding them or selecting them: flushing a
#: tiny operand moves the output by at most that value (a finding only where the output is tiny);
#: ONNX types and the Ascend types ATC gives them (the compared rows' types, in Ascend dumps)
_ONNX_ADDITIVE = (
    "Add", "Sub", "Sum", "Mean", "Max", "Min", "Concat", "Split", "Slice", "Reshape",
    "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity", "Relu", "Gather", "Expand",
    "Tile", "Pad", "MaxPool", "GlobalMaxPool", "ReduceMax", "ReduceMin", "Where", "Neg", "Abs",
    "Clip", "DepthToSpace", "SpaceToDepth",
)
_ADDITIVE = (frozenset(_ONNX_ADDITIVE) | {a for t in _ONNX_ADDITIVE for a in finished_types(t)}
             | {"AddN"})


@dataclass(frozen=True)
class RangeFinding:
    """A golden tensor of op ``op`` (slot ``input:k``, or ``output:k``) whose values leave the
    float16 range: ``kind`` ``overflow`` (``max_abs``: its largest |value|, past 65504) or
    ``underflow`` (``max_abs``: the largest |value| float16 flushes to 0). ``op_type``: the
    type of ``op`` (an underflow's as ``golden_inputs_past_fp16`` finds it, an overflow's the
    golden's; "" where unknown). ``feeds``: for an underflowing output found as the producer of
    another op's flushed operand, that op ("" for one found as an op's own output): keeping
    ``op`` in float32 is what gives that op its values back."""

    op: str
    slot: str
    max_abs: float
    kind: str = OVERFLOW
    op_type: str = ""
    feeds: str = ""
    #: where an op's flushed values come from, for one kept as it takes them (``flush_chain``)
    through: str = ""

    def describe(self) -> str:
        if self.kind == UNDERFLOW and self.through and self.slot.startswith("input"):
            return (f"{self.op} {self.slot} takes values float16 flushes to 0 "
                    f"(|{self.max_abs:.4g}|) from {self.through}")
        if self.kind == UNDERFLOW and self.through:
            return (f"{self.op} {self.slot} is computed from values float16 flushes to 0 at "
                    f"{self.through}")
        if self.kind == UNDERFLOW:
            return f"{self.op} {self.slot} underflows to 0 (|{self.max_abs:.4g}|)"
        return f"{self.op} {self.slot} reaches |{self.max_abs:.4g}|"


class RangeFindings(list):
    """``golden_inputs_past_fp16``'s findings (a list of ``RangeFinding``) and ``checked``, how
    many float operands it looked at: 0 means the golden held none of the failing ops' inputs
    (a golden stored with outputs only, and no model to find them from), so the absence of a
    finding says nothing. ``ignored``: the ops of findings that the verdict ignores, found
    upstream of its failures (``failing_ops_past_fp16``)."""

    checked: int = 0
    ignored: Tuple[str, ...] = ()
    #: the ops of findings upstream of the failures that pass the verdict's own thresholds,
    #: though the default check fails them (a threshold lowered until they pass)
    passing: Tuple[str, ...] = ()
    #: the verdict ignores ops whose edges to the failures are unknown: not looked at
    ignored_unlooked: bool = False
    #: the failing rows' Ifs (the device dumps their outputs only) and those whose branch's
    #: golden tensors were read, with what was found there (``branch_range``)
    failing_ifs: Tuple[str, ...] = ()
    branches: Tuple[str, ...] = ()
    in_branches: Tuple[RangeFinding, ...] = ()
    #: the fused groups of the compared rows (each a row's ``original_names``, two or more):
    #: a keep_dtype fix keeping one member keeps the others (``fused_groups``)
    fused: Tuple[Tuple[Tuple[str, ...], str], ...] = ()
    #: where the walk up from a flushed value stopped short (``flush_chain.Walk``); overflows
    #: at the operands of a late op turning NaN/Inf, for the words only
    walk_stopped: str = ""
    late_overflow: Tuple[RangeFinding, ...] = ()
    #: ``input_producers`` of the golden and model the findings were read from, to call
    #: (``failing_ops_past_fp16``; not a tuple, which ``in_model_spelling`` would rename)
    read_producers: Optional[Callable[[], Optional[Dict[str, List[str]]]]] = None

    def feeding(self) -> Optional[Dict[str, List[str]]]:
        """``read_producers()``, read once; None where not known."""
        if self.read_producers is not None and not hasattr(self, "_feeding"):
            self._feeding = self.read_producers()
        return getattr(self, "_feeding", None)

    #: the findings of the failing ops after the first ``FAILING_LIMIT`` rows, to call (up to
    #: ``LATER_LIMIT`` ops; ``failing_ops_past_fp16``): read only where a fix asks (``later``)
    read_later: Optional[Callable[[], list]] = None

    def later(self) -> list:
        """``read_later()``, read once: whether a failing op after the first few loses values of
        its own to float16 (a fix keeping the first ones names no op of it); [] where not known."""
        if self.read_later is not None and not hasattr(self, "_later"):
            self._later = list(self.read_later())
        return getattr(self, "_later", [])


def golden_inputs_past_fp16(golden: DumpSet, op_names: Iterable[str], *, limit: int = 3,
                            model=None, op_types: Optional[Mapping[str, str]] = None
                            ) -> RangeFindings:
    """Findings for the golden inputs (past 65504, or flushed to 0) and outputs (past 65504, or
    flushed to 0) of the first ``limit`` of ``op_names`` found in ``golden``; an operand flushed
    to 0 also names the op that produced it (``output:k``), right after. An op the golden holds
    no inputs of (a golden of outputs only) has its operands looked up among the golden outputs
    of their producers in ``model`` (the ONNX model the golden ran, a path or ModelProto), when
    given. An op's type (whether its operands enter its output only additively, and the findings'
    ``op_type``) is the golden's, else ``model``'s, else ``op_types``' ({golden op name: type},
    the compared rows' types; ONNX or Ascend spelling); an op of unknown type counts as one
    that scales its operands."""
    found = RangeFindings()
    seen = 0
    graph = None
    made_by: Optional[Dict[str, Tuple[str, str]]] = None

    def type_of(name: str, known: str = "") -> str:
        nonlocal graph
        if not known and model is not None:
            graph = graph_edges(model) if graph is None else graph
            known = graph[3].get(name, "")
        return known or (op_types or {}).get(name, "")

    for name in op_names:
        op = op_by_model_name(golden, name)
        if op is None:
            continue
        seen += 1
        operands = [(t.slot, t.load, t.source) for t in op.inputs
                    if value_dtype(t.dtype).kind == "f"]
        if not op.inputs and model is not None:
            graph = graph_edges(model) if graph is None else graph
            operands = [(slot, load, None)
                        for slot, load in operands_in_graph(golden, op.name, graph)]
        op_type = ""
        out_flushed = [(t.slot, peak) for t in op.outputs if value_dtype(t.dtype).kind == "f"
                       for peak in [_flushed_peak(_read(t.load))] if peak is not None]
        for slot, load, source in operands:
            values = _read(load)
            if values is None:  # unreadable operand: the comparison already reported its file
                continue
            found.checked += 1
            finite = values[np.isfinite(values)]
            peak = float(np.max(np.abs(finite))) if finite.size else 0.0
            if peak > FP16_MAX:
                _add(found, RangeFinding(op.name, slot, peak, OVERFLOW, op.op_type))
                continue
            tiny = _flushed_peak(values) or flushed_into_singular(  # a Log's: any value
                type_of(op.name, op.op_type), slot, values)
            if tiny is None:
                continue
            op_type = op_type or type_of(op.name, op.op_type)
            if op_type in _ADDITIVE and not out_flushed:
                continue
            _add(found, RangeFinding(op.name, slot, tiny, UNDERFLOW, op_type))
            if made_by is None:
                made_by = producers_by_file(golden)
            producer = made_by.get(source) if source else None
            if producer is None and model is not None:
                graph = graph_edges(model) if graph is None else graph
                producer = producer_in_graph(golden, op.name, slot, graph)
            # and up through ops carrying it on (a Transpose; a Concat's inputs holding it)
            todo, seen_ops = [(producer, op.name)], {op.name}
            walk = Walk() if singular_operand(type_of(op.name, op.op_type), slot) else None
            while todo:
                producer, feeds = todo.pop(0)
                if producer is None or producer[0] in seen_ops:
                    continue
                seen_ops.add(producer[0])
                made = op_by_model_name(golden, producer[0])
                kind = type_of(producer[0], made.op_type if made else "")
                peak, through = producer[2:] if len(producer) == 4 else (tiny, "")
                _add(found, RangeFinding(producer[0], producer[1], tiny if peak is None else peak,
                                         UNDERFLOW, kind, feeds=feeds, through=through))
                graph = graph_edges(model) if graph is None and model is not None else graph
                todo += [(p, producer[0]) for p in (
                    walked_on(golden, producer, graph, walk) if len(producer) == 4
                    else _carried_from(golden, producer[0], kind, graph, walk))]
            found.walk_stopped = found.walk_stopped or (walk.stopped if walk else "")
        for slot, tiny in out_flushed:
            op_type = op_type or type_of(op.name, op.op_type)
            _add(found, RangeFinding(op.name, slot, tiny, UNDERFLOW, op_type))
        # an output past 65504, where no operand told already: the compare's metrics leave out
        # positions where the device wrote Inf, so only the golden tensor itself tells an
        # overflow from an Inf made of a value rounded to 0 (a docs trial: that one got a
        # keep_dtype hint that looped)
        for t in (op.outputs if not any(f.op == op.name for f in found) else ()):
            _add_output_overflow(found, op, t)
        if seen >= limit:
            break
    return found


def _carried_from(golden: DumpSet, name: str, kind: str, graph, walk=None) -> list:
    """The ops whose outputs ``name`` (of type ``kind``) carries on into a flushed value: its
    first input's maker for an op that hands its input on (``zero_singular.carries``), for a
    Concat each input's maker whose golden output holds a value float16 flushes to 0, and,
    where the walk began at an operand singular at 0 (``walk``, a ``flush_chain.Walk``: a Log's,
    where any flushed value is an Inf), for any other op the makers ``flush_makers`` finds, with
    their own figures (a share of a tensor flushed elsewhere keeps the list to the ops failing:
    ``rounded_upstream``)."""
    if not graph:
        return []
    if carries(kind):
        made = producer_in_graph(golden, name, "input:0", graph)
        return [made] if made else []
    if kind not in ("Concat", "ConcatD", "ConcatV2", "ConcatV2D"):
        return flush_makers(golden, name, graph, walk) if walk is not None else []  # (audit 34)
    out = []
    for k in range(len(graph[0].get(name, ()))):
        made = producer_in_graph(golden, name, f"input:{k}", graph)
        op = op_by_model_name(golden, made[0]) if made else None
        values = [_read(t.load) for t in (op.outputs if op else ()) if t.slot == made[1]]
        if values and flushed_peak_any(values[0]) is not None:
            out.append(made)
    return out


def _read(load) -> Optional[np.ndarray]:
    try:
        return np.asarray(load())
    except Exception:  # unreadable: the comparison already reported its file
        return None


def _add(found: RangeFindings, finding: RangeFinding) -> None:
    """Append ``finding`` unless that op's slot is found already; one found already as the op's
    own output takes ``finding``'s ``feeds`` (an op looked at before the op it feeds)."""
    for k, f in enumerate(found):
        if f.op == finding.op and f.slot == finding.slot:
            if finding.feeds and not f.feeds:
                found[k] = replace(f, feeds=finding.feeds)
            return
    found.append(finding)


def _flushed_peak(values: Optional[np.ndarray]) -> Optional[float]:
    """The largest |value| of ``values`` that float16 rounds to 0, where the values rounding to
    0 carry so much of the tensor that it, flushed, has a cosine with itself below the default
    threshold (0 for a tensor all of whose non-zero values flush); else None. Exact zeros,
    non-finite values and values float16 keeps as subnormals never count."""
    if values is None or values.dtype.kind != "f" or values.dtype.itemsize <= 2:
        return None
    v = values[np.isfinite(values)].astype(np.float64, copy=False)
    if not v.size:
        return None
    with np.errstate(over="ignore"):
        lost = (v.astype(np.float16) == 0) & (v != 0)
    if not lost.any():
        return None
    u = np.abs(v) / np.max(np.abs(v))  # scaled: squares of 1e-30 or 1e30 stay representable
    kept = float(np.sum(u[~lost] ** 2)) / float(np.sum(u ** 2))
    if np.sqrt(kept) >= DEFAULT_THRESHOLD:
        return None
    return float(np.max(np.abs(v[lost])))


def ops_upstream(golden: DumpSet, targets: Iterable[str], *,
                 model=None) -> Optional[Dict[str, str]]:
    """``{op name: op type}`` of the golden ops whose outputs reach one of ``targets`` (golden op
    names; not the targets themselves), in the golden's (graph) order: the edges of ``model``
    (the ONNX model the golden ran) where given, else the golden's own operand files (a golden
    whose operands are the files of the outputs feeding them, as the cached onnxruntime golden
    stores them). None where neither tells the edges (an op earlier in graph order need not
    feed a target)."""
    edges = graph_edges(model) if model is not None else ({}, {}, {}, {})
    types = edges[3]
    feeds = _feeds(golden, edges)
    if feeds is None:
        return None
    wanted = [t for t in targets if t]
    seen, todo = set(wanted), list(wanted)
    while todo:
        for producer in feeds.get(todo.pop(), ()):
            if producer not in seen:
                seen.add(producer)
                todo.append(producer)
    up = seen - set(wanted)
    return {op.name: op.op_type or types.get(op.name, "") for op in golden.ops if op.name in up}


def input_producers(golden: DumpSet, model=None) -> Optional[Dict[str, List[str]]]:
    """``{golden op name: the ops whose outputs it takes}``: the edges of ``model`` (the ONNX
    model the golden ran) where given, else the golden's own operand files (a golden whose
    operands are the files of the outputs feeding them, as the cached onnxruntime golden stores
    them); None where neither tells."""
    return _feeds(golden, graph_edges(model) if model is not None else ({}, {}))


def _feeds(golden: DumpSet, edges) -> Optional[Dict[str, List[str]]]:
    """``input_producers`` from a model's ``graph_edges`` (empty: not known)."""
    inputs, producers = edges[:2]
    if inputs:
        return {name: [producers[t][0] for t in tensors if t in producers]
                for name, tensors in inputs.items()}
    made_by = producers_by_file(golden)  # an operand made by an op: that op's output file
    files = {op.name: [made_by[t.source][0] for t in op.inputs if t.source in made_by]
             for op in golden.ops}
    return files if any(files.values()) else None  # (inputs as files of their own: unknown)


#: how many ignored ops upstream of the failures have their golden operands looked at (and as
#: many passing ops the default check fails)
IGNORED_LIMIT = 8


def failing_ops_past_fp16(golden: DumpSet, verdict, rows=(), *, model=None,
                          op_types: Optional[Mapping[str, str]] = None) -> RangeFindings:
    """``golden_inputs_past_fp16`` of ``verdict``'s failing ops (the first ``FAILING_LIMIT``
    rows, every member of a fused one: ``_failing_members``), then of the ops upstream of them
    (by the graph's edges, ``ops_upstream``) that its policy ignores (up to ``IGNORED_LIMIT``,
    among ``rows``, the compared rows), then of those that pass it though the default check
    would fail them (``quiet_rows.off_by_default``, up to ``IGNORED_LIMIT``): an operand leaving
    the float16 range there moves every failing op after it. ``ignore=["norm"]`` hid norm's 1e9
    variance, and a threshold lowered until norm passed did the same (the printed "threshold
    that would pass", pasted): the hint said "no float16 overflow seen". Their findings come
    after the failing ops', their ops in ``.ignored`` and ``.passing``."""
    failing, first = _failing_members(golden, verdict)
    found = golden_inputs_past_fp16(golden, first, limit=len(first), model=model,
                                    op_types=op_types)
    found.fused = fused_groups((*rows, *(f.row for f in verdict.failures)))
    found.failing_ifs = tuple(dict.fromkeys(f.row.golden_name for f in verdict.failures
                                            if f.row.op_type in IF_TYPES and f.row.golden_name))
    found.read_producers = partial(input_producers, golden, model)
    later = [n for n in failing if n not in first]
    if later:
        found.read_later = partial(golden_inputs_past_fp16, golden, later, limit=LATER_LIMIT,
                                   model=model, op_types=op_types)
    _infinite_outputs_past_fp16(golden, verdict, found)
    _nonfinite_operands_past_fp16(golden, verdict, found, first, model, op_types)
    if rows:  # an op no row holds was folded at conversion: keeping it keeps nothing, and a
        # keep_dtype fix naming it is refused (a review: the printed fix, pasted, failed)
        run = {n for r in rows for n in (r.golden_name, r.op_name, *r.original_names) if n}
        found[:] = [f for f in found if f.op in run]
    ignored, passing = quiet_rows(verdict, rows) if failing else ([], [])
    if not (ignored or passing):
        return found
    up = ops_upstream(golden, failing, model=model)
    if up is None:  # an op earlier in graph order need not feed the failure, and a hint keeping
        # it would not help (a review: a side branch's fault got ``keep_dtype(['norm'])``)
        found.ignored_unlooked = bool(ignored)
        return found
    for quiet, attr in ((ignored, "ignored"), (passing, "passing")):
        names = list(dict.fromkeys(n for r in quiet for n in (r.golden_name, *r.original_names)
                                   if n and n in golden and n in up))
        if not names:
            continue
        more = golden_inputs_past_fp16(golden, names, limit=IGNORED_LIMIT, model=model,
                                       op_types=op_types)
        found.checked += more.checked
        for finding in more:
            _add(found, finding)
        setattr(found, attr, tuple(dict.fromkeys(f.op for f in more if f.op in names)))
    return found


def fused_groups(rows) -> Tuple[Tuple[Tuple[str, ...], str], ...]:
    """``(members, fused op type)`` of the ops ATC fused, one per row of ``rows`` that holds
    two or more original ops (``original_names``, from the om json or the emulator's fusion):
    keeping one member in
    float32 splits the group, and the others then output float16 on their own (a MobileNetV3
    hint kept a HardSwish but not the Conv fused with it, whose output underflowed: pasted, it
    failed at that HardSwish)."""
    return tuple(dict.fromkeys((tuple(r.original_names), r.op_type) for r in rows
                               if len(set(r.original_names)) > 1))


#: how many failing rows have their golden operands looked at (every member of a fused one)
FAILING_LIMIT = 3
#: how many ops of the failing rows after those have theirs looked at where a fix asks
#: (``RangeFindings.later``): each stage of an LR-ASPP with random BatchNorm statistics flushed
#: values of its own past the first three failing rows, which a fix keeping those left failing
LATER_LIMIT = 16


def _failing_members(golden: DumpSet, verdict) -> Tuple[List[str], List[str]]:
    """``(every, first)``: the golden names of the failing rows, each followed by the other
    members of its fused op the golden holds (a fused MatMul+Add row is matched to the Add, and
    the MatMul's weight past 65504 went unread: the hint offered high precision, which still
    feeds a MatMul float16), in the failures' order; ``first``: those of the first
    ``FAILING_LIMIT`` rows the golden holds."""
    every: List[str] = []
    first: List[str] = []
    rows = 0
    for f in verdict.failures:
        r = f.row
        if not r.golden_name:
            continue
        own = [n for n in dict.fromkeys((r.golden_name, *r.original_names))
               if n and n not in every and op_by_model_name(golden, n) is not None]
        every += own
        if own and rows < FAILING_LIMIT:
            first += own
            rows += 1
    return every, first


#: how many failing ops past the first ones have their golden output read where the device
#: wrote Inf (``_infinite_outputs_past_fp16``)
INFINITE_LIMIT = 16


def _infinite_outputs_past_fp16(golden: DumpSet, verdict, found: RangeFindings) -> None:
    """Add an overflow finding for each failing op (up to ``INFINITE_LIMIT`` beyond those
    already looked at) whose device output holds Inf where its golden output passes 65504:
    the compare's metrics leave those positions out, and a real overflow behind three other
    failing ops got the NaN/Inf probe, which cannot fix a Cube op (a review)."""
    done = {f.op for f in found}
    looked = 0
    for f in verdict.failures:
        m, name = f.row.metrics, f.row.golden_name
        if (m is None or not name or name in done
                or m.posinf_actual + m.neginf_actual <= m.posinf_golden + m.neginf_golden):
            continue
        op = op_by_model_name(golden, name)
        if op is None:
            continue
        done.add(name)
        looked += 1
        for t in op.outputs:
            if not f.row.golden_slot or t.slot == f.row.golden_slot:
                _add_output_overflow(found, op, t)
        if looked >= INFINITE_LIMIT:
            break


def _nonfinite_operands_past_fp16(golden: DumpSet, verdict, found: RangeFindings, looked,
                                  model, op_types) -> None:
    """Add the findings of the golden operands of the first failing op whose device output
    turns NaN/Inf where its golden one does not (the op the failure block names so), where it
    is not among the ops ``looked`` at: basic-pitch on a pure tone failed first at a CQT Conv
    of tiny values, and its Log's argument, which float16 flushes, went unread: the block said
    "the golden values stay within float16 (and no golden operand looked at leaves its
    range)" (audit 34)."""
    for f in verdict.failures:
        m, name = f.row.metrics, f.row.golden_name
        if m is None or not name or not m.mismatch or m.nonfinite_actual <= m.nonfinite_golden:
            continue
        if name not in looked:
            more = golden_inputs_past_fp16(golden, [name], limit=1, model=model,
                                           op_types=op_types)
            found.checked += more.checked
            for finding in more:  # an overflow there keeps its probe (a review: a late
                if finding.kind == UNDERFLOW:  # MatMul's 7e4 weight lost keep_dtype(['mm']))
                    _add(found, finding)
                else:
                    found.late_overflow += (finding,)
        return


def _add_output_overflow(found: RangeFindings, op, t) -> None:
    """An overflow finding for golden output ``t`` of ``op`` where its finite values pass
    65504."""
    if value_dtype(t.dtype).kind != "f":
        return
    values = _read(t.load)
    finite = values[np.isfinite(values)] if values is not None else np.empty(0)
    peak = float(np.max(np.abs(finite))) if finite.size else 0.0
    if peak > FP16_MAX:
        _add(found, RangeFinding(op.name, t.slot, peak, OVERFLOW, op.op_type))

"""The compare loop: match operators, then stream metrics one tensor pair at a time.

``compare_dumps`` never holds more than one tensor pair: each pair is read into buffers reused
from pair to pair (or memory-mapped, see ``reading``), measured chunk by chunk and released
before the next. A tensor that cannot
be read or compared becomes a row with a ``reason`` (and fails any verdict) instead of
aborting the whole comparison.
"""
from __future__ import annotations

import numbers
import os
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Tuple, Union

import numpy as np

from ..dump.dtypes import value_dtype
from ..dump.layout import sanitize
from ..dump.model import DumpSet, TensorRef
from ..errors import ConfigError, DumpFormatError, FileReplacedError
from .batch_pairs import mark_batched, with_samples
from .golden_spelling import in_actual_spelling
from .kernel import DEFAULT_CHUNK
from .matching import TensorPair, match_ops
from .metrics import compute_metrics
from .parallel import measure_in_processes, processes_for
from .reading import TensorReader
from .result import NOT_COMPARED_FLAG, CompareResult, TensorCompare
from .topk_ties import within_ties


@dataclass(frozen=True)
class CompareProgress:
    """Passed to the ``progress`` callback after each tensor pair."""

    done: int
    total: int
    op_name: str
    bytes_done: int
    bytes_total: int


ProgressCallback = Callable[[CompareProgress], None]

#: what ``compare_dumps`` and ``assert_accuracy`` take for each side: a DumpSet or its path
DumpLike = Union[DumpSet, str, "os.PathLike[str]"]


def as_dump(value: DumpLike, *, om_json=None) -> DumpSet:
    """A DumpSet as is, or the dump at a path (``dump.loader.load_dump``)."""
    if isinstance(value, DumpSet):
        return value
    if isinstance(value, (str, os.PathLike)):
        from ..dump.loader import load_dump
        return load_dump(value, om_json=om_json)
    hint = (" (a converted model: pass its run's dump, om.run(inputs))"
            if callable(getattr(value, "run", None)) else "")  # ascend_model's, not its run
    raise TypeError(f"expected a DumpSet or a path to a dump, got {type(value).__name__}{hint}")


def _check_count(name: str, value, *, none_ok: bool = False) -> None:
    """``value`` is an int of 1 or more (or None when ``none_ok``), else a ConfigError naming it."""
    if value is None and none_ok:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        also = " or None" if none_ok else ""
        raise ConfigError(f"compare_dumps({name}=)",
                          f"must be an int of 1 or more{also}, got {value!r}")


#: op types GE adds to a model that stand for no framework op (memory clearing, stream and
#: label control, copies, the graph's ends); unmatched, they are not "ops not compared"
RUNTIME_OP_TYPES = frozenset((
    "AtomicAddrClean", "DynamicAtomicAddrClean", "MemSet", "MemcpyAsync", "MemcpyAddrAsync",
    "Send", "Recv", "StreamActive", "StreamSwitch", "StreamMerge", "LabelSet", "LabelGoto",
    "LabelGotoEx", "LabelSwitchByIndex", "NetOutput", "Data", "Const", "Constant"))

_ITEMSIZE: dict = {}  # dtype name -> bytes per value (np.dtype() costs ~1.5 us a call)


def _nbytes(t: Optional[TensorRef]) -> int:
    if t is None:
        return 0
    item = _ITEMSIZE.get(t.dtype)
    if item is None:
        try:
            item = value_dtype(t.dtype).itemsize
        except TypeError:
            item = 1
        _ITEMSIZE[t.dtype] = item
    return t.size * item


def pair_nbytes(p: TensorPair) -> int:
    """The bytes of a pair's two tensors (``CompareProgress.bytes_total`` sums them)."""
    return _nbytes(p.actual) + _nbytes(p.golden)


def _shape_text(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _row_base(p: TensorPair) -> dict:
    g = p.golden
    return dict(
        order=p.actual_op.order, op_name=p.actual_op.name, op_type=p.actual_op.op_type,
        original_names=tuple(p.actual_op.original_names), slot=p.actual.slot,
        golden_name=p.golden_op.name if p.golden_op is not None else "",
        golden_slot=g.slot if g is not None else "", match=p.how,
        dtype=p.actual.dtype, golden_dtype=g.dtype if g is not None else "",
        shape=tuple(p.actual.shape), golden_shape=tuple(g.shape) if g is not None else (),
        source=p.actual.source or p.actual_op.source,
        golden_source=(g.source if g is not None else None) or (
            p.golden_op.source if p.golden_op is not None else None),
    )


def _load(t: TensorRef, side: str, reader: Optional[TensorReader]) -> np.ndarray:
    if reader is not None:
        arr = reader.load(t, 0 if side == "actual" else 1)
    else:
        arr = np.asarray(t.load())
    if arr.size != t.size:
        raise DumpFormatError(t.source, f"{side} tensor {t.slot} holds {arr.size} values, "
                              f"its shape {_shape_text(t.shape)} says {t.size}")
    return arr


def _insert_output_row(rows: list, row: TensorCompare, index: int) -> None:
    """Put ``row`` (output ``index`` of its op) after its op's rows of lower outputs."""
    first = after = None
    for i, r in enumerate(rows):
        if r.op_name == row.op_name and r.order == row.order:
            first = i if first is None else first
            kind, _, k = r.slot.partition(":")
            if kind == "output" and k.isdigit() and int(k) < index:
                after = i + 1
    rows.insert(after if after is not None else first if first is not None else len(rows), row)


def _device_layout_hint(a_shape, g_shape, dtype: str) -> str:
    """Where ``a_shape`` is the golden's shape in a device layout (an array of ``msaccucmp
    convert`` without ``-f``, or an npy dump written as stored), the way to compare it."""
    from ..dump.device_formats import DeviceFormatError, device_shape

    for fmt, logical in (("NC1HWC0", "NCHW"), ("FRACTAL_NZ", "ND")):
        for c0 in (16, 32):
            try:
                if device_shape(fmt, g_shape, dtype or "float16", c0=c0) != tuple(a_shape):
                    continue
            except (DeviceFormatError, TypeError, ValueError):
                continue
            return (f"; it is the golden's shape in the device layout {fmt}: convert the dump "
                    f"to the framework's format (msaccucmp convert -d DUMP -f {logical} -out "
                    f"DIR) or compare the binary dump with its om json (--om-json MODEL.json), "
                    f"which this package converts")
    return ""


def _kept_layout(t: TensorRef) -> str:
    """``"; ..."`` where ``t`` stays in a device layout its reader recognises but does not
    convert (``device_formats.UNCONVERTED_DEVICE_FORMATS``): its stored shape is not the
    framework's, whatever the dumps' run (a trial: an NC1HWC0_C04 input was blamed on the
    dumps coming from different models)."""
    from ..dump.device_formats import UNCONVERTED_DEVICE_FORMATS

    fmt = getattr(t, "format", "") or ""
    if fmt not in UNCONVERTED_DEVICE_FORMATS:
        return ""
    return (f"; the device stored it in its layout {fmt}, which neither this package nor "
            f"msaccucmp converts back to the framework's, so it stays in its stored shape")


def _device_aligned(a_shape, g_shape, op_type: str = "") -> bool:
    """Whether ``a_shape`` is ``g_shape`` padded as a device layout pads it: a 4-D tensor's
    channels up to NC1HWC0's C0 (16 or 32) or C04's 4 (C <= 4), or, for a matmul's output
    (``op_type``), the last two axes up to FRACTAL_NZ's 16 (a review: "any axis aligned to 16"
    let a NonZero's (2, 48) against the golden's (2, 47) pass; "aligned to 4" took C 20
    against 17; the NZ rule for any op, 32 gathered tokens against 30)."""
    longer = [k for k, (a, g) in enumerate(zip(a_shape, g_shape)) if a != g]
    up = lambda n, c: -(-n // c) * c  # noqa: E731
    if len(a_shape) == 4 and longer == [1]:
        a, g = a_shape[1], g_shape[1]
        return a in (up(g, 16), up(g, 32)) or (g <= 4 and a == 4)
    rank = len(a_shape)
    return ("MatMul" in op_type or op_type in ("Gemm", "FullyConnection")) and (
            rank >= 2 and bool(longer) and set(longer) <= {rank - 2, rank - 1}
            and all(a_shape[k] == up(g_shape[k], 16) for k in (rank - 2, rank - 1)))


#: op types (ONNX's and the Ascend types dumps show) whose output size depends on values and
#: whose every element is data: a 0 there is an index (NonZero's, NonMaxSuppression's
#: [batch, class, box], TopK's output:1) or a kept value, never padding. The Ascend
#: NonMaxSuppressionV6 kernel fills the rows of its fixed-size output it did not select with -1
#: (docs/formats.md section 6.1), NonZero's om leaves its size unknown (docs/ascend_backend.md):
#: neither pads with zeros
_NO_ZERO_PADDING = ("NonZero", "NonMaxSuppression", "TopK", "Unique", "Compress")


def _not_padding(a_shape, g_shape, op_type: str, values: int, past: int) -> str:
    """The reason of a larger actual whose elements past the golden's shape are data: those
    that are not zero (``values`` of ``past``), or all of them for an op of
    ``_NO_ZERO_PADDING``."""
    head = (f"shape {_shape_text(a_shape)} vs golden {_shape_text(g_shape)}: "
            f"{int(np.prod(a_shape))} vs {int(np.prod(g_shape))} elements, cannot compare: ")
    if op_type.startswith(_NO_ZERO_PADDING):
        zeros = past - values
        return head + (f"{op_type}'s output size depends on values, so what lies past the "
                       f"golden's shape ({past} element{'s' if past > 1 else ''}) is what it kept "
                       f"and the golden did not, not padding"
                       + (f" ({zeros} of them 0: an index or value, not a fill)" if zeros else ""))
    return head + (f"{values} of the {past} elements past the golden's shape are not zero, so "
                   f"not padding (an output whose size depends on values, e.g. NonZero or "
                   f"NonMaxSuppression, is larger)")


def _value_sized(op_type: str) -> str:
    """``": ..."`` where ``op_type``'s output size depends on values (``_NO_ZERO_PADDING``)."""
    if not op_type.startswith(_NO_ZERO_PADDING):
        return ""
    return f": {op_type}'s output size depends on values, and it kept another count than the golden"


def _beyond_golden(full: np.ndarray, g_shape, op_type: str = "") -> Tuple[int, int]:
    """(elements of ``full`` past ``g_shape`` that are not zero, elements past it), (0, 0)
    where the device's layout padded it (``_device_aligned``: it leaves there whatever it
    computed, e.g. a Sigmoid's 0.5 or a bias). Other padding, which msaccucmp cuts off, is
    zeros; a NonZero or NonMaxSuppression keeping one element more than the golden, and the
    Gathers after it, were cut to the golden's shape and passed (a trial: (2, 33) against
    (2, 32), (12,) against (11,))."""
    if _device_aligned(full.shape, g_shape, op_type):
        return 0, 0
    outside = np.zeros(full.shape, dtype=bool)
    for axis, size in enumerate(g_shape):
        index = [slice(None)] * full.ndim
        index[axis] = slice(size, None)
        outside[tuple(index)] = True
    values = full[outside]
    return int(np.count_nonzero(values != 0)), int(values.size)  # NaN != 0: not padding


def compare_pair(p: TensorPair, *, chunk_size: int = DEFAULT_CHUNK, kl: bool = True,
                 reader: Optional[TensorReader] = None) -> TensorCompare:
    """Compare one matched pair; problems become the row's ``reason``. ``reader``: a
    ``TensorReader`` whose buffers are reused across pairs (default: ``TensorRef.load()``)."""
    base = _row_base(p)
    flags = ["fused"] if p.actual_op.is_fused else []
    if p.golden is None:
        return TensorCompare(**base, flags=tuple(flags), reason=p.reason or "no golden tensor")
    a_shape, g_shape = tuple(p.actual.shape), tuple(p.golden.shape)
    crop = None
    if a_shape != g_shape:
        if p.actual.size == p.golden.size:
            flags.append("shape_mismatch_same_size")
        elif (len(a_shape) == len(g_shape) and all(x >= y for x, y in zip(a_shape, g_shape))
              and (len(a_shape) < 2 or a_shape[0] == g_shape[0])):
            # a padded actual (every dim at least the golden's): cut to the golden's shape, as
            # msaccucmp does (TensorConversion.slice_data, docs/formats.md §6.1). Not a batch:
            # devices pad channels and last dims, and a bigger batch is a wrong --input_shape
            if not p.golden.size:  # a layout pads a dim to a multiple, and 0's multiple is 0
                return TensorCompare(**base, flags=tuple(flags + ["shape_mismatch"]), reason=(
                    f"shape {_shape_text(a_shape)} vs golden {_shape_text(g_shape)}: "
                    f"{p.actual.size} vs 0 elements, cannot compare: the golden is empty, and "
                    f"no padding fills an empty tensor (an output whose size depends on values, "
                    f"e.g. NonZero or NonMaxSuppression, kept {p.actual.size} "
                    f"element{'s' if p.actual.size > 1 else ''} the golden did not)"))
            crop = tuple(slice(0, d) for d in g_shape)
            flags.append("cropped")
        else:
            kept = _kept_layout(p.actual)
            return TensorCompare(**base, flags=tuple(flags + ["shape_mismatch"] + (
                ["device_layout"] if kept else [])), reason=(
                f"shape {_shape_text(a_shape)} vs golden {_shape_text(g_shape)}: "
                f"{p.actual.size} vs {p.golden.size} elements, cannot compare"
                + (kept or _device_layout_hint(a_shape, g_shape, p.actual.dtype)
                   or _value_sized(p.actual_op.op_type))))
    try:
        a = _load(p.actual, "actual", reader)
        if crop is not None:
            full = np.asarray(a).reshape(a_shape)
            op_type = p.actual_op.op_type
            values, past = _beyond_golden(full, g_shape, op_type)
            if values or (past and op_type.startswith(_NO_ZERO_PADDING)):
                # not padding: a count that depends on values differs
                return TensorCompare(**base, flags=tuple(f for f in flags if f != "cropped")
                                     + ("shape_mismatch",),
                                     reason=_not_padding(a_shape, g_shape, op_type, values, past))
            a = np.ascontiguousarray(full[crop])
        g = _load(p.golden, "golden", reader)
        metrics = with_samples(p, a, g, compute_metrics(a, g, chunk_size=chunk_size, kl=kl))
    except DumpFormatError as exc:
        if isinstance(exc, FileReplacedError):  # no row of it may stand: no verdict at all
            raise
        return TensorCompare(**base, flags=tuple(flags + ["unreadable"]),
                             reason=f"cannot read: {exc}")
    finally:
        a = g = None  # noqa: F841  release the memory maps before the next pair
    if metrics.mismatch:
        flags.append("nonfinite_mismatch")
    if metrics.matched_inf:
        flags.append("matched_inf")
    if metrics.matched_nan:
        flags.append("matched_nan")
    if metrics.unequal:
        flags.append("exact_unequal")
    if metrics.all_zero:
        flags.append("all_zero")
    elif metrics.actual_zero:
        flags.append("actual_all_zero")
    elif metrics.golden_zero:
        flags.append("golden_all_zero")
    if metrics.size == 1:
        flags.append("scalar")
    reason = ""
    if "shape_mismatch_same_size" in flags:
        reason = (f"shape {_shape_text(a_shape)} vs golden {_shape_text(g_shape)} (same size, "
                  "compared flattened)")
    elif crop is not None:
        reason = (f"shape {_shape_text(a_shape)} cut to the golden's {_shape_text(g_shape)} "
                  "(as msaccucmp does)")
    return TensorCompare(**base, metrics=metrics, flags=tuple(flags), reason=reason)


class _UnmatchedReason:
    """The reason of an actual op no golden op matches: with, for one a fault would hide in,
    the closest golden names (for the first ``LIMIT`` such ops: difflib reads every name) and
    the golden's files its reader skipped (a name it does not parse: msaccucmp warns of them;
    one may be this op's)."""

    LIMIT = 100

    def __init__(self, golden: DumpSet):
        self.names = [op.name for op in golden.ops]
        skipped = golden.meta.get("skipped_files") or ()
        shown = "; ".join(f"{name} ({why})" for name, why in list(skipped)[:3])
        more = f"; +{len(skipped) - 3} more" if len(skipped) > 3 else ""
        self.skipped = (f"; the golden's files not read: {shown}{more}" if skipped else "")
        self.left = self.LIMIT

    def __call__(self, op, hidden: bool) -> str:
        text = "no golden op matches its name, original names or output origin"
        if not hidden:
            return text
        if self.left > 0:
            self.left -= 1
            from ..errors import closest_text

            text += closest_text(op.name, self.names, n=3).replace("; closest:",
                                                                   "; closest golden names:")
        return text + self.skipped


def _inner_reason(op) -> str:
    """Why an inner part of a framework op ATC split in several ops (om json) has no golden:
    its framework op's golden tensor holds the last part's output, not this one's."""
    names = ", ".join(dict.fromkeys(n for n in op.original_names if n)) or "its framework op"
    return (f"an intermediate part of {names}, which ATC split into several ops: the "
            "framework op's tensor is the last part's output, compared there")


def compare_dumps(actual: DumpLike, golden: DumpLike, *,
                  mapping: Optional[Mapping[str, str]] = None,
                  progress: Optional[ProgressCallback] = None, compare_inputs: bool = False,
                  kl: bool = True, chunk_size: int = DEFAULT_CHUNK, workers: Optional[int] = None
                  ) -> CompareResult:
    """Compare every matched tensor of ``actual`` against ``golden`` (DumpSets, or paths to
    dumps: ``as_dump``).

    ``mapping``: {actual op name: golden op name} for ops the matching rules cannot pair.
    ``progress``: called with a ``CompareProgress`` after each tensor pair, in order.
    ``compare_inputs``: also compare op inputs (ops matched by name or mapping).
    ``kl=False`` skips the KL divergence.
    ``workers``: processes measuring tensor pairs (``compare.parallel``: forked, Linux only;
    rows and progress order are identical to one process). None: this process's core share
    (``core.cpu_share``) for a compare of at least ``parallel.MIN_BYTES``, else one.
    ``chunk_size`` and ``workers`` below 1 raise ``ConfigError``.

    An ``actual`` compared while it ran (a DumpSet with ``compared_with(golden, kl=,
    chunk_size=)`` and ``materialize()``, ``backends.emulator.compared_run``) hands back the
    result it made against this ``golden`` with these settings, when it made one; otherwise
    its dump is written first (``materialize``) and compared as any other.
    """
    _check_count("chunk_size", chunk_size)
    _check_count("workers", workers, none_ok=True)
    actual, golden = as_dump(actual), as_dump(golden)
    compared = getattr(actual, "compared_with", None)  # a run compared while it ran
    if compared is not None:
        if mapping is None and not compare_inputs:
            result = compared(golden, kl=kl, chunk_size=chunk_size)
            if result is not None:
                return result
        actual.materialize()  # its dump written, compared from its files as any other
    golden, plan = plan_comparison(actual, golden, mapping=mapping, compare_inputs=compare_inputs)
    total = len(plan.pairs)
    bytes_total = sum(_nbytes(p.actual) + _nbytes(p.golden) for p in plan.pairs)
    rows, done = [], [0]
    reader = TensorReader()  # one read buffer per side (and process), reused for every pair
    pairs = plan.pairs

    def measure(i: int) -> TensorCompare:
        return compare_pair(pairs[i], chunk_size=chunk_size, kl=kl, reader=reader)

    def on_row(i: int, row: TensorCompare) -> None:
        rows.append(row)
        done[0] += _nbytes(pairs[i].actual) + _nbytes(pairs[i].golden)
        if progress is not None:
            progress(CompareProgress(i + 1, total, pairs[i].actual_op.name, done[0], bytes_total))

    processes = processes_for(bytes_total, workers)
    if processes > 1 and total > 1:
        measure_in_processes(total, measure, processes, on_row)
    else:
        for i in range(total):
            on_row(i, measure(i))
    rows[:] = [within_ties(pairs[i], row) for i, row in enumerate(rows)]  # TopK tie reorders
    return finish_comparison(plan, rows, actual, golden, kl=kl)


def plan_comparison(actual: DumpSet, golden: DumpSet, *, mapping=None, compare_inputs=False):
    """(``golden`` in ``actual``'s spelling, the ``MatchPlan`` of the two): the pairs
    ``compare_dumps`` measures, each with ``compare_pair`` then ``within_ties``."""
    golden = in_actual_spelling(golden, actual)  # p2o.Conv.0, not the file's p2o_Conv_0
    plan = match_ops(actual, golden, mapping=mapping, compare_inputs=compare_inputs)
    return golden, mark_batched(plan, golden.meta)  # one value per sample: judged per sample


def finish_comparison(plan, rows, actual: DumpSet, golden: DumpSet, *, kl: bool
                      ) -> CompareResult:
    """The ``CompareResult`` of ``plan`` (``plan_comparison``) given the rows of its pairs in
    order: the ops it left unmatched and the outputs the golden lacks added as rows."""
    rows = list(rows)
    npu_only = set(plan.npu_only_ops)
    seen = {sanitize(n) for n in (*plan.coverage.compared, *plan.coverage.fused,
                                  *plan.coverage.in_ifs)}
    unmatched_why = _UnmatchedReason(golden)
    inner = frozenset(actual.meta.get("om_inner_ops", ()) or ())
    for op in plan.unmatched_ops:
        only = op.name in npu_only
        # no framework op it stands for is compared anywhere: a fault in it would hide (D3);
        # GE's runtime ops and the conversions it inserts (trans_*) have no framework op
        lacking = plan.not_compared.get(op.name)  # a fused op whose output's golden is missing
        hidden = bool(lacking) or (not only and op.op_type not in RUNTIME_OP_TYPES
                                   and not op.name.startswith("trans_")
                                   and not any(n and sanitize(n) in seen for n in op.covers))
        rows.append(TensorCompare(
            order=op.order, op_name=op.name, op_type=op.op_type,
            original_names=tuple(n for n in op.original_names if n),
            slot=op.outputs[0].slot if op.outputs else "output:0",
            dtype=op.outputs[0].dtype if op.outputs else "",
            shape=tuple(op.outputs[0].shape) if op.outputs else (),
            flags=("no_golden", "npu_only") if only else (
                ("no_golden", NOT_COMPARED_FLAG) if hidden else ("no_golden",)),
            reason=("NPU-only op (no framework op to compare with)" if only else lacking or
                    (_inner_reason(op) if op.name in inner else unmatched_why(op, hidden))),
            source=op.source))
    rows.sort(key=lambda r: r.order)  # stable: keeps output/input order within an op
    for op, t, why in plan.lacking_outputs:  # outputs of a compared op the golden lacks
        _insert_output_row(rows, TensorCompare(
            order=op.order, op_name=op.name, op_type=op.op_type,
            original_names=tuple(n for n in op.original_names if n), slot=t.slot,
            dtype=t.dtype, shape=tuple(t.shape), flags=("no_golden", NOT_COMPARED_FLAG),
            reason=why, source=t.source or op.source), t.index)
    meta = {"actual": dict(actual.meta), "golden": dict(golden.meta),
            "actual_kind": actual.kind, "golden_kind": golden.kind, "kl": bool(kl),
            # none (a dump of op inputs only) is said as such when nothing was compared
            "actual_outputs": sum(len(op.outputs) for op in actual)}
    return CompareResult(rows=tuple(rows), coverage=plan.coverage, actual_root=actual.root,
                         golden_root=golden.root, meta=meta)

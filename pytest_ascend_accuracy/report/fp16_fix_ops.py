"""Which ops a float16-range fix names, and why: failing ops whose golden operands or values
leave float16's range, named as ATC's ``--keep_dtype`` and ``keep_dtype(...)`` take them (the
model's own spelling, ``report.model_spelling``), and whether converting in high precision can
keep them in range (not on the Cube unit). Printed by ``failure_text.default_hint`` and
``hints.hint_for``."""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from ..compare.result import TensorCompare, Verdict
from ..core.fp16 import FP16_MAX
from .model_spelling import row_model_name
from .printable import printable
from .rounded_upstream import rounded_feeds, rounded_reason


def fp16_range_rows(verdict: Verdict, *, nan_counts: Optional[bool] = None
                    ) -> List[TensorCompare]:
    """Failing rows that point at float16 range: golden values past 65504; and NaN or Inf in
    the actual tensor where the golden one is finite, where ``nan_counts`` (by default: where
    some row's golden passes 65504). NaN/Inf alone is no such evidence: a NaN a faulty op makes
    runs through every op after it (a PP-OCR trial: a 365-op keep_dtype hint that changed
    nothing), and an Inf from dividing by a value float16 rounded to 0 is not the dividing op's
    range (a docs trial: the hint named the ops after the rounding and repeated itself pasted);
    ``nonfinite_in_range`` says those failures' hint."""
    strong, weak = [], []
    for f in verdict.failures:
        m = f.row.metrics
        if m is None or not _floating(f.row.golden_dtype):  # an int32 accumulator past 65504
            continue  # is no float16 value (a quantised model's keep_dtype hint looped on it)
        if m.max_abs_golden > FP16_MAX:
            strong.append(f.row)
        elif m.mismatch and m.nonfinite_actual > m.nonfinite_golden:
            weak.append(f.row)
    if nan_counts is None:
        nan_counts = bool(strong)
    if not nan_counts:
        return strong
    keep = {id(r) for r in strong + weak}
    return [f.row for f in verdict.failures if id(f.row) in keep]


def _floating(dtype: str) -> bool:
    """A float dtype name (``float32``, ``bfloat16``), or one not known (older results)."""
    return not dtype or "float" in dtype


def keep_dtype_names(verdict: Verdict, range_inputs: Sequence = (), mode=None,
                     compared: Sequence[TensorCompare] = (), model=None
                     ) -> Tuple[List[str], str]:
    """The ops a ``keep_dtype`` fix names, in the failures' (graph) order, and why: failing ops
    whose golden operands pass 65504 (``range_inputs``, ``compare.fp16_range.RangeFinding``)
    and failing ops whose values leave the float16 range (``fp16_range_rows``, by their original
    names where fused). Both kinds: an op whose input overflows usually fails first, with the
    ops after it failing on their own values, and keeping only one kind leaves the other
    failing. ``([], "")`` when neither. ``mode``: the failing run's conversion mode where its
    dump holds the device's own dtypes (the emulator's, an Ascend binary dump: ``device_mode``),
    which ``float32_already`` needs; None where not known. ``compared``: the compared rows, where
    known (``rounded_upstream.rounded_feeds`` reads the passing ones: a kept op fed values
    float16 rounded already makes the fix ``unexplained``). ``model``: the ONNX model the
    golden ran (a path, a ModelProto, or ``ModelEdges``), where known: the ops inside its If
    branches and its Ifs are then named as keep_dtype takes them (``_as_entries``)."""
    # NaN/Inf rows count with a range finding, or where no golden was read at all (a saved
    # result: nothing tells an overflow from a value rounded to 0, and judge keeps the hint it
    # gave before; a review)
    rows = fp16_range_rows(verdict, nan_counts=True if range_inputs or not hasattr(
        range_inputs, "checked") else None)
    fused = getattr(range_inputs, "fused", ())
    row_ids = {id(r) for r in rows}
    range_ops = {f.op for f in range_inputs}
    names: List[str] = []
    for f in verdict.failures:
        if id(f.row) in row_ids:
            picked = f.row.original_names or (f.row.op_name,)
        elif f.row.golden_name in range_ops:
            picked = (f.row.golden_name,)
        elif row_model_name(f.row) in range_ops:  # findings in the model's spelling
            picked = (row_model_name(f.row),)
        else:
            continue
        names.extend(n for n in picked if n not in names)
    names.extend(n for n in dict.fromkeys(f.op for f in range_inputs) if n not in names)
    kept = float32_already(verdict, range_inputs, names, row_ids, mode)
    if kept:
        names = [n for n in names if n not in kept]
        range_inputs = _Shown([f for f in range_inputs if f.op not in kept], range_inputs)
        rows = [r for r in rows if not set(_row_names(r)) & set(kept)]
        if not names:
            return [], ""
    tiny = _tiny_left_out(verdict, range_inputs, names, row_ids)
    if tiny:
        names = [n for n in names if n not in tiny]
        range_inputs = _Shown([f for f in range_inputs if f.op not in tiny], range_inputs)
    explained = explains_first(verdict, range_inputs, names, row_ids)
    if _underflow_only(range_inputs, rows) and not explained:
        return [], ""  # the fallback says no overflow was seen, and points to diagnosing
    from .operand_makers import makers_reason, operand_makers
    from .overflow_feeds import float16_producers, producers_reason

    # the float16 ops computing a kept overflowing Cube op's operands (T1: a ViT's q/k_proj)
    produce, further = float16_producers(verdict, range_inputs, names, compared, _row_names)
    names = [*names, *(n for n in produce if n not in names)]
    # and those making an operand a kept op scales kept values by, where its float16 rounding
    # tells (audit 35: a dynamically quantised layer's scale, report.operand_makers)
    makers = operand_makers(verdict, names, compared, model, {*kept, *tiny},
                            getattr(range_inputs, "feeding", None))
    names = [*names, *(n for n in makers if n not in names)]
    names, partners = _with_partners(verdict, fused, names, {*kept, *tiny})
    reasons = []
    if range_inputs:
        found = "; ".join(printable(f.describe()) for f in range_inputs[:3])
        hidden = [n for n in getattr(range_inputs, "ignored", ()) if n in names]
        if hidden:  # ignored for the verdict: the user must read why the hint names them
            found += (f"; {', '.join(printable(n) for n in hidden[:3])} "
                      f"{'is' if len(hidden) == 1 else 'are'} ignored but feed"
                      f"{'s' if len(hidden) == 1 else ''} the failing ops")
        quiet = [n for n in getattr(range_inputs, "passing", ()) if n in names]
        if quiet:  # passes a loosened threshold: the user must read why the hint names it
            one = len(quiet) == 1
            found += (f"; {', '.join(printable(n) for n in quiet[:3])} "
                      f"meet{'s' if one else ''} the loosened threshold (the default check "
                      f"fails {'it' if one else 'them'}) but feed{'s' if one else ''} the "
                      "failing ops")
        what = ("operands" if all(str(f.slot).startswith("input") for f in range_inputs)
                else "values")
        reasons.append((f"golden {what} leave the float16 range", found))
    if rows:  # (beside the golden's finding, not its words again: T2 read them twice)
        reasons.append(("so do failing values" if reasons else "values leave the float16 range",
                        "NaN/Inf in the actual output or |golden| > 65504"))
    reason = names.found = ", and ".join(f"{lead} ({why})" for lead, why in reasons)
    if not explained:  # an overflow after the first failure: named, never offered as its fix
        names.unexplained = True
        return names, _unexplained(verdict, names, reasons)
    feeding = range_inputs.feeding() if hasattr(range_inputs, "feeding") else None
    fed = rounded_feeds(verdict, feeding, names, _row_names, compared)
    if fed:  # a kept op takes values float16 rounded before it: no list of these ops fixes it
        names.unexplained = True
        return names, rounded_reason(verdict, found_at(names, reasons), fed)
    promise = _promise(verdict, range_inputs, names, aside={*kept, *tiny})
    stopped = getattr(range_inputs, "walk_stopped", "")  # (compare.flush_chain.Walk)
    names.partial = bool(promise or further or stopped or makers.stopped)
    reason += promise + stopped + producers_reason(produce, further) + makers_reason(makers)
    for name, dtype in kept.items():
        if name in mode.keep_dtype:  # printed in the mode all the same: "left out" read wrong
            reason += (f"; {printable(name)} is kept by the test's own keep_dtype already (this "
                       f"run outputs it in {dtype})")
            continue
        reason += (f"; {printable(name)} is left out (this run outputs it in {dtype} already: "
                   "keeping it in float32 changes nothing)")
    for name, peak in tiny.items():
        reason += (f"; {printable(name)} is left out (golden below float16's smallest normal, "
                   f"|{peak:.3g}|: kept in float32 it is judged without float16's allowance "
                   "for values that small)")
    if partners:  # the user must read why the hint names ops no finding names
        shown = ", ".join(printable(n) for n in list(partners)[:3])
        reason += (f"; {shown}{', ...' if len(partners) > 3 else ''} kept too, fused with "
                   "those ops (keeping one op of a fusion alone splits it, and the others "
                   "then output float16)")
    return names, reason + _as_entries(names, model)


def _as_entries(names: "KeepNames", model) -> str:
    """Turn ``names`` in place into entries ``model``'s keep_dtype takes and that keep them
    (``graph.branch_entries.keep_entries``: a branch op by ``OpType::`` of its parser type, an
    If by those of the ops inside it), and say so; "" where nothing changes or no model is
    known. silero_vad's op15 hint named '/model/decoder/rnn/If', an op inside an If's branch
    that the conversion inlines: pasted, it was refused."""
    model = getattr(model, "model", model)  # a ModelEdges' model
    if model is None:
        return ""
    from ..graph.branch_entries import model_keep_entries
    from ..graph.op_catalogue import model_ops

    entries = model_keep_entries(model_ops(model), names)
    if entries == list(names):
        return ""
    gone = [n for n in names if n not in entries]
    names[:] = entries
    typed = [e for e in entries if e.startswith("OpType::")]
    return (f"; {', '.join(printable(n) for n in gone[:3])}{', ...' if len(gone) > 3 else ''} "
            f"kept by type ({', '.join(typed[:4])}{', ...' if len(typed) > 4 else ''}): ATC "
            "keeps an op inside an If's branch by OpType:: of its parser type, not by its ONNX "
            "name, and an If's name keeps none of its branch ops")


def _first_row(verdict: Verdict) -> Optional[TensorCompare]:
    """The row of the verdict's first failure (the one its line names), None where none."""
    first = verdict.first
    return first.row if first is not None else None


def explains_first(verdict: Verdict, range_inputs: Sequence, names: Sequence[str],
                   row_ids) -> bool:
    """Whether keeping ``names`` in float32 explains the verdict's first failure: one of its
    op's names (every member of a fused op) is kept for its own values or operands, or the op
    producing its flushed operand is (``RangeFinding.feeds``), or a finding upstream of the
    failures the verdict ignores or passes (``.ignored``, ``.passing``) is. Findings come from
    the first few failing rows, and a later row's finding does not explain an earlier failure:
    an EfficientNet-B0 whose first failure was a Conv losing subnormal precision (cosine
    0.986978) got ``keep_dtype`` of two ops after it, which pasted failed at that Conv with the
    same cosine. True where nothing failed."""
    row = _first_row(verdict)
    if row is None:
        return True
    kept = set(names)
    members = {n for n in _row_names(row) if n}
    if members & kept:
        return True
    upstream = {*getattr(range_inputs, "ignored", ()), *getattr(range_inputs, "passing", ())}
    return any(f.op in kept and (getattr(f, "feeds", "") in members or f.op in upstream)
               for f in range_inputs)


def _underflow_only(range_inputs: Sequence, rows) -> bool:
    """Whether the golden was read (``RangeFindings``) and every finding is an underflow, no
    row's golden passing 65504: the hints printed where no fix is named then say no overflow
    was seen, which is so (an overflow's fix stays named: their "golden values stay within
    float16" would not be)."""
    from ..compare.fp16_range import UNDERFLOW

    return (hasattr(range_inputs, "checked") and all(f.kind == UNDERFLOW for f in range_inputs)
            and not any(r.metrics is not None and r.metrics.max_abs_golden > FP16_MAX
                        for r in rows))


def _with_partners(verdict: Verdict, fused, names: Sequence[str], left_out) -> tuple:
    """``(names, {partner: member})``: ``names`` with the other members of each fused group
    one of them belongs to (``fused``, ``compare.fp16_range.fused_groups``, and the failing
    rows' own), each right after its member, except those ``left_out`` on purpose."""
    from ..compare.fp16_range import fused_groups

    from ..core.ascend_optypes import is_cube

    groups = (*fused, *fused_groups(f.row for f in verdict.failures))
    out = KeepNames()
    partners: dict = {}
    for name in names:
        if name not in out:
            out.append(name)
        for group, op_type in groups:
            if name not in group:
                continue
            out.on_cube = out.on_cube or is_cube(op_type)
            for other in group:
                if other not in out and other not in names and other not in left_out:
                    out.append(other)
                    partners.setdefault(other, name)
    return out, partners


class KeepNames(list):
    """The ops a keep_dtype fix names; ``on_cube``: one of them is fused into an op that runs
    on the Cube unit (a Conv with its HardSwish), whose float16 high precision keeps, so
    ``high_precision_may_fix`` is False (a review: the fused pair's hint offered high precision,
    which pasted failed). ``unexplained``: keeping them does not explain the verdict's first
    failure (``explains_first``), so no hint offers them as a fix (the reason says so:
    ``_unexplained``); ``found``: what leaves the float16 range, the reason's first part;
    ``partial``: a failing op after the first may still fail pasted (``_promise``), which the
    reason says, and each caller's advice adds how to find a fix by running (``STILL_FAILS``)."""

    on_cube = False
    unexplained = False
    partial = False
    found = ""


#: where a fix may still fail pasted (``KeepNames.partial``): how the plugin's user finds one
STILL_FAILS = ("where it still fails, run with --accuracy-diagnose, which walks the debugging "
               "flow (high precision, ops kept in float32, buffer reuse off, fusion off) and "
               "names the mode that restores accuracy, if one does")


#: what a hint says where the float16-range findings do not explain the first failure
#: (``KeepNames.unexplained``): the plugin's advice (the CLI's and the API's say their own)
UNEXPLAINED_ADVICE = ("run with --accuracy-diagnose to find one by running: it walks the "
                      "debugging flow (high precision, ops kept in float32, buffer reuse off, "
                      "fusion off) and names the mode that restores accuracy, if one does")


#: the Python API's way to search for a fix by running (``failure_text.default_hint``)
API_DIAGNOSE = ("diagnose(model, inputs, threshold=...) names the ops to keep in float32 (from "
                "pytest_ascend_accuracy.triage.flow import diagnose)")


def diagnose_by_running(verdict: Verdict, result, cli: bool) -> str:
    """How the CLI's (``cli``) or the API's user finds a fix by running where no op list is
    known (``KeepNames.unexplained``): ``UNEXPLAINED_ADVICE`` in their spelling."""
    from .cli_commands import cli_diagnose, not_carried

    if cli:
        return (f"{cli_diagnose(verdict, None, result)} finds one by running (high precision, "
                "ops kept in float32, buffer reuse off, fusion off)" + not_carried(result))
    return "to find one by running, " + API_DIAGNOSE


def found_at(names: Sequence[str], reasons) -> str:
    """What leaves the float16 range (``reasons``: (what, details)), at the first few of
    ``names``: the lead of a reason that names ops but offers no fix."""
    ops = ", ".join(printable(n) for n in list(names)[:3]) + (", ..." if len(names) > 3 else "")
    return ", and ".join(f"{lead} at {ops} ({why})" if k == 0 else f"{lead} ({why})"
                         for k, (lead, why) in enumerate(reasons))


def _unexplained(verdict: Verdict, names: Sequence[str], reasons) -> str:
    """The reason of a hint whose float16-range findings (``reasons``: (what, details), at
    ``names``) do not explain the verdict's first failure: ``keep_dtype(['Mul_3'])`` was
    printed as the fix of a check failing first at conv1_relu, whose values stay within
    float16, and pasted it still failed there."""
    first = _first_row(verdict)
    return (f"{found_at(names, reasons)}, but not at or before the first failing op "
            f"({printable(first.label if first is not None else '')}): no op list is known "
            "to fix it")


def _promise(verdict: Verdict, range_inputs: Sequence, names: Sequence[str],
             aside=frozenset()) -> str:
    """What keeping ``names`` is known to do, where some failing op after the first is neither
    kept nor fed by a kept op: a prediction for the first failure only (a DeepLabV3's hint,
    pasted, failed further on; an SSDlite's kept its first failing Conv+Relu, which pasted
    still failed there, fed float16 subnormals from upstream: cosine 0.933781, which
    ``rounded_upstream.rounded_feeds`` now tells where the edges and rows are known, making such
    a fix ``unexplained``). The ops left
    out on purpose (``aside``: output in float32 already, or tiny), whose reason the hint gives,
    are not such ops: a tiny Sigmoid after a kept BatchNorm got the caveat, and the hint pasted
    passed. Nor is a later failing op with no range finding of its own: it fails on what the
    first one handed it (the example project's overflow model got the caveat on every op after
    its BatchNorm, and keep_dtype(['norm']) pasted passes). Findings of its own include those of
    the failing ops after the first few that output float16 in the run (``RangeFindings.later``,
    read only here): an LR-ASPP with random BatchNorm statistics, in high precision, lost values
    to float16 in each stage (backbone.12's kept, backbone.13's fc1 Conv flushing the kept
    GlobalAveragePool's output on its float16 input), and its list, printed with no caveat,
    failed pasted 6 of 6 (T1). An op the run outputs in float32 keeps its own values (a Mul by
    1e8 in high precision passed pasted)."""
    kept = set(names)
    fed = {getattr(f, "feeds", "") for f in range_inputs if f.op in kept}
    own = {f.op for f in range_inputs} | {getattr(f, "feeds", "") for f in range_inputs}
    first = _first_row(verdict)
    later = None
    for f in verdict.failures:
        row_names = {n for n in _row_names(f.row) if n}
        if (f.row is first or f.row.metrics is None or row_names & set(aside)
                or row_names & (kept | fed)):
            continue
        lost = ""
        if not row_names & own:
            if f.row.dtype != "float16":  # computed in float32: its own values are not lost
                continue
            if later is None:
                later = range_inputs.later() if hasattr(range_inputs, "later") else []
            found = [g for g in later if g.op in row_names or g.feeds in row_names]
            if not found:
                continue
            lost = (f" ({printable(f.row.label)} loses values of its own to float16: "
                    f"{printable(found[0].describe())})")
        return (f"; kept for the first failing op ({printable(first.op_name)}): pasted, "
                "ops after it (or, fed float16 from upstream, that op itself) may still "
                f"fail{lost}")
    return ""


class _Shown(list):
    """The range findings a reason shows, with the ``ignored`` and ``passing`` ops of those
    they were taken from."""

    def __init__(self, shown, found):
        super().__init__(shown)
        self.ignored = getattr(found, "ignored", ())
        self.passing = getattr(found, "passing", ())
        self.walk_stopped = getattr(found, "walk_stopped", "")


#: the dtypes keep_dtype gives an op's output (or wider): an op a run outputs in one of these
#: is kept in float32 already
FLOAT32_UP = ("float32", "float64")


def _row_names(row: TensorCompare) -> tuple:
    """The names a keep_dtype fix may name ``row``'s op by."""
    return (row.op_name, row.golden_name, row_model_name(row), *row.original_names)


def float32_already(verdict: Verdict, range_inputs: Sequence, names: Sequence[str],
                    row_ids, mode=None) -> dict:
    """``{name: dtype}`` of the ``names`` a keep_dtype fix would name only for their own
    values (a failing row's own |golden| > 65504, ``row_ids``; an output finding that feeds no
    other op) where ``mode``, the failing run's, outputs that op in float32 already (high
    precision and the op off the Cube unit, whose float16 inputs keep_dtype would change, or
    the op in the mode's keep_dtype), its dump saying so (float32 or wider) with no NaN/Inf the
    golden lacks (``_turns_nonfinite``): pasted, such a mode converts that op as the failing
    run did. The hint ``keep_dtype(['prob'])`` of a high-precision run, prob a Sigmoid whose
    golden values all lie below float16's smallest normal, printed itself again pasted and
    failed the same (cosine 0.612952, float32: ``report.tiny_float32``). ``{}`` where ``mode``
    is None (not known, or a dump whose stored dtypes are not the device's: a float16 dump
    converted to float32 .npy, msaccucmp-style, lost its real fix keep_dtype(['big']) to
    "outputs it in float32 already", a review)."""
    from .failure_kinds import on_cube

    if mode is None:
        return {}
    other = {f.op for f in range_inputs if f.feeds or not str(f.slot).startswith("output")}
    own = {f.op for f in range_inputs} - other
    by_name: dict = {}
    for f in verdict.failures:
        for n in dict.fromkeys(_row_names(f.row)):
            by_name.setdefault(n, []).append(f.row)
    kept = {}
    for name in names:
        rows = by_name.get(name, [])
        if name in other or not rows or not (name in own or any(id(r) in row_ids for r in rows)):
            continue
        if all(r.dtype in FLOAT32_UP and not _turns_nonfinite(r) and (
                set(_row_names(r)) & set(mode.keep_dtype)
                or (mode.is_high_precision and not on_cube(r))) for r in rows):
            kept[name] = rows[0].dtype
    return kept


def device_mode(mode, dump_kind: str):
    """``mode`` where a dump of ``dump_kind`` (``DumpSet.kind``, ``actual_kind`` of a result's
    meta) stores the device's own dtypes (``ascend``: the emulator's and an Ascend binary
    dump), else None: an npy directory's dtype may be a conversion's (msaccucmp writes float32
    .npy of float16 tensors), and says nothing of what the run output."""
    return mode if dump_kind == "ascend" else None


def _turns_nonfinite(row: TensorCompare) -> bool:
    """NaN/Inf in ``row``'s actual where the golden's are finite: in a float32 output, float16's
    doing before it was stored so (a dump converted to npy), or a fault; never its own float32
    range, so such a row is no evidence that keeping it changes nothing."""
    m = row.metrics
    return m is not None and bool(m.mismatch) and m.nonfinite_actual > m.nonfinite_golden


def _tiny_left_out(verdict: Verdict, range_inputs: Sequence, names: Sequence[str],
                   row_ids) -> dict:
    """``{name: largest |golden|}`` of the failing ops a keep_dtype fix leaves out of
    ``names``: named only for their own golden output flushing to 0 (no finding of another
    kind, none as the producer of an operand another op takes flushed: ``RangeFinding.feeds``)
    while all their golden values lie below float16's smallest normal (and not all are 0).
    Kept in float32, such an op is judged by its plain figure, without float16's allowance for
    values that small (``compare.tiny_values``), where the float32 rounding of either side alone
    can fail it; in float16 the allowance judges it (``failure_kinds.tiny_failing`` takes high
    precision out for the same reason). A BatchNorm with a 1e9 variance, then a Conv with a bias
    of -19 and a Sigmoid: ``keep_dtype(['norm', 'prob'])`` failed pasted at prob (cosine
    0.612952, float32), ``keep_dtype(['norm'])`` passed. ``{}`` where that would leave no op."""
    from ..compare.fp16_range import UNDERFLOW
    from ..compare.tiny_values import FP16_TINY

    own = {f.op for f in range_inputs if f.kind == UNDERFLOW and str(f.slot).startswith(
        "output") and not f.feeds}
    own -= {f.op for f in range_inputs if f.kind != UNDERFLOW or f.feeds
            or not str(f.slot).startswith("output")}
    tiny = {}
    for f in verdict.failures:
        r, m = f.row, f.row.metrics
        if (id(r) in row_ids or m is None or not 0 < m.max_abs_golden < FP16_TINY
                or not _floating(r.golden_dtype)):
            continue
        for name in (r.golden_name, row_model_name(r)):
            if name in own and name in names:
                tiny.setdefault(name, m.max_abs_golden)
    return tiny if set(names) - set(tiny) else {}


def high_precision_may_fix(verdict: Verdict, names: Sequence[str]) -> bool:
    """Whether converting in high precision can keep ``names`` (a keep_dtype fix's ops) within
    float16: not when one of them runs on the Cube unit (``CUBE_TYPES``), or is fused into an
    op that does (``KeepNames.on_cube``), whose inputs stay float16 under high precision (a
    MatMul fused with a Mul by 1e5 still overflowed)."""
    from ..core.ascend_optypes import is_cube

    if getattr(names, "on_cube", False):
        return False
    wanted = set(names)
    for f in verdict.failures:
        r = f.row
        if is_cube(r.op_type) and wanted & {r.op_name, r.golden_name, *r.original_names}:
            return False
    return True


def flushed_after_first(verdict: Verdict, range_inputs: Sequence = ()) -> str:
    """``"; values flush to 0 only after the first failing op (...)"``: the underflow findings
    a fallback hint's "no float16 overflow seen" leaves unsaid, where none of them is at or
    feeds the first failing op (``explains_first``: the keep_dtype fix is refused), else ""."""
    from ..compare.fp16_range import UNDERFLOW

    flushed = [f for f in range_inputs if getattr(f, "kind", "") == UNDERFLOW]
    if not flushed or explains_first(verdict, range_inputs, [f.op for f in flushed], set()):
        return ""
    shown = "; ".join(printable(f.describe()) for f in flushed[:3])
    return (f"; values flush to 0 only after the first failing op ({shown}"
            f"{'; ...' if len(flushed) > 3 else ''})")

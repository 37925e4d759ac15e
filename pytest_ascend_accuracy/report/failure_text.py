"""The fixed failure block (and the passing summary) printed by assertions and the CLI.

Order, always the same: the verdict line; the first failing operator in graph order with its
dump name, original ONNX op names, type, dtypes, shape, judged metric vs threshold and the
threshold that would pass, max abs/rel error, NaN/Inf counts; the next worst operators in an
aligned table capped at a few rows; coverage; where the full report is; what to run next.
"""
from __future__ import annotations

import math
from functools import partial
from typing import List, Optional, Sequence

from ..compare.result import CompareResult, Failure, TensorCompare, Verdict, nonfinite_kind
from ..compare.scale_guard import guard_ratio
from ..compare.thresholds import beside, threshold_text

from .fp16_fix_ops import (  # noqa: E402,F401  (callers and tests read them here too)
    API_DIAGNOSE, diagnose_by_running, flushed_after_first, fp16_range_rows,
    high_precision_may_fix, keep_dtype_names)
from .float16_model import float16_hint  # noqa: E402
from .cli_commands import (  # noqa: E402,F401  (CLI_MODEL: tests and callers read it here)
    CLI_MODEL, cli_diagnose, cli_mode, dumped_mode, not_carried)
from .failure_kinds import (  # noqa: E402
    cube_probe, naming_reason, nonfinite_failure, nonfinite_in_range, nonfinite_reason,
    per_op_only, unread, unread_hint)
from .figures import failing_cosine, judged_cosine, plain_cosine_lines  # noqa: E402
from .figures import error_figure as _small  # noqa: E402
from .figures import six_places as _num  # noqa: E402
from .printable import printable  # noqa: E402  (callers read it here too)
from .would_pass import would_pass_text  # noqa: E402
from .outputs_note import outputs_lines  # noqa: E402

WORST_ROWS = 5
_NAME_WIDTH = 48
_name_cell = partial(printable, width=_NAME_WIDTH, tail=True)  # (its end tells rows apart)


def _shape(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _dtypes(row: TensorCompare) -> str:
    if not row.golden_dtype or row.golden_dtype == row.dtype:
        return row.dtype or "?"
    return f"{row.dtype} (golden {row.golden_dtype})"


def _nonfinite(row: TensorCompare) -> str:
    m = row.metrics
    if m is None:
        return "not read"
    text = (f"actual {m.nan_actual} NaN, {m.posinf_actual} +Inf, {m.neginf_actual} -Inf; "
            f"golden {m.nan_golden} NaN, {m.posinf_golden} +Inf, {m.neginf_golden} -Inf")
    if m.matched_inf:
        text += f" ({m.matched_inf} equal infinities)"
    return text


def short_reason(f: Failure) -> str:
    """``cosine < 0.95`` for a plain threshold failure, else the failure's own reason."""
    thr = f.threshold
    m = f.row.metrics
    if f.would_pass is None:
        if m is not None and m.mismatch:
            kind = nonfinite_kind(m).replace(" only", "")
            return f"{kind} at {m.mismatch} position{'' if m.mismatch == 1 else 's'}"
        return f.reason
    return f"{thr.metric} {'<' if thr.higher_is_better else '>'} {threshold_text(thr.value)}"


def _metric_line(f: Failure, policy=None, cli: bool = False, verdict=None) -> str:
    thr = f.threshold
    if f.would_pass is None:
        if thr.passed(f.value):  # the value meets its threshold: something else failed it
            what = ("fails the scale guard" if f.reason.startswith("scale:")
                    else "fails for the reason below")
            return f"{_small(f.value)} (meets {threshold_text(thr.value)}; {what})"
        m = f.row.metrics
        if m is not None and m.exact and m.unequal:  # (T2: an index row read as a cosine miss)
            return (f"{_small(f.value)} (threshold {threshold_text(thr.value)}; integer values "
                    "are compared exactly: any difference fails them, below)")
        return f"{_small(f.value)} (threshold {threshold_text(thr.value)}; no threshold passes it)"
    sign = "<" if thr.higher_is_better else ">"
    shown = f"{beside(f.value, thr.value)} {sign} {threshold_text(thr.value)}"
    key = policy.threshold_key(f.row.names) if policy is not None else None
    if key is not None:  # whose threshold it failed: the user's per_op entry (a PP-OCR trial)
        shown += f" (per_op {key!r})"
    if not thr.advisable(f.would_pass):  # as for NaN: none a check accepts and means passes
        return f"{shown} ({NO_COSINE_THRESHOLD[f.would_pass < 0]})"
    guard = _scale_guard_too(f, policy, cli)
    if guard:
        return f"{shown} ({guard})"
    return f"{shown} ({would_pass_text(f, verdict, _num, short_reason)})"


#: a cosine at or below 0 (the loosest threshold passing it 0, or below): the marker and the YAML
#: suite take thresholds within [0, 1] (``plugin.marker_spec.validate_threshold``), so the
#: "threshold that would pass: -1.000000" of an inverted tensor was refused pasted (a YAML
#: trial); [False]: 0 or just above, [True]: negative
NO_COSINE_THRESHOLD = ("no threshold above 0 passes it: the tensor is orthogonal to the golden's",
                       "no threshold within [0, 1] passes it: the tensor points away from the "
                       "golden's")


def _fails_guard_too(f: Failure, policy) -> bool:
    """Whether ``f``, a failure of its threshold, fails the scale guard as well (by the ratio
    judging uses: ``guard_ratio``)."""
    m = f.row.metrics
    return not (policy is None or f.would_pass is None or f.threshold is not policy.default
                or m is None or m.golden_zero
                or not policy.off_scale(guard_ratio(m, f.threshold.metric)[0]))


def first_failing_reason(f: Failure, policy=None) -> str:
    """What fails ``f`` beyond "value < threshold" (JUnit's ``accuracy_first_failing_reason``):
    its own reason (scale guard, NaN/Inf, not compared), or the threshold and the scale guard
    where both fail it (a dashboard saw no reason); else ""."""
    if f.would_pass is None:
        return short_reason(f)
    if not _fails_guard_too(f, policy):
        return ""
    t = policy.scale_tolerance
    ratio = guard_ratio(f.row.metrics, f.threshold.metric)[0]
    return (f"{short_reason(f)} and the scale guard: L2 norm {ratio:.4g}x the golden's, outside "
            f"{1 / t:.3g}-{t:g}x")


def _scale_guard_too(f: Failure, policy, cli: bool) -> str:
    """Where lowering the default threshold to ``f.would_pass`` leaves ``f``'s row failing the
    scale guard (judged only under the default threshold), what passes it: the threshold with
    a wider ``scale_tolerance``, or None; else "". (The threshold alone, pasted, still failed.)"""
    if not _fails_guard_too(f, policy):
        return ""
    r = guard_ratio(f.row.metrics, f.threshold.metric)[0]
    t = policy.scale_tolerance
    need = max(r, 1.0 / r) if 0.0 < r < math.inf else math.inf
    wider = ""
    if math.isfinite(need):
        wide = math.ceil(need * 100) / 100
        while not 1.0 / wide <= r <= wide:  # rounding up to 2 decimals may fall short
            wide = round(wide + 0.01, 2)
        wider = (f"--scale-tolerance {wide:g} (or none)" if cli
                 else f"scale_tolerance={wide:g} (or None)")
    elif cli:
        wider = "--scale-tolerance none"
    else:
        wider = "scale_tolerance=None"
    lowered = (f"--threshold {_num(f.would_pass)}" if cli
               else f"threshold={_num(f.would_pass)}")
    return (f"the scale guard fails it too: L2 norm {r:.4g}x the golden's, outside "
            f"{1 / t:.3g}-{t:g}x; {lowered} with {wider} would pass it")


def _first_block(f: Failure, policy=None, cli: bool = False, verdict=None) -> List[str]:
    row = f.row
    m = row.metrics
    shape = _shape(row.shape)
    if row.golden_shape and tuple(row.golden_shape) != tuple(row.shape):
        shape += f" (golden {_shape(row.golden_shape)})"
    golden = "-"
    if row.golden_name:
        golden = f"{printable(row.golden_name)} {row.golden_slot}"
        if row.match:
            golden += f" (matched by {row.match})"
    fields = [
        ("dump name", printable(row.op_name) + ("" if row.slot == "output:0" else f" {row.slot}")),
        ("original ops", ", ".join(printable(n) for n in row.original_names) or "-"),
        ("golden", golden),
        ("op type", printable(row.op_type) or "-"),
        ("dtypes", _dtypes(row)),
        ("shape", shape),
        (f.threshold.metric, _metric_line(f, policy, cli, verdict)),
    ]
    if f.threshold.metric != "cosine" and m is not None:
        fields.append(("cosine", _num(judged_cosine(m))))
    fields += [
        ("max abs error", _small(m.max_abs) if m else "NaN"),
        ("max rel error", _small(m.value("max_rel")) if m else "NaN"),
        ("NaN/Inf", _nonfinite(row)),
    ]
    if f.would_pass is None:
        fields.append(("why", printable(f.reason)))
    if m is not None and m.notes:
        fields.append(("notes", printable("; ".join(m.notes))))
    width = max(len(k) for k, _ in fields)
    return [f"first failing operator (#{row.order} in graph order):"] + [
        f"  {k.ljust(width)}  {v}" for k, v in fields]


def table(rows: Sequence[Sequence[str]], header: Sequence[str], indent: str = "  ") -> List[str]:
    """Left-aligned text columns (numbers right-aligned), two spaces apart."""
    cols = list(zip(*([header] + [list(r) for r in rows])))
    widths = [max(len(c) for c in col) for col in cols]
    numeric = [all(_is_num(v) for v in col[1:]) and len(col) > 1 for col in cols]

    def line(cells):
        parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)]
        return (indent + "  ".join(parts)).rstrip()
    return [line(header)] + [line(r) for r in rows]


def _is_num(v: str) -> bool:
    if v in ("NaN", "inf", "-inf"):
        return True
    try:
        float(v)
        return True
    except ValueError:
        return False


def _row_cells(f: Failure) -> List[str]:
    m = f.row.metrics
    return [str(f.row.order), _name_cell(f.row.label), printable(f.row.op_type) or "-",
            failing_cosine(f) if m else "NaN", _small(m.value("rel_l2")) if m else "NaN",
            _small(m.max_abs) if m else "NaN", printable(short_reason(f), 60)]


def _worst_block(verdict: Verdict, limit: int) -> List[str]:
    rest = [f for f in verdict.worst(len(verdict.failures)) if f is not verdict.first]
    if not rest:
        return []
    shown = rest[:limit]
    lines = [f"next worst operators ({len(shown)} of {len(rest)}):"]
    lines += table([_row_cells(f) for f in shown],
                   ["#", "op", "type", "cosine", "rel_l2", "max_abs", "why"])
    lines += plain_cosine_lines([f.row for f in shown], metrics=("cosine", "rel_l2"))
    if len(rest) > limit:
        lines.append(f"  ... and {len(rest) - limit} more (see the full report)")
    return lines


#: how a Python caller makes a device dump comparable: read it with its om json and pass the
#: dump read to ``{check}`` (check_accuracy, assert_accuracy: neither takes om_json=, which
#: pasted raised TypeError); the command line's spelling: ``default_hint(cli=True)``
LOAD_DUMP_ADVICE = ('read the device dump with load_dump(DIR, om_json="model.json") (the om json '
                    "of atc --mode=1; from pytest_ascend_accuracy import load_dump) so fused ops "
                    "find their original names, and pass that to {check}")
#: how a pytest test makes two dumps comparable (check_accuracy has no mapping= either): the
#: plugin's ``problem`` hint (``hints.next_step``)
PROBLEM_ADVICE = LOAD_DUMP_ADVICE.format(check="check_accuracy")


def default_hint(verdict: Verdict, range_inputs: Sequence = (),
                 result: Optional[CompareResult] = None, *, cli: bool = False,
                 golden=None, model=None) -> str:
    """What to run next, from what the failures look like. ``range_inputs`` are
    ``compare.fp16_range.RangeFinding`` values: golden operands past 65504 of failing ops.
    ``result``: the comparison judged, if at hand (an om json it already had is not asked for).
    ``cli``: spelled for the ``ascend-accuracy`` command (its options, and ``diagnose`` to try
    a mode), else for the Python API (``assert_accuracy``: ``ignore=``, ``keep_dtype=``).
    ``golden``: the golden DumpSet, whose operand files tell which ops feed a failure.
    ``model``: the ONNX model the golden ran, where known: a keep list names the ops of its If
    branches as keep_dtype takes them (``fp16_fix_ops.keep_dtype_names``)."""
    if verdict.problem:
        from ..compare.result import problem_advice

        known = problem_advice(verdict.problem)
        if known is not None:
            return known[1]
        if cli:
            return ("check that both dumps come from the same model and run; pass the om json "
                    "(--om-json F, from atc --mode=1) so fused ops find their original names, "
                    "or map op names with --mapping F")
        # assert_accuracy has no om_json= (the advice said om_json=: pasted, TypeError): it
        # takes the dump read with it; its mapping= pairs names
        return ("check that both dumps come from the same model and run; "
                + LOAD_DUMP_ADVICE.format(check="assert_accuracy") + ", or map op names with "
                "assert_accuracy(..., mapping={DUMP_OP: GOLDEN_OP})")
    from ..compare.result import NOT_COMPARED

    hidden = [f.row.op_name for f in verdict.failures if f.reason.startswith(NOT_COMPARED)]
    if hidden and len(hidden) == len(verdict.failures):  # no value failed: golden tensors lack
        hidden = list(dict.fromkeys(hidden))  # an op with several outputs not compared: once
        listed = ", ".join(printable(n) for n in hidden[:3]) + (", ..." if len(hidden) > 3 else "")
        had_om_json = result is not None and bool(
            (result.meta.get("actual") or {}).get("om_json"))
        om_json = "" if had_om_json else "where the dump names ATC's fused ops, " + (
            "pass the om json (--om-json F, from atc --mode=1) so they find their original "
            "names; " if cli else LOAD_DUMP_ADVICE.format(check="assert_accuracy") + "; ")
        if cli:
            import shlex

            accept = "or accept them unchecked with " + " ".join(
                f"--ignore {shlex.quote(n)}" for n in hidden)
        else:
            accept = "or accept them unchecked with ignore= / --ignore NAME"
        known = naming_reason(verdict)
        if known:  # the golden's naming cannot tell these ops apart: its own way out
            return f"{known}; {accept}"
        return (f"the golden holds no tensor for {listed}: check that the golden dump has their "
                f"outputs (a file per op output); {om_json}{accept}")
    if unread(verdict):  # nothing was read: no overflow to speak of, no mode to try
        return ": ".join(unread_hint(verdict, cli, result))
    from .fp16_fix_ops import device_mode

    # the dump's mode (its om json's atc_cmdline) where its dtypes are the device's own
    dumped = dumped_mode(result)[0]
    mode = device_mode(dumped, (result.meta.get("actual_kind") or "")
                       if result is not None else "")
    names, reason = keep_dtype_names(verdict, range_inputs, mode,
                                     result.rows if result is not None else (), model=model)
    half = float16_hint(verdict, names, range_inputs, result)
    if half:  # an op the model computes in float16: no mode makes it float32
        return half
    if names and names.unexplained:  # an overflow after the first failure: not its fix
        return f"{reason}; {diagnose_by_running(verdict, result, cli)}"
    if names:
        from .keep_dtype_text import keep_dtype_text

        return keep_dtype_text(verdict, names, reason, result, dumped, cli=cli)
    from .if_branches import branch_reason, nothing_fused

    branch = branch_reason(range_inputs)
    if branch:  # inside an If run as one operator: no mode promised (if_branches)
        if cli:
            return (f"{branch}: {cli_diagnose(verdict, None, result)} tries high precision and "
                    "keeping every op in float32, the ops inside the If's branches included, "
                    "and names the mode that restores accuracy, if one does"
                    + not_carried(result))
        return f"{branch}: {API_DIAGNOSE}"
    label = nonfinite_in_range(verdict) if hasattr(range_inputs, "checked") else ""
    if label:  # NaN/Inf with the golden in range: a probe, not the ops it ran through
        reason = nonfinite_reason(nonfinite_failure(verdict).row, range_inputs)
        cube = cube_probe(verdict, range_inputs)
        if cube and not cli:  # high precision still feeds a Cube op float16
            return cube
        if cli:
            return (f"{reason}: {cli_diagnose(verdict, None, result)} tries high precision and "
                    "names the ops to keep in float32, if some restore accuracy"
                    + not_carried(result))
        return (f"{reason}: convert in mode HIGH_PRECISION to see whether float16 rounding is the "
                "cause (from pytest_ascend_accuracy import HIGH_PRECISION); diagnose(...) then "
                "names the ops to keep in float32")
    from .tiny_float32 import text_hint

    tiny = text_hint(verdict, result, golden, mode, cli=cli)
    if tiny:  # float32, below float16's normal range: float16 upstream, or no mode changes it
        return tiny
    if cli:  # a plain sequence, not golden_inputs_past_fp16's findings: nothing was looked at
        seen = (no_overflow_seen(range_inputs) if hasattr(range_inputs, "checked")
                else SAVED_NOT_CHECKED)  # (judge: a saved result holds no golden tensor)
        seen += flushed_after_first(verdict, range_inputs) + per_op_only(verdict)
        return (f"{seen}: {cli_diagnose(verdict, None, result)} walks the "
                "debugging flow on the ONNX model the dump ran (high precision, ops kept in "
                "float32, buffer reuse off, fusion off) and names the mode that restores "
                "accuracy, if one does" + not_carried(result))
    from .emulated_probes import API_FUSION_ONLY, buffer_off_neutral, run_meta

    emulated = buffer_off_neutral(run_meta(result=result))
    if result is not None and nothing_fused(result.rows, emulated):
        from .if_branches import API_NOTHING_FUSED

        return (f"{no_overflow_seen(range_inputs)}{flushed_after_first(verdict, range_inputs)}"
                f"{per_op_only(verdict)}{API_NOTHING_FUSED}: {API_DIAGNOSE}")
    probe = (API_FUSION_ONLY if emulated else  # the emulator
             'mode="fusion_off" and mode="buffer_off" to see whether a fusion pass or buffer '
             "reuse causes the first failure; where neither passes (float16 rounding alone), ")
    return (f"{no_overflow_seen(range_inputs)}{flushed_after_first(verdict, range_inputs)}"
            f"{per_op_only(verdict)}: compare with {probe}" + API_DIAGNOSE)


#: ``judge``'s reason: it reads a saved result, whose golden operands no one looked at
SAVED_NOT_CHECKED = ("no float16 overflow in the failing values; their golden operands were not "
                     "checked (a saved result holds no golden tensors)")


def no_overflow_seen(range_inputs: Sequence = ()) -> str:
    """Why a hint found nothing to keep in float32: no float16 overflow seen, or -- when the
    golden held none of the failing ops' inputs (``compare.fp16_range.RangeFindings.checked``
    0) -- that their operands were not looked at, which a golden with inputs would allow."""
    unlooked = ("; the ignored ops' operands were not looked at (the golden tells no edges "
                "to the failures: the ONNX model, or a golden of op outputs and inputs as the "
                "cache holds it, would)" if getattr(range_inputs, "ignored_unlooked", False)
                else "")
    from .if_branches import unlooked_note

    unlooked += unlooked_note(range_inputs)  # a failing If's branch not read: said
    if getattr(range_inputs, "checked", None) == 0:
        return ("no float16 overflow in the failing values; their golden operands were not "
                "checked (the golden holds no inputs of the failing ops: a golden dumped with "
                "its operators' inputs shows whether one leaves the float16 range)" + unlooked)
    return "no float16 overflow seen" + unlooked


#: how to ask for the CSV, per caller: assert_accuracy's argument here; the plugin's option
#: (``PLUGIN_REPORT_HOW``: ``check_accuracy`` has no csv_path) and the CLI's flag name their own
DEFAULT_REPORT_HOW = "pass csv_path=..."
PLUGIN_REPORT_HOW = "rerun with --accuracy-report=DIR"


def skipped_note(result: CompareResult) -> str:
    """``"; N golden file(s) not read (name: why, ...)"``: files of the golden dump its reader
    skipped (a name it does not parse), which the coverage does not count (a user trial: they
    were dropped with nothing printed)."""
    skipped = (result.meta.get("golden") or {}).get("skipped_files") or ()
    if not skipped:
        return ""
    shown = ", ".join(f"{printable(str(item[0]))}: {item[1]}" if isinstance(item, (list, tuple))
                      and len(item) == 2 else printable(str(item)) for item in skipped[:2])
    more = ", ..." if len(skipped) > 2 else ""
    return (f"; {len(skipped)} golden file{'s' if len(skipped) != 1 else ''} not read "
            f"({shown}{more})")


def unlisted_note(result: CompareResult) -> str:
    """``"; N dump op(s) not in the om json (name, ...): ..."``: ops of the device dump the om
    json given with it does not list (a user may name another model's json, or an older one),
    paired by their own dump headers instead; the coverage counted them with nothing said."""
    unlisted = (result.meta.get("actual") or {}).get("ops_not_in_om_json") or ()
    if not unlisted:
        return ""
    shown = ", ".join(printable(str(name)) for name in unlisted[:3])
    more = ", ..." if len(unlisted) > 3 else ""
    one = len(unlisted) == 1
    return (f"; {len(unlisted)} dump op{'' if one else 's'} not in the om json ({shown}{more}): "
            f"paired by {'its dump header' if one else 'their dump headers'} instead (an om json "
            f"of another model, or of other options, lists other ops)")


def coverage_line(result: CompareResult) -> str:
    return f"coverage: {result.coverage.describe()}{skipped_note(result)}{unlisted_note(result)}"


def report_line(csv_path, how: str = DEFAULT_REPORT_HOW) -> str:
    if csv_path:
        return f"full report: {printable(str(csv_path))}"
    return f"full report: not written ({how})"


def failure_text(result: CompareResult, verdict: Verdict, *, csv_path=None,
                 hint=None, worst: int = WORST_ROWS,
                 report_how: str = DEFAULT_REPORT_HOW, range_inputs: Sequence = (),
                 cli: bool = False, dump_kept: Optional[str] = None, golden=None,
                 dump_lifetime: Optional[str] = None) -> str:
    """The fixed failure block for a failed verdict. ``report_how`` says how to get the CSV
    when ``csv_path`` is None. ``hint``: a text, a ``report.hints.Hint`` (printed with the
    modes to paste), or None for ``default_hint``. ``cli``: the ``ascend-accuracy`` command's
    spelling of every option named (``--ignore NAME``), as ``default_hint(cli=True)``.
    ``dump_kept``: where the failing run's device dump stays, as printed (the plugin keeps a
    failing test's dumps; a YAML trial found them only through compare.json's actual_root),
    a line after the report's; ``dump_lifetime``, the line after it: how long it stays
    (``plugin.dump_lifetime``). ``golden``: the golden DumpSet, for ``default_hint``."""
    if verdict.passed:
        return summary_text(result, verdict, csv_path=csv_path)
    from .one_element_groups import grouped
    verdict = grouped(verdict, result.rows)  # one paste for a value's one-element copies
    head = verdict.describe()
    if cli:
        from ..compare.result import IGNORE_NOTE, IGNORE_NOTE_CLI
        head = head.replace(IGNORE_NOTE, IGNORE_NOTE_CLI)
    lines = [head, ""]
    if verdict.first is not None:
        lines += _first_block(verdict.first, verdict.policy, cli, verdict)
        block = _worst_block(verdict, worst)
        if block:
            lines += [""] + block
        lines.append("")
    lines += [coverage_line(result), *outputs_lines(result, verdict, _num),
              report_line(csv_path, report_how)]
    if dump_kept:
        lines.append(f"dump kept: {printable(dump_kept)}")
        if dump_lifetime:
            lines.append(dump_lifetime)
    if hint is not None and not isinstance(hint, str):
        lines += hint.lines()
    else:
        if hint is None:
            hint = default_hint(verdict, range_inputs, result, cli=cli, golden=golden)
        lines.append(f"next step: {hint}")
    return "\n".join(lines)


def summary_text(result: CompareResult, verdict: Verdict, *, csv_path=None,
                 rows: int = WORST_ROWS) -> str:
    """A passing verdict: the verdict line, the lowest-scoring tensors, coverage, report."""
    lines = [verdict.describe()]
    thr = verdict.policy.default
    judged = [r for r in result.compared_rows if r.metrics is not None
              and not verdict.policy.is_ignored(r.names)
              and thr.metric not in r.metrics.not_applicable]
    key = (lambda r: r.metrics.value(thr.metric)) if thr.higher_is_better else (
        lambda r: -r.metrics.value(thr.metric))
    lowest = sorted(judged, key=key)[:rows]
    if lowest:
        lines += ["", f"closest to the threshold ({thr.metric}):"]
        # the judged metric's own column where it is not one of the three shown
        extra = [] if thr.metric in ("cosine", "rel_l2", "max_abs") else [thr.metric]
        lines += table([[str(r.order), _name_cell(r.label), printable(r.op_type) or "-",
                         _num(judged_cosine(r.metrics)), _small(r.metrics.value("rel_l2")),
                         _small(r.metrics.max_abs)]
                        + [_small(r.metrics.value(m)) for m in extra]
                        for r in lowest],
                       ["#", "op", "type", "cosine", "rel_l2", "max_abs"] + extra)
        lines += plain_cosine_lines(lowest, metrics=["cosine", "rel_l2"] + extra)
    lines += ["", coverage_line(result)]
    if csv_path:
        lines.append(report_line(csv_path))
    return "\n".join(lines)

"""What kind of failure a verdict is, where the kind decides the hint: every failing tensor
left unread; ops left uncompared because another tool's golden naming cannot tell them apart;
failures that meet the default threshold and fail only the user's stricter per_op figure."""
from __future__ import annotations

import shlex
from typing import Tuple

from ..compare.result import Verdict
from .printable import printable

#: how the reasons of ops left uncompared by another tool's golden naming begin (msit's
#: colliding stems and position numbering, ``compare.matching``; msaccucmp convert's shared
#: names, ``dump.npy_dir``): each says why and the way out
NAMING_REASONS = ("the golden's files ", "the golden numbers unnamed ",
                  "the converted dump's file names ")


def naming_reason(verdict: Verdict) -> str:
    """The first not-compared failure's reason where every not-compared failure's is one of
    ``NAMING_REASONS`` (without the "not compared: " head), else ""; the generic "check that
    the golden has their outputs" hint sent a user to a golden that had them, under names that
    could not be told apart."""
    from ..compare.result import NOT_COMPARED

    found = ""
    for f in verdict.failures:
        if not f.reason.startswith(NOT_COMPARED):
            continue
        why = f.reason[len(NOT_COMPARED):].lstrip(": ")
        if not why.startswith(NAMING_REASONS):
            return ""  # another op lacks its golden for another reason: the generic advice
        found = found or why
    return found


def unread(verdict: Verdict) -> bool:
    """Every failing tensor went unread (shapes that cannot be compared, a file not read): its
    values say nothing about float16 range or about any mode."""
    return bool(verdict.failures) and all(f.row.metrics is None for f in verdict.failures)


UNREAD_REASON = "the failing tensors were not read"
#: op types (ONNX's and the Ascend types dumps show) whose output size depends on values
VALUE_SIZED = ("NonZero", "NonMaxSuppression", "Unique", "Compress", "TopK",
               "BatchMultiClassNonMax")


def _cli_diagnose(verdict: Verdict, result) -> str:
    from .cli_commands import cli_diagnose

    return cli_diagnose(verdict, result=result)


def unread_hint(verdict: Verdict, cli: bool = False, result=None) -> Tuple[str, str]:
    """(reason, advice) of a verdict whose failing tensors were all left unread; ``result``:
    the compare's, whose model the CLI's diagnose command names (``cli_commands``)."""
    first = verdict.failures[0]
    reason = f"{UNREAD_REASON} ({printable(first.row.label)}: {printable(first.reason)})"
    if ("shape_mismatch" in first.row.flags and first.row.op_type.startswith(VALUE_SIZED)
            and verdict.judged > len(verdict.failures)):
        # other tensors of the run compared, and the op's output size depends on values (a
        # trial: NonMaxSuppression kept 37 boxes of the golden's 38 once its scores were
        # rounded to float16; "make the dumps comparable ... same model" was untrue)
        return reason, (
            "the other tensors of this run compare, so the inputs agree: an op whose output size "
            "depends on values (NonZero, NonMaxSuppression, TopK with a computed k, ...) kept "
            "another count, as float16 rounding of values at its threshold can make it do; "
            + (_cli_diagnose(verdict, result) if cli else "--accuracy-diagnose")
            + " tries high precision and keep_dtype sets and prints a mode that passes, if one "
              "does (if none does, the op itself computes otherwise)")
    if "device_layout" in first.row.flags:  # stored in a layout no reader converts
        names = list(dict.fromkeys(f.row.tensor_index for f in verdict.failures
                                   if "device_layout" in f.row.flags))
        what, it = ("it", "it") if len(names) == 1 else (f"these {len(names)} tensors", "them")
        if verdict.judged <= len(names):  # (a review: one --ignore per run, then "no tensor")
            return reason, (f"{what} cannot be compared as the device dumped {it} (the layout "
                            "is not converted back), and no other tensor is compared: this dump "
                            "gives no verdict as it is")
        return reason, (
            f"{what} cannot be compared as the device dumped {it} (the layout is not converted "
            f"back): to judge the other tensors without {it}, "
            + (" ".join(f"--ignore {shlex.quote(n)}" for n in names) if cli
               else f"ignore={names!r}"))
    return (reason,
            "make the dumps comparable first: both from the same model, input shapes and run"
            + ("" if not cli else
               "; an om json (--om-json F) or a mapping (--mapping F) pairs renamed ops"))


def per_op_only(verdict: Verdict) -> str:
    """``"; ... fail only their per_op threshold ..."`` where every failure is judged by a
    per_op entry stricter than the default, which its value meets: the user's own figure
    decides the verdict, and the hint says so before any mode (a PP-OCR trial: nothing named
    the entry that set 0.99999999)."""
    policy = verdict.policy
    keys = []
    for f in verdict.failures:
        key = policy.threshold_key(f.row.names)
        m = f.row.metrics
        if key is None or m is None or f.would_pass is None:
            return ""
        if not policy.default.passed(m.value(policy.default.metric)):
            return ""
        keys.append(f"{key!r}: {f.threshold.describe()}")
    if not keys:
        return ""
    shown = ", ".join(dict.fromkeys(keys[:3])) + (", ..." if len(keys) > 3 else "")
    return (f"; the failing ops fail only the per_op thresholds set for them ({shown}) and "
            f"meet the default {policy.default.describe()}: if that figure is stricter than "
            "meant, loosen the entry" + member_entry_text(verdict))


def member_entry(verdict: Verdict):
    """``(key, row, maker)`` where the first failure is a fused op judged by a per_op entry
    ``key`` naming a member of it other than ``maker``, the op whose output the fused op's
    row compares; else None. keras2onnx's Dense (MTCNN's onet, audit 34): ``per_op`` on
    ``dense_6``, the MatMul, judged the fused MatMul+Add by default and the MatMul alone under
    ``fusion_off``, so the printed FUSION_OFF probe passed where the output, judged by the
    default cosine, was worse: a false pass."""
    from fnmatch import fnmatchcase

    first = verdict.first
    if first is None:
        return None
    row = first.row
    key = verdict.policy.threshold_key(row.names)
    maker = row.golden_name
    if key is None or not maker or len(set(row.original_names)) < 2:
        return None
    named = key.split(":output:")[0]  # (a re-review: 'fc:output:0' the same)
    members = [m for m in row.original_names if m != maker]
    # a member, or a glob matching one, not the fused op's own name (which fusion_off refuses)
    if named == maker or fnmatchcase(maker, named) or not any(
            m == named or fnmatchcase(m, named) for m in members):
        return None
    return key, row, maker


def member_entry_text(verdict: Verdict) -> str:
    """``member_entry``'s consequence, said (""where there is none): under fusion_off the
    entry judges another tensor, so a fusion probe would not compare like with like."""
    found = member_entry(verdict)
    if found is None:
        return ""
    from .would_pass import rekeyed_per_op

    key, row, maker = found
    glob = any(c in key for c in "*?[")
    alone = "the op it matches alone" if glob else f"op {key.split(':output:')[0]!r} alone"
    how = (f"add an entry {printable(maker)!r} before it" if glob
           else f"key the entry {printable(maker)!r}")
    return (f"; the entry {key!r} judges fused op {printable(row.label)} "
            f"({', '.join(printable(n) for n in row.original_names)}), whose output op "
            f"{printable(maker)!r} makes, and under fusion_off {alone} (before "
            f"{printable(maker)!r}), another tensor: to judge this output in every mode, {how}, "
            f"every other entry as it is: {rekeyed_per_op(verdict, key, maker)}")


def nonfinite_failure(verdict: Verdict):
    """The first failure whose actual values turn NaN/Inf where the golden's stay finite, or
    None: its hint, where no golden value or operand leaves float16's range, is a probe (high
    precision, or its ops kept in float32 where it runs on the Cube unit: ``cube_ops_kept``;
    then ``--accuracy-diagnose``), never a keep_dtype list of the ops it runs through
    (``failure_text.fp16_range_rows``)."""
    for f in verdict.failures:
        m = f.row.metrics
        if m is not None and m.mismatch and m.nonfinite_actual > m.nonfinite_golden:
            return f
    return None


def nonfinite_in_range(verdict: Verdict) -> str:
    """The label of ``nonfinite_failure``'s row, or ""."""
    f = nonfinite_failure(verdict)
    return f.row.label if f is not None else ""


def on_cube(row) -> bool:
    """Whether ``row``'s op runs on the Cube unit (Conv, MatMul, Gemm and the ops ATC fuses
    into them), whose inputs and weights stay float16 in high precision."""
    from ..core.ascend_optypes import is_cube

    return is_cube(row.op_type)


def cube_ops_kept(row) -> Tuple[str, ...]:
    """The ops of ``row`` (every original op of a fused one, as the model names them) to keep
    in float32 as the NaN/Inf probe where ``row`` runs on the Cube unit, else ``()``: high
    precision still feeds a Cube op float16, so its failing said nothing of float16 (a conv
    whose weights, folded with a BatchNorm scale of 100 at conversion, pass 65504 read "not
    float16 rounding" while keep_dtype of the conv passed: a fix-files trial)."""
    from .model_spelling import row_model_name

    if not on_cube(row):
        return ()
    return tuple(row.original_names) or tuple(
        n for n in (row_model_name(row) or row.op_name,) if n)


#: the probe's reason and advice (``nonfinite_in_range``)
NONFINITE_REASON = ("values turn NaN/Inf at {label} though the golden values stay within float16 "
                    "(and no golden operand looked at leaves its range): float16 rounding before "
                    "or inside it (a value rounded to 0, then divided by), or a fault")
NONFINITE_ADVICE = ("convert in high precision to see whether float16 rounding is the cause "
                    "(--accuracy-diagnose then names the ops to keep in float32)")
#: the same where the op runs on the Cube unit (``cube_ops_kept``): reason, then advice
NONFINITE_CUBE_REASON = ("values turn NaN/Inf at {label} though the golden values stay within "
                         "float16 (and no golden operand looked at leaves its range); {label} "
                         "runs on the Cube unit, which takes float16 inputs and weights even in "
                         "high precision (a weight ATC folds with a BatchNorm's scale can pass "
                         "65504), so high precision failing would not rule float16 out")
#: the clause of both reasons a finding at the op's own operands makes untrue
_IN_RANGE = (" though the golden values stay within float16 (and no golden operand looked at "
             "leaves its range)")


def nonfinite_reason(row, range_inputs=(), cube: bool = False) -> str:
    """``NONFINITE_REASON`` (``NONFINITE_CUBE_REASON`` where ``cube``) of ``row``, the op whose
    values turn NaN/Inf; where ``range_inputs`` hold findings at that op's own operands (a
    Log's argument float16 flushes, read after the first failing ops: basic-pitch on a pure
    tone, audit 34), it names them instead of saying the golden stays within float16. Then the
    failing Ifs whose branches were not read (``if_branches.unlooked_note``)."""
    from .if_branches import unlooked_note

    label = printable(row.label)
    text = (NONFINITE_CUBE_REASON if cube else NONFINITE_REASON).format(label=label)
    own = {n for n in (row.golden_name, *row.original_names) if n}
    found = [f for f in (*range_inputs, *getattr(range_inputs, "late_overflow", ()))
             if getattr(f, "op", None) in own]
    if not found:
        return text + unlooked_note(range_inputs)
    shown = "; ".join(printable(f.describe()) for f in found[:3])
    if cube:
        return text.replace(_IN_RANGE, f", where golden values leave the float16 range "
                                       f"({shown})", 1) + unlooked_note(range_inputs)
    # (a review: "or a fault" undercut the finding it had just named)
    return (f"values turn NaN/Inf at {label}, where golden values leave the float16 range "
            f"({shown}): float16's range is the cause, there or before it, though no list of ops "
            f"to keep in float32 was found from the failing ops" + unlooked_note(range_inputs))


#: ``{how}``: how the ops are kept (the plugin's hint lists the modes after it); ``{diagnose}``:
#: what names the smallest set (the plugin's option, or the library's function)
_NONFINITE_CUBE = ("keep its ops in float32{how} to see whether float16 is the cause (passes: "
                   "it is, and {diagnose} names the smallest set to keep; still fails: not this "
                   "op's float16 inputs, but values rounded before it, or a fault)")
NONFINITE_CUBE_ADVICE = _NONFINITE_CUBE.format(how="", diagnose="--accuracy-diagnose")


def tiny_failing(verdict: Verdict, names=(), rows=()):
    """The first row, not one of ``names`` (the ops a keep_dtype fix keeps), whose golden
    values all lie below float16's smallest normal (and are not all 0) and that fails, or that
    passes only by float16's allowance for such values (its plain figure fails; ``rows``: the
    compared rows, where known), or None. High precision is no fix to offer beside keep_dtype
    there: it outputs the op in float32, which the compare judges by its plain figure (the
    allowance, ``compare.tiny_values``, is for a float16 actual only), and values that small
    differ by the float32 rounding of whatever computes them. PP-OCRv4 det in fusion_off, its
    BatchNorm's variance past 65504: keep_dtype of the BatchNorm passed (its Sigmoid float16,
    within the allowance), high precision failed at p2o.Sigmoid.0 at 64, 96, 128 and 160
    pixels (golden below 6e-08 to 4.5e-07; cosine 0.356, 0.775, 0.636, 0.930 < 0.95), where
    onnxruntime's own float32 Sigmoid is off by up to 7e-08 (at 96: 7 distinct golden values,
    cosine 0.851 with the exact sigmoid of its own logits); at 320 (golden below 2.3e-05) it
    passed at 0.95 with cosine 0.9988, which a threshold of 0.999 fails (a fix-files trial)."""
    named, policy = set(names), verdict.policy
    failed = {id(f.row) for f in verdict.failures}
    for r in failures_then_rows(verdict, rows):
        if not (named & set(r.names) or policy.is_ignored(r.names)) \
                and tiny_and_failing(r, policy, id(r) in failed):
            return r
    return None


def failures_then_rows(verdict: Verdict, rows=()) -> list:
    """The verdict's failing rows, then the other ``rows`` (the compared rows, where known)."""
    failed = {id(f.row) for f in verdict.failures}
    return [f.row for f in verdict.failures] + [r for r in rows if id(r) not in failed]


def tiny_and_failing(row, policy, failing: bool) -> bool:
    """Whether ``row``'s golden values (a float dtype) all lie below float16's smallest normal,
    not all 0, and it fails (``failing``) or its plain figure does: a passing row so passes
    only by float16's allowance for such values (``compare.tiny_values``)."""
    from ..compare.tiny_values import FP16_TINY

    m = row.metrics
    if (m is None or not 0 < m.max_abs_golden < FP16_TINY
            or "float" not in (row.golden_dtype or "float")):
        return False
    if failing:
        return True
    thr = policy.threshold_for(row.names)
    return thr.metric not in m.not_applicable and not thr.passed(getattr(m, thr.metric))


#: why the float16-range hint offers no high precision (``tiny_failing``)
TINY_NOTE = ("not high precision: {label}'s golden values all lie below float16's smallest "
             "normal (|{peak:.3g}|){passing}; high precision outputs them in float32, judged "
             "without float16's allowance for values that small, where the float32 rounding of "
             "either side alone can fail them")


def cube_probe(verdict: Verdict, range_inputs=()) -> str:
    """``assert_accuracy``'s next step where ``nonfinite_failure``'s op runs on the Cube unit:
    its ops kept in float32 as a mode to convert in (``cube_ops_kept``), else ""."""
    f = nonfinite_failure(verdict)
    cube = cube_ops_kept(f.row) if f is not None else ()
    if not cube:
        return ""
    shown = ", ".join(repr(printable(n)) for n in cube)
    return (nonfinite_reason(f.row, range_inputs, cube=True) + "; "
            + _NONFINITE_CUBE.format(how=f", converting in mode keep_dtype([{shown}]),",
                                     diagnose="diagnose(...)")
            + " (from pytest_ascend_accuracy import keep_dtype)")


def high_precision_blocker(verdict: Verdict, names, rows=()) -> str:
    """Why a float16-range fix keeping ``names`` offers no high precision beside it where
    ``tiny_failing`` finds an op it may fail (``TINY_NOTE``), else ""."""
    tiny = tiny_failing(verdict, names, rows)
    if tiny is None:
        return ""
    passing = ""
    if not any(f.row is tiny for f in verdict.failures):
        metric = verdict.policy.threshold_for(tiny.names).metric
        passing = (f" and it passes only by float16's allowance for them (plain {metric} "
                   f"{getattr(tiny.metrics, metric):.6f})")
    return TINY_NOTE.format(label=printable(tiny.label), peak=tiny.metrics.max_abs_golden,
                            passing=passing)

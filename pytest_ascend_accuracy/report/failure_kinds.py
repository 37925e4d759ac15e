"""What kind of failure a verdict is, where the kind decides the hint: every failing tensor
left unread; ops left uncompared because another tool's golden naming cannot tell them apart;
failures that meet the default threshold and fail only the user's stricter per_op figure."""
from __future__ import annotations

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


def unread_hint(verdict: Verdict, cli: bool = False) -> Tuple[str, str]:
    """(reason, advice) of a verdict whose failing tensors were all left unread."""
    first = verdict.failures[0]
    return (f"{UNREAD_REASON} ({printable(first.row.label)}: {printable(first.reason)})",
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
            "meant, loosen the entry")


def nonfinite_in_range(verdict: Verdict) -> str:
    """The label of the first failure whose actual values turn NaN/Inf where the golden's stay
    finite, or "": its hint, where no golden value or operand leaves float16's range, is a probe
    (high precision, then ``--accuracy-diagnose``), never a keep_dtype list of the ops it runs
    through (``failure_text.fp16_range_rows``)."""
    for f in verdict.failures:
        m = f.row.metrics
        if m is not None and m.mismatch and m.nonfinite_actual > m.nonfinite_golden:
            return f.row.label
    return ""


#: the probe's reason and advice (``nonfinite_in_range``)
NONFINITE_REASON = ("values turn NaN/Inf at {label} though the golden values stay within float16 "
                    "(and no golden operand looked at leaves its range): float16 rounding before "
                    "or inside it (a value rounded to 0, then divided by), or a fault")
NONFINITE_ADVICE = ("convert in high precision to see whether float16 rounding is the cause "
                    "(--accuracy-diagnose then names the ops to keep in float32)")

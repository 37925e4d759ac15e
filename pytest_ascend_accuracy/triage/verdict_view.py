"""How ``diagnose``'s steps read a verdict and name ops (``triage.flow``): the first failing op
and why it failed, the ops that fail, the worst value, a step's table, a list of names cut short."""
from __future__ import annotations

from dataclasses import replace
from typing import List, Sequence, Tuple

from ..compare.result import CompareResult, Verdict
from ..compare.thresholds import beside, threshold_text
from ..core.modes import Mode
from .result import OpLine
from .runner import Evaluation

#: rows shown per step table in the text/HTML renderings
TABLE_ROWS = 8


def _same(a: Mode, b: Mode) -> bool:
    return replace(a, label=None) == replace(b, label=None)


def _why(first) -> str:
    """Why a verdict's first failure failed: ``cosine 0.68 vs 0.95``, else its own reason, as
    the plain check gives it (values compared exactly, not compared, NaN/Inf, scale)."""
    metric = first.threshold.metric
    if first.value != first.value or not first.reason.startswith(f"{metric} "):
        return first.reason
    return (f"{metric} {beside(first.value, first.threshold.value)} vs "
            f"{threshold_text(first.threshold.value)}")


def _moved(before: Evaluation, after: Evaluation) -> bool:
    """Whether the first failure is at another op, or fails for another kind of reason."""
    a, b = before.verdict.first, after.verdict.first
    if a is None or b is None:
        return (a is None) != (b is None)
    return a.row.label != b.row.label or _kind(a) != _kind(b)


def _kind(failure) -> str:
    m = failure.row.metrics
    return ("not compared" if m is None else "non-finite" if m.mismatch else
            "exact" if m.exact else failure.reason.split(" ")[0])


def _failing_names(verdict: Verdict) -> List[str]:
    return list(dict.fromkeys(f.row.op_name for f in verdict.failures))


def _first_label(verdict: Verdict) -> str:
    first = verdict.first
    return first.row.label if first is not None else "-"


def _worst_value(verdict: Verdict, result: CompareResult, metric: str) -> float:
    values = [v for v in (r.metrics.value(metric) for r in result.compared_rows
                          if r.metrics is not None) if v == v]
    return float("nan") if not values else min(values) if metric == "cosine" else max(values)


def restored_text(ev: Evaluation, before: Verdict, metric: str) -> str:
    """What a fix's run ``ev`` restores: ``cosine 0.999999`` (the worst of ``metric``), and where
    the first failure of the run it fixes (``before``) was judged by another metric (a per_op
    entry), that op's own figure: ``; conv2d_4 max_abs 0.000854 <= 0.001`` (a max_abs failure's
    diagnosis said only "restores cosine 0.999999", audit 34)."""
    from .result import fmt

    text = f"{metric} {fmt(_worst_value(ev.verdict, ev.result, metric))}"
    first = before.first
    if first is None or first.threshold.metric == metric:
        return text
    own = first.threshold.metric
    row = next((r for r in ev.result.compared_rows if r.label == first.row.label
                and r.metrics is not None), None)
    if row is None:
        return text
    from ..report.figures import error_figure

    value, thr = row.metrics.value(own), first.threshold
    sign = (">=" if thr.higher_is_better else "<=") if thr.passed(value) else (
        "<" if thr.higher_is_better else ">")
    shown = beside(value, thr.value) if thr.higher_is_better else error_figure(value)
    return f"{text}; {first.row.label} {own} {shown} {sign} {threshold_text(thr.value)}"


def _table(verdict: Verdict) -> Tuple[OpLine, ...]:
    rows = []
    for f in verdict.worst(TABLE_ROWS):
        m = f.row.metrics
        rows.append(OpLine(f.row.label, f.row.op_type, *(float("nan"),) * 3, f.reason) if m is None
                    else OpLine(f.row.label, f.row.op_type, m.value("cosine"), m.rel_l2,
                                m.max_abs,
                                "" if f.reason.startswith(f"{f.threshold.metric} ") else f.reason))
    return tuple(rows)


def _names(names: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return (shown + f", ... ({len(names)} in all)") if len(names) > limit else (shown or "-")

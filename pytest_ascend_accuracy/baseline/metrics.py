"""Which of a test's metrics its per-operator baseline judges.

A baseline line records each operator's cosine, rel_l2 and max_abs (``baseline.file``). Every
line's cosine drop is judged by ``max_drop``; a line a threshold judges by rel_l2 also has its
rel_l2 rise judged, by the same ``max_drop``: how much the metric that judges it may worsen
(``rel_l2_lines``). Cosine alone did not guard a rel_l2 test: for an error that is no change
of scale, cosine ~= 1 - rel_l2**2 / 2, so an operator whose rel_l2 went from 0.001 to 0.04
(40 times worse, within a threshold of 0.05) dropped its cosine by 0.0008, and passed a
``max_drop`` of 0.002.

The other metrics a threshold may judge are not judged (``unjudged_metrics``): mean_abs, rmse,
max_rel, mean_rel, acc_rel and kl are not recorded, and max_abs is recorded in each tensor's
own units (a float16 step of an output near 100 is 0.06): one ``max_drop`` cannot judge it
across operators, and a real device's run-to-run spread in one element would read as a
regression. The plugin says so once a test (``BaselineMetricWarning``) instead of passing it
silently.
"""
from __future__ import annotations

from typing import FrozenSet, Tuple

from ..compare.metric_names import JUDGEABLE

#: the metrics a baseline judges the rise (or the cosine's drop) of, by ``max_drop``
JUDGED = ("cosine", "rel_l2")


class BaselineMetricWarning(UserWarning):
    """A test's threshold judges a metric its per-operator baseline does not judge (not
    recorded, or max_abs): a regression of that metric within the threshold passes the
    baseline, which is said instead of passing silently."""


def rel_l2_lines(result, policy) -> FrozenSet[Tuple[str, str]]:
    """The ``(op, slot)`` keys of the baseline lines of ``result`` (a ``CompareResult``) that
    ``policy`` (a ``compare.thresholds.Policy``) judges by rel_l2: its default threshold's or
    a ``per_op`` one's metric; ignored operators are not judged by it. A line's rel_l2 is the
    one the threshold judges (``TensorMetrics.value``; baseline version 3): subnormal rounding
    noise in msaccucmp's plain figure neither fails nor hides a regression (a review: judged
    0 -> 0.0173 under a plain 0.0329 that rose by noise)."""
    return frozenset((row.op_name, row.slot) for row in result.rows
                     if "no_golden" not in row.flags and not policy.is_ignored(row.names)
                     and policy.threshold_for(row.names).metric == "rel_l2")


def unjudged_metrics(policy) -> Tuple[str, ...]:
    """The metrics ``policy`` judges by (its default and ``per_op`` thresholds) that a baseline
    does not judge, in ``JUDGEABLE`` order."""
    return tuple(m for m in JUDGEABLE if m in policy.metrics and m not in JUDGED)


def unjudged_text(metrics: Tuple[str, ...], max_drop: float) -> str:
    """The ``BaselineMetricWarning`` text for a test whose thresholds judge ``metrics``."""
    names, either = " and ".join(metrics), " or ".join(metrics)
    units = ("; max_abs is recorded, but in each tensor's own units, which one max_drop "
             "cannot judge across operators" if "max_abs" in metrics else "")
    one = len(metrics) == 1
    return (f"the per-operator baseline does not judge {names}, which this test's threshold"
            f"{'' if one else 's'} judge{'s' if one else ''}: it judges each operator's cosine "
            f"drop (and rel_l2 rise, where rel_l2 judges it) by max_drop={max_drop:g}, more "
            f"NaN/Inf and operators no longer compared or missing{units}; a {either} that "
            f"got worse within the threshold passes it. A test judged by cosine or rel_l2 has its "
            f"own metric judged (to silence this: -W 'ignore:the per-operator baseline does not "
            f"judge', or the same in the ini's filterwarnings)")


__all__ = ["BaselineMetricWarning", "JUDGED", "rel_l2_lines", "unjudged_metrics",
           "unjudged_text"]

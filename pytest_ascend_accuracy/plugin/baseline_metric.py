"""The per-operator baseline judges a test by its own metric (``baseline.metrics``): the lines
its thresholds judge by rel_l2 have their rel_l2 rise judged by ``max_drop`` too, and a metric
a baseline does not judge is said once a test (``BaselineMetricWarning``)."""
from __future__ import annotations


def _policy(spec):
    """The ``Policy`` of ``spec`` (an ``AccuracySpec``), as ``run_check`` judges by."""
    from ..compare.thresholds import Policy

    return Policy.build(spec.threshold, spec.per_op_dict or None, spec.ignore, spec.metric,
                        spec.scale_tolerance)


def rel_l2_limits(result, spec) -> dict:
    """``check_baseline``'s keywords for the baseline of ``result`` (a ``CompareResult``):
    the rel_l2 rise of the lines ``spec`` judges by rel_l2, by its ``max_drop``; none when it
    judges none by rel_l2 (a cosine test's baseline is judged as it always was)."""
    from ..baseline.metrics import rel_l2_lines

    lines = rel_l2_lines(result, _policy(spec))
    return {"max_rel_l2_rise": spec.max_drop, "rel_l2_lines": lines} if lines else {}


def unjudged_warning(state, spec, nodeid: str):
    """The ``BaselineMetricWarning`` to give at the test's line when ``spec``'s thresholds judge
    a metric its baseline does not (``baseline.metrics.unjudged_metrics``), once a test; else
    None."""
    from ..baseline.metrics import BaselineMetricWarning, unjudged_metrics, unjudged_text

    metrics = unjudged_metrics(_policy(spec))
    if not metrics or nodeid in state.baseline_metric_warned:
        return None
    state.baseline_metric_warned.add(nodeid)
    return BaselineMetricWarning(unjudged_text(metrics, spec.max_drop))

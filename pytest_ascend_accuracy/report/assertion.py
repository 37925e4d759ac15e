"""``assert_accuracy``: compare two dumps and fail with the fixed, readable failure block.

Works without pytest (it raises an ``AssertionError`` subclass); inside pytest the frames of
this module are hidden from tracebacks.
"""
from __future__ import annotations

from typing import Mapping, Optional

from ..compare.engine import DumpLike, as_dump, compare_dumps  # noqa: F401  (as_dump too)
from ..compare.branch_range import failing_ops_and_branches, run_inside_ops
from ..compare.result import CompareResult, Verdict
from ..compare.thresholds import Policy, ThresholdLike, check_metric
from ..core.check_defaults import DEFAULT_SCALE_TOLERANCE, default_threshold_for
from .golden_overflow import warn_golden_overflow


class AccuracyFailure(AssertionError):
    """Raised when a comparison fails its verdict; ``.result`` and ``.verdict`` hold the data
    (so a caller can re-judge, write reports, or triage)."""

    def __init__(self, message: str, result: CompareResult, verdict: Verdict,
                 csv_path: Optional[str] = None):
        super().__init__(message)
        self.result = result
        self.verdict = verdict
        self.csv_path = csv_path


def _compared_while_running(actual, golden, kl: bool):
    """The result ``actual`` made against ``golden`` while it ran (a run of
    ``backends.emulator.compared_run``, not written since), else None."""
    compared = getattr(actual, "compared_with", None)
    return compared(golden, kl=kl) if compared is not None else None


def assert_accuracy(actual: DumpLike, golden: DumpLike, threshold: Optional[ThresholdLike] = None,
                    per_op: Optional[Mapping[str, ThresholdLike]] = None, *, ignore=(),
                    metric: str = "cosine", csv_path=None, hint: Optional[str] = None,
                    mapping: Optional[Mapping[str, str]] = None,
                    scale_tolerance: Optional[float] = DEFAULT_SCALE_TOLERANCE, progress=None,
                    kl: Optional[bool] = None, check_names: bool = True) -> CompareResult:
    """Compare ``actual`` against ``golden`` and raise ``AccuracyFailure`` if any tensor fails.

    ``threshold`` applies to ``metric`` (cosine: at least, 0.95 when not given; error metrics
    such as ``rel_l2``: at most, and they need one); ``scale_tolerance``: the scale guard of
    ``check_accuracy`` and the CLI, 2 by default (None: off); ``per_op`` maps op names or
    globs to their own thresholds; ``ignore`` lists op names or globs not judged. With
    ``csv_path`` the msaccucmp-compatible CSV is written (pass or fail) and the failure
    message points to it. ``hint`` replaces the suggested next step. ``progress`` is
    ``compare_dumps``'s callback. ``kl``: compute the KL divergence (a third of the compare's
    work); by default only when a threshold judges by it or the CSV is written (the result
    then refuses to be re-judged by ``kl``). ``check_names``: refuse ``per_op`` and ``ignore``
    entries naming no op of the two dumps (real names, original names, or globs matching one:
    a misspelled entry judged nothing and a stricter threshold was lost silently); False where
    the caller checked them against these dumps already (the plugin). Returns the
    ``CompareResult`` when everything passes.
    """
    __tracebackhide__ = True
    from .csv_report import write_csv
    from .failure_text import failure_text

    golden, actual = as_dump(golden), as_dump(actual)
    from ..compare.golden_spelling import in_actual_spelling

    golden = in_actual_spelling(golden, actual)  # the model's op names, not the files' spelling
    check_metric(metric, "assert_accuracy")  # before its default threshold is looked for
    if threshold is None:  # it was judged at the cosine's 0.95 whatever the metric
        threshold = default_threshold_for(metric, where="assert_accuracy",
                                          fix="; pass threshold=")
    policy = Policy.build(threshold, per_op, ignore, metric, scale_tolerance)
    if check_names:
        from ..graph.op_catalogue import check_dump_setting_names
        check_dump_setting_names([name for name, _ in policy.per_op], policy.ignore,
                                 (actual, golden), "assert_accuracy", actual=actual)
    if kl is None:
        kl = bool(csv_path) or "kl" in policy.metrics
    result = compare_dumps(actual, golden, mapping=mapping, progress=progress, kl=kl)
    verdict = result.judge(policy)
    if not verdict.passed and result is _compared_while_running(actual, golden, kl):
        # a run compared as it ran wrote no dump: the failure's report names the failing ops'
        # files, so the run is made again with its dump written, and compared from it
        actual.materialize()
        result = compare_dumps(actual, golden, mapping=mapping, progress=progress, kl=kl)
        verdict = result.judge(policy)
    warn_golden_overflow(result)  # the model's own float16 overflow, compared as equal
    written = write_csv(result, csv_path, verdict) if csv_path else None
    if not verdict.passed:
        ranges = () if hint is not None else failing_ops_and_branches(
            golden, verdict, result.rows, inside=run_inside_ops(actual, result))
        raise AccuracyFailure(failure_text(result, verdict, csv_path=written, hint=hint,
                                           range_inputs=ranges, golden=golden),
                              result, verdict, written)
    return result

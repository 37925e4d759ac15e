"""Comparison of two dumps: streamed metrics, operator matching, re-judgeable results.

``compare_dumps(actual, golden) -> CompareResult``; ``CompareResult.judge(...) -> Verdict``.

Layer above ``graph``: may import ``graph``, ``dump``, ``core`` and ``errors``.
"""
from .engine import CompareProgress, compare_dumps  # noqa: F401
from .metrics import TensorMetrics, compute_metrics  # noqa: F401
from .result import CompareResult, Coverage, Failure, TensorCompare, Verdict  # noqa: F401
from .thresholds import Policy, Threshold  # noqa: F401

__all__ = ["CompareProgress", "compare_dumps", "TensorMetrics", "compute_metrics", "CompareResult",
           "Coverage", "Failure", "TensorCompare", "Verdict", "Policy", "Threshold"]

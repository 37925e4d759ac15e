"""Comparison of two dumps: streamed metrics, operator matching, re-judgeable results.

``compare_dumps(actual, golden) -> CompareResult``; ``CompareResult.judge(...) -> Verdict``.
The names below are imported from their modules on first use (``core.lazy_exports``).

Layer above ``graph``: may import ``graph``, ``dump``, ``core`` and ``errors``.
"""
from ..core.lazy_exports import lazy_exports

_EXPORTS = {
    ".engine": ["CompareProgress", "compare_dumps"],
    ".metrics": ["TensorMetrics", "compute_metrics"],
    ".result": ["CompareResult", "Coverage", "Failure", "TensorCompare", "Verdict"],
    ".thresholds": ["Policy", "Threshold"],
}
lazy_exports(__name__, _EXPORTS)

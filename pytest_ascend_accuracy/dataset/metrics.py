"""Dataset-level accuracy: Top-k from logits and tolerance checks against a reference figure.

The precision-debugging flow ends with dataset figures (Top-1/Top-5, mAP) compared with the
reference network's within a tolerance. ``assert_metric_close`` states the verdict the way a
person reads it: "Top-1 0.9000 vs 0.9200 reference, tolerance 0.0100: fails by 0.0100".
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np


class MetricMismatch(AssertionError):
    """A dataset figure is outside its tolerance of the reference."""

    def __init__(self, message: str, check: "MetricCheck"):
        super().__init__(message)
        self.check = check


@dataclass(frozen=True)
class MetricCheck:
    name: str
    ours: float
    reference: float
    abs_tol: float
    rel_tol: float
    higher_is_better: bool

    @property
    def allowed(self) -> float:
        """The allowed distance: max(abs_tol, rel_tol * |reference|), as math.isclose does."""
        return max(self.abs_tol, self.rel_tol * abs(self.reference))

    @property
    def shortfall(self) -> float:
        """How far ours is worse than the reference (negative or 0 when as good or better)."""
        diff = self.reference - self.ours
        return diff if self.higher_is_better else -diff

    @property
    def passed(self) -> bool:
        if not (math.isfinite(self.ours) and math.isfinite(self.reference)):
            return False
        # better than the reference by any amount passes; worse must stay within the tolerance
        return self.shortfall <= self.allowed + 1e-12

    def describe(self) -> str:
        tol = _fmt(self.allowed)
        head = f"{self.name} {_fmt(self.ours)} vs {_fmt(self.reference)} reference, tolerance {tol}"
        if not (math.isfinite(self.ours) and math.isfinite(self.reference)):
            return f"{head}: fails (non-finite value)"
        if self.passed:
            return f"{head}: passes"
        return f"{head}: fails by {_fmt(self.shortfall - self.allowed)}"


def assert_metric_close(ours: float, reference: float, *, abs_tol: float = 0.0,
                        rel_tol: float = 0.0, name: str = "metric",
                        higher_is_better: bool = True) -> MetricCheck:
    """Fail when ``ours`` is worse than ``reference`` by more than the tolerance.

    With ``higher_is_better`` (accuracy, mAP) a better figure always passes; set it False for
    error-like figures (WER, loss). Tolerance = max(abs_tol, rel_tol * |reference|).
    """
    __tracebackhide__ = True
    if abs_tol < 0 or rel_tol < 0:
        raise ValueError("abs_tol and rel_tol must be >= 0")
    check = MetricCheck(name, float(ours), float(reference), float(abs_tol), float(rel_tol),
                        bool(higher_is_better))
    if not check.passed:
        raise MetricMismatch(check.describe(), check)
    return check


def topk_accuracy(logits, labels, k: int = 1) -> float:
    """Fraction of rows whose label is among the k largest logits (ties broken by index)."""
    scores = np.asarray(logits)
    truth = np.asarray(labels).reshape(-1)
    if scores.ndim != 2:
        raise ValueError(f"logits must be 2-D (samples x classes), got shape {scores.shape}")
    if scores.shape[0] != truth.shape[0]:
        raise ValueError(f"{scores.shape[0]} rows of logits but {truth.shape[0]} labels")
    if not 1 <= k <= scores.shape[1]:
        raise ValueError(f"k={k} outside 1..{scores.shape[1]}")
    if scores.shape[0] == 0:
        raise ValueError("no samples")
    # stable descending order: equal scores rank by class index, as argsort(-x, stable) does
    top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return float(np.mean(np.any(top == truth[:, None], axis=1)))


def topk_from_outputs(outputs: Sequence[np.ndarray], labels, ks: Sequence[int] = (1, 5),
                      ) -> dict:
    """{"top1": .., "top5": ..} over a list of per-sample (or batched) logits arrays."""
    rows = np.concatenate([np.asarray(o).reshape(-1, np.asarray(o).shape[-1]) for o in outputs])
    return {f"top{k}": topk_accuracy(rows, labels, k) for k in ks if k <= rows.shape[1]}


def _fmt(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else str(value)

"""Dataset-level accuracy: Top-k from logits and tolerance checks against a reference figure.

The precision-debugging flow ends with dataset figures (Top-1/Top-5, mAP) compared with the
reference network's within a tolerance. ``assert_metric_close`` states the verdict the way a
person reads it: "Top-1 0.9000 vs 0.9200 reference, tolerance 0.0100: fails by 0.0100".
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Sequence, Tuple

import numpy as np

from .figure_decimals import apart_decimals, figure_text  # noqa: F401


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
        over = self.shortfall - self.allowed
        # enough decimals that a failing figure never reads as its reference, nor as 0 over
        d = apart_decimals((self.ours, self.reference), *([] if self.passed else [(over, 0.0)]))
        head = (f"{self.name} {figure_text(self.ours, d)} vs {figure_text(self.reference, d)} "
                f"reference, tolerance {figure_text(self.allowed, d)}")
        if not (math.isfinite(self.ours) and math.isfinite(self.reference)):
            return f"{head}: fails (non-finite value)"
        if self.passed:
            return f"{head}: passes"
        return f"{head}: fails by {figure_text(over, d)}"


def assert_metric_close(ours: float, reference: float, *, abs_tol: float = 0.0,
                        rel_tol: float = 0.0, name: str = "metric",
                        higher_is_better: bool = True) -> MetricCheck:
    """Fail when ``ours`` is worse than ``reference`` by more than the tolerance.

    With ``higher_is_better`` (accuracy, mAP) a better figure always passes; set it False for
    error-like figures (WER, loss). Tolerance = max(abs_tol, rel_tol * |reference|).
    """
    __tracebackhide__ = True
    for key, tol in (("abs_tol", abs_tol), ("rel_tol", rel_tol)):
        # NaN compared as >= 0 and passed, inf let any figure through: as check_dataset's max_drop
        if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, numbers.Real) \
                or not math.isfinite(tol) or tol < 0:
            raise ValueError(f"{key}: expected a finite number >= 0, got {tol!r}")
    check = MetricCheck(name, float(ours), float(reference), float(abs_tol), float(rel_tol),
                        bool(higher_is_better))
    if not check.passed:
        raise MetricMismatch(check.describe(), check)
    return check


def topk_accuracy(logits, labels, k: int = 1) -> float:
    """Fraction of rows whose label is among the k largest logits, by ``check_dataset``'s rules:
    equal scores rank by class index, -inf and +inf order as values, a row holding NaN is wrong
    (a dead device scores 0, not 1); a label is a class index below the logits' width (3, 3.0,
    "3", numpy integers), and 2.7, -1, True or a label past the classes is a ``ConfigError`` (a
    ``ValueError``) naming its row, as ``check_dataset`` names its sample."""
    from .scoring import class_label, topk_hits

    scores = np.asarray(logits)
    if scores.ndim != 2:
        raise ValueError(f"logits must be 2-D (samples x classes), got shape {scores.shape}")
    given = labels.reshape(-1) if isinstance(labels, np.ndarray) else labels
    given = list(given) if isinstance(given, (list, tuple, np.ndarray)) else [given]
    if scores.shape[0] != len(given):
        raise ValueError(f"{scores.shape[0]} rows of logits but {len(given)} labels")
    if not 1 <= k <= scores.shape[1]:
        raise ValueError(f"k={k} outside 1..{scores.shape[1]}")
    if scores.shape[0] == 0:
        raise ValueError("no samples")
    of = f"the logits (shape {list(scores.shape)})"
    truth = np.asarray([class_label(label, f"row {i}", "labels", scores.shape[1], of)
                        for i, label in enumerate(given)])
    return float(np.mean(topk_hits(scores, truth, k)))


def topk_from_outputs(outputs: Sequence[np.ndarray], labels, ks: Sequence[int] = (1, 5),
                      ) -> dict:
    """{"top1": .., "top5": ..} over a list of per-sample (or batched) logits arrays, each read
    as ``check_dataset`` reads an output: ``[N, C]``, ``[C]``, ``[N, 1, C]``, ``[N, C, 1, 1]``
    are rows of C classes; a sequence ``[N, T, C]``, a map ``[N, C, H, W]`` or one value per row
    is refused naming its shape, and so is a k above the classes (``ks=`` names the ones that
    fit)."""
    from .scoring import score_layout

    rows = []
    for i, out in enumerate(outputs):
        out = np.asarray(out)
        layout = score_layout(out.shape)
        if layout is None or layout[1] > 1:
            what = (f"is a sequence of {layout[1]} positions of {layout[2]} classes per row"
                    if layout is not None else "has no single class axis (one value per row, "
                                               "or a map [N, C, H, W])")
            raise ValueError(f"output #{i} of shape {list(out.shape)} {what}: top-k reads "
                             f"one row of class scores per label, [N, C] ([C], [N, 1, C] and "
                             f"[N, C, 1, 1] too)")
        rows.append(out.reshape(layout[0], layout[2]))
    if not rows:
        raise ValueError("no outputs")
    widths = sorted({r.shape[1] for r in rows})
    if len(widths) > 1:
        raise ValueError(f"the outputs hold rows of {' and '.join(map(str, widths))} classes")
    table, classes = np.concatenate(rows), widths[0]
    over = [k for k in ks if k > classes]
    if over:
        fit = tuple(k for k in ks if k <= classes)
        raise ValueError(f"top{over[0]} needs at least {over[0]} classes; the outputs hold "
                         f"{classes}" + (f": pass ks={fit!r}" if fit else ""))
    return {f"top{k}": topk_accuracy(table, labels, k) for k in ks}



"""Each sample's metrics and the largest relative error the one-element rule judges among them,
for a tensor of one value per sample along a known batch axis (``sample_values.BatchSamples``):
worked out as a compare of that sample alone works them out (``metrics.compute_metrics`` of its
two values in their dtypes), when judged, not stored."""
from __future__ import annotations

import functools
import math
from typing import Optional, Tuple

import numpy as np

from .metrics import SIGN_FLOOR, compute_metrics
from .sample_values import BatchSamples


def sample_metrics(s: BatchSamples):
    """Each sample's ``TensorMetrics``, as a compare of it alone computes them."""
    return _sample_metrics(s)


@functools.lru_cache(maxsize=256)
def _sample_metrics(s: BatchSamples):
    return tuple(compute_metrics(np.array([x], s.dtype), np.array([y], s.golden_dtype))
                 for x, y in zip(s.actual, s.golden))


def in_rule(m) -> bool:
    """Whether the one-element rule judges a sample's metrics ``m`` by its relative error."""
    return (m.size == 1 and m.finite == 1 and not m.exact and not m.golden_zero
            and max(m.max_abs_actual, m.max_abs_golden) >= SIGN_FLOOR)


def largest_error(samples: BatchSamples) -> Tuple[Optional[int], float]:
    """(the sample with the largest relative error the one-element rule judges, that error);
    ``(None, nan)`` where it judges none."""
    best, error = None, math.nan
    for i, m in enumerate(sample_metrics(samples)):
        e = m.value("rel_l2")
        if in_rule(m) and not e <= error:
            best, error = i, e
    return best, error


__all__ = ["sample_metrics", "largest_error"]

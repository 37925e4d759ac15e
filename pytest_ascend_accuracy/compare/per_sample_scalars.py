"""A tensor of one value per sample, ``[N, 1]``, judged sample by sample as one element is.

A batch of two clips through pipecat's Smart Turn gives its end-of-turn probability as ``[2, 1]``:
0.0064 and 0.114 golden, 0.0064 and 0.221 on the device. Alone (``[1, 1]``) the second clip
fails the one-element rule (``compare.one_element``: relative error 0.933 over the 0.329 that
cosine 0.95 allows); in the batch the pair was a 2-vector led by its larger value, cosine
0.9996, and the 2x scale guard let the 1.93x through: the batch passed what the sample alone
failed (audit 35, section 3). Such a tensor is judged per sample instead: its largest relative
error of a sample (``max_rel``, whose judged figure already counts float16's close subnormal
pairs as equal) against the bound the cosine threshold allows one element.

Which tensors: every axis after the first of size 1, at least two axes, and 2 to
``MAX_SAMPLES`` values along the first (``[N, 1]``, ``[N, 1, 1]``). What the compare layer knows
of a row is its shape (``TensorCompare.golden_shape``): judging reads one row and its policy
(``result.judge_row``, which the CSV and HTML writers call as the verdict does), not the model's
batch size nor which ops make its outputs, so the rule is the shape's. An ONNX graph keeps the
batch axis first, so a batch-1 model's per-sample values are ``[1, 1]`` (one element, as
before), and a class-logit row ``[1, 2]`` or a sample's feature vector ``[1, D]`` keeps its
cosine. Left out on purpose: a 1-D ``[N]``, which by shape alone is as much one sample's
feature vector as a batch's squeezed scores, and a first axis over ``MAX_SAMPLES``, where an
``[N, 1]`` is more likely a per-token or per-row statistic of a graph that flattened batch and
sequence (tf2onnx's ``[B*T, 1]`` ReduceMean of a LayerNorm written out), whose values near 0 a
relative error per value would fail though the tensor is right.

Values below float16's smallest normal on both sides pass, as one element's do; from the
saved figures (``max_rel``, ``max_abs``) that is known where every value is below it, or where
``max_abs`` is under ``F*b/(1+b)`` (``F`` the floor, ``b`` the allowed error): a sample with a
value of at least ``F`` on either side and a relative error ``r > b`` differs by at least
``r*F/(1+r) > b*F/(1+b)`` (same signs: ``|y| >= F/(1+r)``; opposite: by at least ``F``), so
every sample failing then lies below the floor on both sides. Where a batch mixes such a sample
with a larger error elsewhere, the figure (a maximum over samples) may be the tiny sample's, a
failure the sample alone would not have: the saved figures cannot tell (a per-sample figure
computed with the metrics would). The rule adds to the cosine, which still judges the
values as a vector (a batch failing its cosine fails as before, even where each value alone
would pass: errors of 0.32 on samples of 1 and 2 give cosine 0.949). At thresholds under
``1/sqrt(2)`` the allowed error passes 1, and a sample
whose sign flipped (relative error at least 1) may pass where alone its cosine of -1 fails.
"""
from __future__ import annotations

import math
from typing import Sequence

#: the most values along the first axis judged per sample (module docstring)
MAX_SAMPLES = 64


def per_sample(shape: Sequence[int]) -> bool:
    """Whether a tensor of ``shape`` holds one value per sample (module docstring)."""
    shape = tuple(int(d) for d in shape)
    return (len(shape) >= 2 and 1 < shape[0] <= MAX_SAMPLES
            and all(d == 1 for d in shape[1:]))


def sample_error(m, bound: float, floor: float) -> float:
    """The largest relative error of a sample (``m``: the row's ``TensorMetrics``) that counts
    against ``bound``; NaN where none does (every sample over it lies below ``floor`` on both
    sides, module docstring)."""
    if max(m.max_abs_actual, m.max_abs_golden) < floor:
        return math.nan
    error = m.value("max_rel")
    if error > bound and m.max_abs < floor * bound / (1.0 + bound):
        return math.nan
    return error


def bracketed_shape(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


__all__ = ["MAX_SAMPLES", "per_sample", "sample_error", "bracketed_shape"]

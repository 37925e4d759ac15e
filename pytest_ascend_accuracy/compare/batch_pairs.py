"""Which compared pairs hold one value per sample along a known batch axis (``BatchedPair``,
marked from the golden's ``meta["batch_axis"]``, ``graph.batch_axis``), and their samples kept
by the compare where the arrays are (``with_samples``): only such pairs pay anything. Judged in
``compare.batch_samples``."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Mapping

import numpy as np

from .matching import MatchPlan, TensorPair
from .sample_values import BatchSamples

#: the most samples kept for a batched tensor (more: judged as a whole, as before)
MAX_SAMPLES = 4096


@dataclass(frozen=True)
class BatchedPair(TensorPair):
    """A pair whose golden tensor's axis 0 is the batch axis ``axis`` fed with ``size``
    samples (``mark_batched``)."""

    axis: str = ""
    size: int = 0


def mark_batched(plan: MatchPlan, golden_meta: Mapping[str, object]) -> MatchPlan:
    """``plan`` with each pair whose golden output the golden's ``meta["batch_axis"]`` lists
    (``graph.batch_axis.batched_outputs``) made a ``BatchedPair``; ``plan`` where none is."""
    from ..dump.layout import sanitize

    known = (golden_meta or {}).get("batch_axis") or {}
    outputs, dims = known.get("outputs") or {}, known.get("dims") or {}
    if not outputs:
        return plan
    by_key = {sanitize(str(k)): str(v) for k, v in outputs.items()}
    pairs = []
    for p in plan.pairs:
        axis = None
        if p.golden_op is not None and p.golden is not None and p.golden.kind == "output":
            axis = by_key.get(sanitize(f"{p.golden_op.name}:{p.golden.slot}"))
        if axis is not None and int(dims.get(axis, 0)) > 1:
            p = BatchedPair(**{f.name: getattr(p, f.name) for f in fields(TensorPair)},
                            axis=axis, size=int(dims[axis]))
        pairs.append(p)
    return replace(plan, pairs=tuple(pairs))


def with_samples(p: TensorPair, actual: np.ndarray, golden: np.ndarray, metrics):
    """``metrics`` with the samples of a ``BatchedPair`` whose two tensors hold one value per
    sample (``size`` values each, the golden's axis 0 of that size); else ``metrics``."""
    n = getattr(p, "size", 0)
    shape = tuple(p.golden.shape) if p.golden is not None else ()
    if (not n or not shape or shape[0] != n or n > MAX_SAMPLES or golden.size != n
            or actual.size != n):
        return metrics
    samples = BatchSamples(p.axis, tuple(float(v) for v in np.ravel(actual)),
                           tuple(float(v) for v in np.ravel(golden)), actual.dtype.name,
                           golden.dtype.name)
    return replace(metrics, samples=samples)


__all__ = ["MAX_SAMPLES", "BatchedPair", "mark_batched", "with_samples"]

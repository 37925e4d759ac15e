"""A user's ``metric(outputs, labels) -> float``, on each side, and what it cannot say itself.

A callable sees the whole dataset at once, so the outputs are kept in memory: the one metric
kind whose memory grows with the number of samples. A callable that raises, or returns no
number, is a mistake in the metric (``ConfigError`` naming it), not an accuracy failure; so is
NaN/Inf, unless only the device's figure is and its outputs held NaN/Inf.

Its figure names no sample, so, as the samples stream past, ``CallableMetric`` also records
the samples whose device outputs hold NaN where the reference holds a number, or an Inf the
reference lacks there (``nonfinite``, the outputs in ``nonfinite_outputs``); a failing check
that no flipped sample explains traces the first of them (``check``). (A review: tracing the
sample whose outputs moved most picked one the metric never read differently -- a flip is a
near tie, which moves least -- and the diagnosis then offered a fix that fixed nothing.)

Where no sample holds NaN/Inf, ``decisive`` asks the metric itself which sample its drop
comes from: the reference's outputs with one sample's replaced by the device's, for each
sample whose outputs differ; a sample that alone makes the check fail, by at least half its
drop, is traced (openWakeWord's wake-word score, one value per sample and no class axis, failed
0.875 against 1.0 with "no operator was traced" while one sample's score had gone 0.0001 -> 0.62:
audit 36 B F4), found by halving the samples (about 2 log2(N) metric calls).
"""
from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from ..errors import ConfigError
from .samples import Labels, Sample
from .scoring import callable_label, raised


class CallableMetric:
    """``metric(list_of_output_dicts, labels) -> float``, on each side (higher is better
    unless the check says ``higher_is_better=False``: a loss). ``output`` (the check's
    ``output=``) is the one output ``moved`` measures; None: every output."""

    def __init__(self, fn: Callable, labels: Labels, output: Optional[str] = None):
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self.label = callable_label(fn)
        self.labels = labels
        self.output = output
        self.ref: List[Dict[str, np.ndarray]] = []
        self.dev: List[Dict[str, np.ndarray]] = []
        self.label_list: List[object] = []
        self.device_nonfinite = False
        #: sample ids whose device outputs hold NaN, or an Inf the reference lacks there
        self.nonfinite: List[str] = []
        #: the outputs holding them, in the model's order
        self.nonfinite_outputs: Dict[str, None] = {}
        self.first_nonfinite: Optional[Sample] = None
        self.samples: List[Sample] = []

    def add(self, sample: Sample, ref, dev) -> None:
        self.ref.append(ref)
        self.dev.append(dev)
        self.samples.append(sample)
        if not self.device_nonfinite:
            self.device_nonfinite = not all(np.isfinite(v).all() for v in dev.values())
        self._watch(sample, ref, dev)
        if self.labels.given:
            self.label_list.append(self.labels.raw(sample))

    def _watch(self, sample: Sample, ref, dev) -> None:
        """Record whether ``sample``'s device outputs hold NaN/Inf the reference does not."""
        odd = [name for name, r in ref.items() if name in dev and _odd(np.asarray(r),
                                                                       np.asarray(dev[name]))]
        if odd:
            self.nonfinite.append(sample.id)
            self.nonfinite_outputs.update(dict.fromkeys(odd))
            self.first_nonfinite = self.first_nonfinite or sample

    def values(self) -> Tuple[float, float]:
        labels = self.label_list if self.labels.given else None
        out = []
        for side, outputs in (("reference", self.ref), ("device", self.dev)):
            try:
                value = self.fn(outputs, labels)
            except ConfigError:
                raise
            except Exception as exc:
                raise ConfigError("metric", f"metric {self.label} failed on the {side} outputs: "
                                            f"{raised(exc)}") from exc
            try:
                number = float(value)
            except (TypeError, ValueError, OverflowError):
                raise ConfigError("metric", f"metric {self.label} returned {value!r} for the "
                                            f"{side} outputs, not a number") from None
            # the reference's figure must be a number; the device's may be infinite (a log of
            # a probability float16 took to 0: an accuracy failure), NaN only where its outputs
            # held NaN/Inf
            if not math.isfinite(number) and (side == "reference" or (
                    math.isnan(number) and not self.device_nonfinite)):
                held = ("the onnxruntime fp32 reference's" if side == "reference"
                        else "the device's (which hold no NaN/Inf)")
                raise ConfigError("metric", f"metric {self.label} returned {number} for {held} "
                                            f"outputs: a metric must return a finite number"
                                            + ("" if side == "reference" else " (or an infinite "
                                               "one for a device figure past any bound)"))
            out.append(number)
        return out[0], out[1]

    def decisive(self, drop_of: Callable[[float], float], max_drop: float, drop: float
                 ) -> Optional[Tuple[Sample, float]]:
        """(the sample whose device outputs alone, every other sample given its reference
        outputs, drop the figure (``drop_of``) past ``max_drop`` and by at least half the
        check's whole ``drop``; the figure then), or None where no one sample does (a drop
        spread over many samples, float16's rounding of each: a sample traced then named
        nothing to fix, a review). Halves are tried (the device outputs of one half of the
        samples whose outputs differ, the rest the reference's) and the half holding such a
        drop kept, so a sample is found in about 2 log2(N) metric calls whatever N (a review:
        past a limit of 256 samples, under float16 nearly every sample, none was tried)."""
        differ = [i for i, (r, d) in enumerate(zip(self.ref, self.dev))
                  if any(not np.array_equal(np.asarray(r[k]), np.asarray(d.get(k)))
                         for k in r)]
        try:
            while differ:  # (a half of one sample is that sample's own figure: not asked twice)
                half = len(differ) // 2
                parts = [self._alone(p, drop_of) for p in (differ[:half], differ[half:]) if p]
                gone, value, differ = max(parts, key=lambda part: part[0])
                if not (gone > max_drop and gone >= drop / 2):
                    return None
                if len(differ) == 1:
                    return self.samples[differ[0]], value
        except _MetricFailed:  # (the figures themselves were computed: values() said so)
            return None
        return None

    def _alone(self, which: List[int], drop_of: Callable[[float], float]):
        """(the drop, the figure, ``which``) with the device outputs of the samples ``which``
        and the reference's elsewhere."""
        labels = self.label_list if self.labels.given else None
        outputs = list(self.ref)
        for i in which:
            outputs[i] = self.dev[i]
        try:
            value = float(self.fn(outputs, labels))
        except Exception as exc:
            raise _MetricFailed from exc
        return (drop_of(value) if math.isfinite(value) else math.inf), value, which


class _MetricFailed(Exception):
    """The metric raised on a list of mixed outputs (``decisive`` then traces none)."""


def _odd(ref: np.ndarray, dev: np.ndarray) -> bool:
    """Does ``dev`` hold NaN where ``ref`` (of as many values) holds a number, or an Inf where
    ``ref`` holds another value? (A NaN both hold is the model's own, not the device's.)"""
    if not dev.size or np.isfinite(dev).all():
        return False
    if ref.size != dev.size:
        return bool(np.isnan(dev).any() or np.isinf(dev).any())
    ref = ref.reshape(dev.shape)
    with np.errstate(invalid="ignore"):
        return bool((np.isnan(dev) & ~np.isnan(ref)).any()
                    or (np.isinf(dev) & (dev != ref)).any())

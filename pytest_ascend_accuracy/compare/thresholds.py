"""Threshold policies: whether a metric value passes, kept apart from the values themselves.

A ``Threshold`` knows its metric and direction (cosine: higher is better; the error metrics
``rel_l2``, ``max_abs``, ``rmse``, ``mean_abs``, ``max_rel``, ``mean_rel``, ``acc_rel``, ``kl``:
lower is better). It says whether a value passes, describes itself (``cosine >= 0.95``) and
tells the loosest setting that would have let a value pass, so saved results can be judged
again and a failure can say what threshold it would take.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Iterable, Mapping, Optional, Tuple, Union

from ..errors import ConfigError, closest_text
from .metric_names import HIGHER_IS_BETTER, JUDGEABLE

_DECIMALS = 6


def check_metric(metric, where: Optional[str]) -> str:
    """``metric`` when it is one a threshold judges, else the error naming the closest: asked
    first where a missing threshold defaults by the metric (``assert_accuracy(metric='cosin')``
    was told it 'needs an explicit threshold', not that no such metric exists)."""
    if metric not in JUDGEABLE:
        raise ConfigError(where, f"unknown metric {metric!r}{closest_text(metric, JUDGEABLE)}; "
                                 f"known: {', '.join(JUDGEABLE)}")
    return metric


@dataclass(frozen=True)
class Threshold:
    """``metric`` must be >= ``value`` (cosine) or <= ``value`` (error metrics)."""

    value: float
    metric: str = "cosine"

    def __post_init__(self):
        check_metric(self.metric, "threshold")
        try:
            value = float(self.value)
        except (TypeError, ValueError):
            raise ConfigError("threshold", f"{self.metric} threshold must be a number, "
                              f"got {self.value!r}") from None
        if math.isnan(value):
            raise ConfigError("threshold", f"{self.metric} threshold is NaN")
        if self.metric == "cosine" and not -1.0 <= value <= 1.0:
            raise ConfigError("threshold", f"cosine threshold must lie in [-1, 1], got {value}")
        if self.metric != "cosine" and value < 0:
            raise ConfigError("threshold", f"{self.metric} threshold must be >= 0, got {value}")
        object.__setattr__(self, "value", value)

    @property
    def higher_is_better(self) -> bool:
        return self.metric in HIGHER_IS_BETTER

    @property
    def op(self) -> str:
        return ">=" if self.higher_is_better else "<="

    def passed(self, value: float) -> bool:
        """NaN never passes."""
        if value is None or math.isnan(value):
            return False
        return value >= self.value if self.higher_is_better else value <= self.value

    def describe(self) -> str:
        return f"{self.metric} {self.op} {threshold_text(self.value)}"  # (0.9999999, not 1)

    def loosest_passing(self, value: float) -> Optional[float]:
        """The threshold that would just pass ``value`` (rounded to 6 decimals towards
        passing), or None when no threshold can (NaN)."""
        if value is None or math.isnan(value):
            return None
        if math.isinf(value):
            return value if not self.higher_is_better else None
        scale = 10 ** _DECIMALS
        if self.higher_is_better:
            return math.floor(value * scale) / scale
        return math.ceil(value * scale) / scale

    def advisable(self, value: Optional[float]) -> bool:
        """Whether ``value`` (a ``loosest_passing``) is a threshold worth offering: not a cosine
        of 0 or below. The marker and the YAML suite accept cosine thresholds within [0, 1]
        (a negative one judges nothing they need); ``Threshold`` itself, as ``assert_accuracy``
        and the CLI take it, allows [-1, 1] (``--threshold -1``: re-judge with nothing failing),
        where -1 passes every tensor whose cosine is defined and 0 every one not pointing away
        from the golden's: neither is a bound worth offering."""
        return value is not None and (not self.higher_is_better or value > 0)

    def with_value(self, value: float) -> "Threshold":
        return Threshold(value, self.metric)

    def to_dict(self):
        return {"metric": self.metric, "value": self.value}

    @staticmethod
    def from_dict(d) -> "Threshold":
        return Threshold(float(d["value"]), d.get("metric", "cosine"))


ThresholdLike = Union[float, int, Threshold, Mapping[str, float]]


def _per_op_threshold(name, value: ThresholdLike, metric: str) -> Threshold:
    """``as_threshold`` of one per_op entry, its errors naming the entry (``per_op['prob']:
    unknown metric 'max_ab'``: they said ``threshold:``, which reads as the default's)."""
    try:
        return as_threshold(value, metric)
    except ConfigError as exc:
        raise ConfigError(f"per_op[{str(name)!r}]", exc.problem) from None


def as_threshold(value: ThresholdLike, metric: str = "cosine") -> Threshold:
    """A ``Threshold`` from a number (for ``metric``), an existing ``Threshold``, or a one-entry
    ``{metric: value}`` mapping naming its own metric (a per_op entry judging one op by another
    figure than the check's: ``{"prob": {"max_abs": 1.2e-07}}``, as YAML writes it too)."""
    if isinstance(value, Threshold):
        return value
    if isinstance(value, Mapping):
        if len(value) != 1:
            raise ConfigError("threshold", f"expected one {{metric: value}} entry, got {value!r}")
        (own, number), = value.items()
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            raise ConfigError("threshold", f"{own} threshold must be a number, got {number!r}")
        return Threshold(float(number), str(own))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError("threshold", f"expected a number or Threshold, got {value!r}")
    return Threshold(float(value), metric)


@dataclass(frozen=True)
class Policy:
    """The judging rules: a default threshold, per-operator overrides and ignored operators.

    ``per_op`` keys and ``ignore`` entries are operator names or shell-style globs; they are
    matched against a row's actual op name, its golden op name and its original op names.
    Exact names win over globs; among globs the first listed wins.
    """

    default: Threshold
    per_op: Tuple[Tuple[str, Threshold], ...] = ()
    ignore: Tuple[str, ...] = ()
    #: scale guard: a tensor whose L2 norm is not within 1/t..t times the golden's fails even
    #: when its cosine passes (cosine is blind to scale); None: off
    scale_tolerance: Optional[float] = None

    @staticmethod
    def build(threshold: ThresholdLike = 0.95, per_op: Optional[Mapping[str, ThresholdLike]] = None,
              ignore: Iterable[str] = (), metric: str = "cosine",
              scale_tolerance: Optional[float] = None) -> "Policy":
        scale_tolerance = check_scale_tolerance(scale_tolerance)
        default = as_threshold(threshold, metric)
        if per_op is not None and not isinstance(per_op, Mapping):
            raise ConfigError("per_op", f"expected a mapping of op name -> threshold, got "
                              f"{type(per_op).__name__}")
        if isinstance(ignore, str):
            ignore = (ignore,)
        items = tuple((str(k), _per_op_threshold(k, v, default.metric))
                      for k, v in (per_op or {}).items())
        return Policy(default, items, tuple(str(i) for i in ignore), scale_tolerance)

    def off_scale(self, norm_ratio: float) -> bool:
        """True when the guard is on and ``norm_ratio`` (‖actual‖/‖golden‖) leaves 1/t..t."""
        t = self.scale_tolerance
        if not t or norm_ratio is None or math.isnan(norm_ratio):
            return False
        return not (1.0 / t <= norm_ratio <= t)

    def _match(self, pattern: str, names: Tuple[str, ...]) -> bool:
        return any(fnmatchcase(n, pattern) for n in names if n)

    def is_ignored(self, names: Tuple[str, ...]) -> bool:
        return any(p in names for p in self.ignore) or any(self._match(p, names)
                                                            for p in self.ignore)

    @property
    def metrics(self) -> frozenset:
        """Every metric this policy judges by (its default and per-op thresholds)."""
        return frozenset([self.default.metric] + [thr.metric for _, thr in self.per_op])

    def threshold_for(self, names: Tuple[str, ...]) -> Threshold:
        """The threshold of a tensor with these ``names`` (a row's: its op name, golden op
        name, original op names, tensor index last, see ``TensorCompare.names``): a key naming
        the tensor itself first (``split:output:0``), then one naming the dump op itself (a
        fused ``fc2/MatMul`` keeps its own entry beside one for its member ``fc2/Add``,
        whichever is listed first), then the first listed key naming another tensor label of
        it (a member's ``relu1:output:0``), then the first listed key naming one of its other
        names (golden, members), then the first glob that matches."""
        entry = self._entry(names)
        return self.default if entry is None else entry[1]

    def threshold_key(self, names: Tuple[str, ...]) -> Optional[str]:
        """The ``per_op`` key ``threshold_for`` takes for these ``names`` (None: the default),
        so a failure under it can say whose threshold it failed."""
        entry = self._entry(names)
        return None if entry is None else entry[0]

    def _entry(self, names: Tuple[str, ...]) -> Optional[Tuple[str, Threshold]]:
        """The ``(key, threshold)`` of ``per_op`` that judges these ``names``, in
        ``threshold_for``'s order; None: the default."""
        rules = (lambda key: bool(names) and key == names[-1] and ":" in key,
                 lambda key: bool(names) and key == names[0],
                 # a tensor's label before a plain name: a fused op's member label
                 # (relu1:output:0) lost to 'relu1' listed first (a trial)
                 lambda key: ":" in key and key in names,
                 lambda key: key in names,
                 lambda key: self._match(key, names))
        for rule in rules:
            for entry in self.per_op:
                if rule(entry[0]):
                    return entry
        return None

    def to_dict(self):
        return {"default": self.default.to_dict(),
                "per_op": [[k, t.to_dict()] for k, t in self.per_op],
                "ignore": list(self.ignore), "scale_tolerance": self.scale_tolerance}


def check_scale_tolerance(value) -> Optional[float]:
    """``scale_tolerance``: None/0/False (off) or a factor > 1 (the norm ratio's bound)."""
    if value is None or value is False or value == 0:
        return None
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
            or value <= 1):  # inf is no bound (and no strict JSON): None turns the guard off
        raise ConfigError("scale_tolerance", f"expected a factor > 1 (e.g. 2: the L2 norm within "
                                             f"0.5-2x the golden's) or None to turn the guard off, "
                                             f"got {value!r}")
    return float(value)


def threshold_text(value: float) -> str:
    """A threshold as given: ``0.95``, ``0.9999999``, ``0.99999999999`` (``:.10g`` printed that
    one as ``1``, so a failure read ``0.9999999 < 1``), ``1`` for 1.0."""
    text = f"{value:.10g}"
    return text if float(text) == value else repr(float(value))


def written_per_op(policy) -> dict:
    """``policy``'s per_op entries as a user writes them: a number for its metric, ``{metric:
    value}`` for another, in their order."""
    default = policy.default.metric
    return {name: thr.value if thr.metric == default else {thr.metric: thr.value}
            for name, thr in policy.per_op}


def per_op_value(value) -> str:
    """A per_op value as a test writes it: a number, or ``{'metric': number}``."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {threshold_text(v)}" for k, v in value.items()) + "}"
    return threshold_text(value)


def per_op_python(entries) -> str:
    """The inside of a ``per_op={...}`` a test writes, for ``entries`` as ``written_per_op``
    gives them: ``'name': value`` each (``per_op_value``)."""
    return ", ".join(f"{name!r}: {per_op_value(value)}" for name, value in entries.items())


def per_op_flags(entries) -> str:
    """``entries`` (as ``written_per_op`` gives them) as the command line's options, one
    ``--per-op NAME=T`` (``NAME=METRIC:T`` for an entry of another metric) each, shell-quoted."""
    import shlex

    flags = []
    for name, value in entries.items():
        if isinstance(value, dict):
            (metric, number), = value.items()
            spelled = f"{name}={metric}:{threshold_text(number)}"
        else:
            spelled = f"{name}={threshold_text(value)}"
        flags.append("--per-op " + shlex.quote(spelled))
    return " ".join(flags)


def beside(value: float, threshold: float) -> str:
    """``value`` with enough decimals (6 to 12) to show on which side of ``threshold`` it lies:
    ``0.99999990`` against 0.9999999 where 6 decimals printed ``1.000000 < 0.9999999``."""
    for digits in range(6, 13):
        text = f"{value:.{digits}f}"
        if float(text) != threshold and (float(text) < threshold) == (value < threshold):
            return text
    return repr(value)

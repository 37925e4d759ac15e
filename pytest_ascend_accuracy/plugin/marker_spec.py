"""What an ``@accuracy(...)`` marker (or a YAML suite entry) asks for, parsed and validated.

``AccuracySpec`` is the single value the fixtures and YAML items use: threshold, metric,
per-operator thresholds, ignored operators and conversion modes. ``spec_from_marker`` turns a
pytest ``Mark`` into one; every bad argument raises ``ConfigError`` naming the test and the
argument, which the plugin turns into a collection error. Works without pytest (YAML, CLI).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Tuple

from ..errors import ConfigError, closest_text
from ..core.modes import Mode, resolve_mode
from ..core.unquoted_names import mapping_key_note

from ..core.check_defaults import (DEFAULT_METRIC, DEFAULT_SCALE_TOLERANCE,  # noqa: F401
                                   DEFAULT_THRESHOLD, default_threshold_for)

MARKER_ARGS = ("threshold", "metric", "per_op", "ignore", "modes", "max_drop", "scale_tolerance")


@dataclass(frozen=True)
class AccuracySpec:
    """Validated accuracy settings of one test. ``modes`` is empty when the test is not
    parametrized over modes; ``per_op`` is a tuple of (op name, threshold) in the order given
    (among globs matching one op the first listed wins, ``compare.thresholds.Policy``)."""

    threshold: float = DEFAULT_THRESHOLD
    metric: str = DEFAULT_METRIC
    per_op: Tuple[Tuple[str, Any], ...] = ()  # a number, or a Threshold of its own metric
    ignore: Tuple[str, ...] = ()
    modes: Tuple[Mode, ...] = ()
    #: per-operator baseline check: fail when an op's cosine drops more than this below its
    #: baseline (None: no baseline check unless the ini ``ascend_accuracy_max_drop`` sets one)
    max_drop: Optional[float] = None
    #: True when the threshold came from the marker itself (not the command line/ini default).
    explicit_threshold: bool = field(default=False, compare=False)
    #: the scale guard's factor (``@accuracy(scale_tolerance=...)``; None: off)
    scale_tolerance: Optional[float] = DEFAULT_SCALE_TOLERANCE

    @property
    def per_op_dict(self):
        return dict(self.per_op)

    def merged(self, per_op: Optional[Mapping[str, float]] = None,
               ignore: Optional[Iterable[str]] = None, where: Optional[str] = None) -> "AccuracySpec":
        """This spec with call-site overrides: a ``per_op`` key given at both replaces the
        marker's value, and the call site's entries come first, so among globs (and among a
        fused op's members) matching one op they win; an entry naming the op itself still beats
        a glob or a member's, wherever it was given (``Policy.threshold_for``). ``ignore``
        entries are added to the marker's."""
        # the call site's entries first: among globs matching one op the first listed wins,
        # and "call-site entries win" must hold for globs too (a review: the marker's "*" beat
        # a call site's "head*")
        new_per_op = dict(validate_per_op(per_op, where, self.metric)) if per_op else {}
        for name, thr in self.per_op:
            new_per_op.setdefault(name, thr)
        new_ignore = list(self.ignore)
        for name in validate_ignore(ignore or (), where):
            if name not in new_ignore:
                new_ignore.append(name)
        from dataclasses import replace

        return replace(self, per_op=tuple(new_per_op.items()), ignore=tuple(new_ignore))


def known_metrics() -> Tuple[str, ...]:
    """Metric names a threshold may apply to, as the compare engine names them: ``cosine``
    passes when the value is >= the threshold, the error metrics when it is <=."""
    from ..compare.metric_names import JUDGEABLE

    return tuple(JUDGEABLE)


def validate_threshold(value: Any, where: Optional[str], what: str = "threshold",
                       metric: str = DEFAULT_METRIC) -> float:
    """A cosine threshold lies within [0, 1]; an error-metric threshold is a finite number
    >= 0 (``max_abs <= 2.5`` is meaningful). Bools and NaN are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(where, f"{what} must be a number, got {value!r}{_text_number(value)}")
    value = float(value)
    if metric == "cosine":
        if math.isnan(value) or not 0.0 <= value <= 1.0:
            raise ConfigError(where, f"{what} must be within [0, 1], got {value!r}")
    elif not math.isfinite(value) or value < 0.0:
        raise ConfigError(where, f"{what} for {metric} must be a finite number >= 0, got {value!r}")
    return value


def _text_number(value: Any) -> str:
    """What to write for a number given as text: YAML (1.1, as PyYAML reads it) takes ``1e-4``
    and ``2.0e5`` (no dot, or no sign in the exponent) as strings (a review: ``{max_abs: 1e-4}`` was refused as 'must
    be a number, got '1e-4'' with nothing saying why)."""
    if not isinstance(value, str):
        return ""
    try:
        number = float(value)
    except ValueError:
        return ""
    if not math.isfinite(number):
        return ""
    mantissa, sep, exponent = value.strip().lower().partition("e")
    if not sep:
        return ""
    mantissa = mantissa if "." in mantissa else f"{mantissa}.0"
    exponent = exponent if exponent[:1] in ("+", "-") else f"+{exponent}"
    return (f" (text, not a number: YAML reads a number with an exponent as one only with a dot "
            f"and a signed exponent; write {mantissa}e{exponent})")


def validate_metric(value: Any, where: Optional[str]) -> str:
    known = known_metrics()
    if value not in known:
        raise ConfigError(where, f"unknown metric {value!r}{closest_text(value, known)}; "
                                 f"known: {', '.join(known)}")
    return value


def validate_per_op(value: Any, where: Optional[str], metric: str = DEFAULT_METRIC, *,
                    yaml: bool = False) -> Tuple[Tuple[str, Any], ...]:
    """``{op name: threshold}``; names are the model's op names (or globs), checked against the
    compared dumps when the check runs (``setup_checks.check_op_names``). A threshold is a
    number for ``metric``, or one naming its own metric: ``{"max_abs": 1.2e-07}`` (YAML
    ``{max_abs: 1.2e-07}``) or a ``Threshold``, kept as a ``Threshold`` (a float32 output whose
    golden values all lie below float16's smallest normal is judged by its size, not by a cosine
    of float32 rounding: ``report.tiny_float32``). ``yaml``: a suite's, whose unquoted number
    is said to be YAML's reading (a marker's is Python's own int: a string names an op)."""
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise ConfigError(where, f"per_op must be a mapping of op name to threshold, got "
                                 f"{type(value).__name__}")
    out = {}
    for name, thr in value.items():
        if not isinstance(name, str) or not name:
            raise ConfigError(where, f"per_op keys must be op names, got {name!r}"
                                     + (mapping_key_note("per_op", name, value) if yaml
                                        else _python_name_note(name)))
        out[name] = _per_op_threshold(thr, where, f"per_op[{name!r}]", metric)
    return tuple(out.items())  # as listed: the first of two globs matching an op wins


def _per_op_threshold(value: Any, where: Optional[str], what: str, metric: str):
    """One per_op entry's threshold: a number for ``metric``, or a ``Threshold`` for the metric
    ``value`` names itself (a one-entry ``{metric: number}`` mapping, or a ``Threshold``),
    validated as a marker's threshold for that metric."""
    from ..compare.thresholds import Threshold

    if isinstance(value, Mapping):
        if len(value) != 1:
            raise ConfigError(where, f"{what} must be a number or one {{metric: number}} entry, "
                                     f"got {value!r}")
        (own, number), = value.items()
    elif isinstance(value, Threshold):
        own, number = value.metric, value.value
    else:
        return validate_threshold(value, where, what, metric)
    try:
        own = validate_metric(own, where)
    except ConfigError as exc:  # which entry: the metric alone named no op (a trial)
        raise ConfigError(where, f"{what}: {exc.problem}") from None
    return Threshold(validate_threshold(number, where, f"{what}[{own!r}]", own), own)


def _python_name_note(name: Any) -> str:
    """A marker's op name given as an int (ONNX tensors named by number: ddddocr's ``387``):
    op names are strings, ``"387"``; ``""`` for anything else."""
    if isinstance(name, int) and not isinstance(name, bool):
        return f" (an int: op names are strings, {str(name)!r})"
    return ""


def validate_ignore(value: Any, where: Optional[str]) -> Tuple[str, ...]:
    """A list of op names (a single string is one name)."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise ConfigError(where, f"ignore must be a list of op names, got {type(value).__name__}")
    out = []
    for name in value:
        if not isinstance(name, str) or not name:
            raise ConfigError(where, f"ignore entries must be op names, got {name!r}"
                                     + _python_name_note(name))
        if name not in out:
            out.append(name)
    return tuple(out)


def validate_modes(value: Any, where: Optional[str]) -> Tuple[Mode, ...]:
    """Preset names (``"high_precision"``, ``"buffer_off+fusion_off"``) or ``Mode`` objects;
    ids must be unique because they become test ids."""
    if value is None:
        return ()
    if isinstance(value, (str, Mode)):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise ConfigError(where, f"modes must be a non-empty list of mode names or Mode objects, "
                                 f"got {value!r}")
    out = []
    for item in value:
        try:
            out.append(resolve_mode(item, where))
        except ConfigError as exc:
            raise ConfigError(where, exc.problem) from None
    names = [m.name for m in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(where, f"modes repeats {', '.join(dupes)}")
    return tuple(out)


def make_spec(*, threshold: Any = None, metric: Any = DEFAULT_METRIC, per_op: Any = None,
              ignore: Any = (), modes: Any = None, default_threshold: float = DEFAULT_THRESHOLD,
              where: Optional[str] = None, max_drop: Any = None,
              default_max_drop: Optional[float] = None,
              scale_tolerance: Any = DEFAULT_SCALE_TOLERANCE) -> AccuracySpec:
    """Validate every argument and build the spec; ``threshold=None`` takes the default."""
    explicit = threshold is not None
    metric = validate_metric(metric, where)
    if not explicit:
        threshold = default_threshold_for(metric, default_threshold, where)
    thr = validate_threshold(threshold, where, metric=metric)
    return AccuracySpec(
        threshold=thr,
        metric=metric,
        per_op=validate_per_op(per_op, where, metric),
        ignore=validate_ignore(ignore, where),
        modes=validate_modes(modes, where),
        max_drop=validate_max_drop(max_drop if max_drop is not None else default_max_drop, where),
        explicit_threshold=explicit,
        scale_tolerance=_scale_tolerance(scale_tolerance, where),
    )


def _scale_tolerance(value: Any, where: Optional[str]) -> Optional[float]:
    from ..compare.thresholds import check_scale_tolerance

    try:
        return check_scale_tolerance(value)
    except ConfigError as exc:
        raise ConfigError(where, f"scale_tolerance: {exc.problem}") from None


def validate_max_drop(value: Any, where: Optional[str]) -> Optional[float]:
    """``max_drop``: None (no baseline check) or how much the metric judging an op may worsen
    against its baseline, in [0, 1]: a cosine drop, and for an op judged by rel_l2 also a rel_l2
    rise (``plugin.baseline_metric``)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ConfigError(where, f"max_drop must be a number within [0, 1], got {value!r}")
    return float(value)


def spec_from_marker(mark, *, default_threshold: float = DEFAULT_THRESHOLD,
                     where: Optional[str] = None,
                     default_max_drop: Optional[float] = None) -> AccuracySpec:
    """Parse ``@accuracy(...)``; ``mark`` may be None (no marker: all defaults).

    Accepts the threshold as the only positional argument: ``@accuracy(0.99)``."""
    if mark is None:
        return make_spec(default_threshold=default_threshold, where=where,
                         default_max_drop=default_max_drop)
    args, kwargs = tuple(mark.args), dict(mark.kwargs)
    if len(args) > 1:
        raise ConfigError(where, f"@accuracy takes at most one positional argument (the "
                                 f"threshold), got {len(args)}")
    if args:
        if "threshold" in kwargs:
            raise ConfigError(where, "@accuracy got the threshold twice (positional and keyword)")
        kwargs["threshold"] = args[0]
    unknown = sorted(set(kwargs) - set(MARKER_ARGS))
    if unknown:
        near = "".join(closest_text(u, MARKER_ARGS) for u in unknown)
        raise ConfigError(where, f"@accuracy got unknown argument(s) {', '.join(unknown)}{near}; "
                                 f"known: {', '.join(MARKER_ARGS)}")
    return make_spec(default_threshold=default_threshold, where=where,
                     default_max_drop=default_max_drop, **kwargs)

"""A YAML suite's ``defaults:`` numbers, read in the defaults' own metric.

A number under ``defaults:`` (``threshold``, a ``per_op`` entry) is a threshold of the
defaults' metric (cosine where they set none), whatever metric a model judges by: a defaults
``per_op`` 0.99, meant as cosine, judged a ``rel_l2`` model as rel_l2 <= 0.99 (a review). An
entry the defaults' metric refuses (1.5 as a cosine) says so and how to write it for a model
of another metric (``{rel_l2: 1.5}``).
"""
from __future__ import annotations

from typing import Dict, Mapping

from ..core.yaml_text import yaml_flow_map
from ..errors import ConfigError


def defaults_per_op(defaults: Mapping, dat: str, defaults_metric: str, metric: str) -> Dict:
    """``defaults.per_op`` as {op name: threshold} for a model judged by ``metric``: numbers
    of ``defaults_metric`` made ``Threshold``s of it where the two differ."""
    from ..compare.thresholds import Threshold
    from .marker_spec import validate_per_op

    raw = defaults.get("per_op")
    try:
        per_op = dict(validate_per_op(raw, f"{dat}.per_op", defaults_metric, yaml=True))
    except ConfigError as exc:
        fix = _other_metric_fix(raw, dat, defaults_metric, metric)
        if metric == defaults_metric or fix is None:
            raise
        which = ("cosine (the defaults set no metric)" if "metric" not in defaults
                 else defaults_metric)
        raise ConfigError(f"{dat}.per_op", f"{exc.problem}: a number of defaults.per_op is a "
                                           f"threshold of the defaults' metric, {which}; for a "
                                           f"{metric} threshold write per_op: {fix}") from None
    if defaults_metric != metric:  # a plain number is read in the spec's metric: name its own
        per_op = {k: v if isinstance(v, Threshold) else Threshold(v, defaults_metric)
                  for k, v in per_op.items()}
    return per_op


def _other_metric_fix(raw, dat: str, defaults_metric: str, metric: str):
    r"""``raw`` (the defaults' per_op) with each plain number the defaults' metric refuses
    written as a threshold of ``metric``, every other entry as it is (pasted, none is lost), in
    YAML that loads back as those names and numbers (``core.yaml_text``; ``repr`` wrote 1e-07,
    a string to YAML, and an op ``a\b`` as ``'a\\b'``, which YAML reads back with both
    backslashes); None where a refused entry is no plain number or ``metric`` refuses it too
    (the refusal is then the whole message)."""
    from .marker_spec import validate_per_op

    if not isinstance(raw, Mapping):
        return None
    fixed = {}
    for name, value in raw.items():
        try:
            validate_per_op({name: value}, f"{dat}.per_op", defaults_metric, yaml=True)
            fixed[name] = value
            continue
        except ConfigError:
            pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        try:
            validate_per_op({name: {metric: value}}, f"{dat}.per_op", metric, yaml=True)
        except ConfigError:
            return None
        fixed[name] = {metric: value}
    return yaml_flow_map(fixed)

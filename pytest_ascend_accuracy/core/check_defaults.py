"""A check's defaults, one definition for the marker, the YAML suite and the CLI alike (a light
module: the plugin's collection reads them without importing the compare engine)."""
from __future__ import annotations

from typing import Optional

from ..errors import ConfigError

#: the threshold a check gives none takes, and the metric it is a threshold of
DEFAULT_THRESHOLD, DEFAULT_METRIC = 0.95, "cosine"
#: check_accuracy's scale guard: each tensor's L2 norm within 1/2..2x the golden's
DEFAULT_SCALE_TOLERANCE = 2.0


def default_threshold_for(metric: str, default: float = DEFAULT_THRESHOLD,
                          where: Optional[str] = None, fix: str = "") -> float:
    """The threshold of a check that gave none: ``default`` for the default metric; another
    metric has no default (``default`` is a cosine threshold) and is refused, ``fix`` appended
    to say how the caller's user gives one."""
    if metric != DEFAULT_METRIC:
        raise ConfigError(where, f"metric={metric!r} needs an explicit threshold (the default "
                                 f"threshold {default} is a cosine threshold){fix}")
    return default


__all__ = ["DEFAULT_METRIC", "DEFAULT_SCALE_TOLERANCE", "DEFAULT_THRESHOLD",
           "default_threshold_for"]

"""The plugin's ini values, read from their text and checked, in one place for both readers:
the plugin (``plugin/settings_values``) and ``ascend-accuracy cache`` (``cli/cache``), which
must refuse an ini file a ``pytest`` run refuses instead of listing or pruning a cache (a CI
trial: ``ascend_accuracy_max_drop = abc`` refused by pytest, listed by the command). Each error
names the key and where it was given (``ascend_accuracy_cache_size in pytest.ini``) and, where
one exists, the closest valid spelling. Here, not in ``core``: the dump modes and precision
policies are the backends' (pytest-free, below both readers).
"""
from __future__ import annotations

import difflib
from typing import Callable, Mapping, Optional

from ..core.cache_size import parse_size
from ..errors import ConfigError
from .dump_modes import DUMP_MODES, check_dump_mode

#: what pytest reads as true or false in a bool ini value (its ``_strtobool``)
TRUTH_VALUES = ("true", "false", "yes", "no", "on", "off", "y", "n", "t", "f", "1", "0")


def ini_where(key: str, source: Optional[str]) -> str:
    """``key in source`` (the ini file, or ``-o``): what an error about its value names."""
    return f"{key} in {source}" if source else key


def read_cache_size(text, where: str = "ascend_accuracy_cache_size") -> Optional[int]:
    """Bytes, or None (unbounded); a bad size names the closest one that reads
    (``'2 GiBs'`` -> ``'2GiB'``)."""
    try:
        return parse_size(text, where)
    except ConfigError as exc:
        if "closest" in exc.problem or text is None:
            raise
        near = _closest_size(str(text).strip())
        if near is None:
            raise
        raise ConfigError(where, f"{exc.problem}; closest: {near!r}") from None


def _closest_size(s: str) -> Optional[str]:
    """A spelling of ``s`` that reads as a size: without spaces, then without a plural ``s``."""
    squeezed = "".join(s.split())
    for candidate in (squeezed, squeezed[:-1] if squeezed[-1:] in "sS" else None):
        if candidate and candidate != s:
            try:
                if parse_size(candidate, "") is not None:
                    return candidate
            except ConfigError:
                pass
    return None


def read_max_drop(text, where: str = "ascend_accuracy_max_drop") -> Optional[float]:
    """None (no baseline check by default) or a cosine drop within [0, 1]."""
    if text is None or str(text).strip() == "":
        return None
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ConfigError(where, f"must be a number within [0, 1], got {text!r}") from None
    if value != value or not 0 <= value <= 1:
        raise ConfigError(where, f"max_drop must be a number within [0, 1], got {value!r}")
    return value


def bool_error(raw, where: str) -> ConfigError:
    """The error for a bool value pytest cannot read, with the closest word it reads."""
    near = difflib.get_close_matches(str(raw).lower(), TRUTH_VALUES, n=1, cutoff=0.0)
    return ConfigError(where, f"must be true or false (or yes/no, on/off, 1/0), got {raw!r}"
                              + (f"; closest: {near[0]!r}" if near else ""))


def read_bool(text, where: str) -> bool:
    """A bool ini value as pytest reads it (a TOML boolean as is)."""
    if isinstance(text, bool):
        return text
    word = str(text).strip().lower()
    if word not in TRUTH_VALUES:
        raise bool_error(str(text).strip(), where)
    return word in ("true", "yes", "on", "y", "t", "1")


def read_dump_mode(text, where: str = "ascend_accuracy_dump_mode") -> str:
    """One of ``DUMP_MODES`` (default output), else the closest named."""
    return check_dump_mode(str(text or DUMP_MODES[0]).strip(), where)


def read_precision_policy(text, where: str = "ascend_precision_policy") -> str:
    """The ascend backend's precision policy (default auto), else the closest named."""
    value = str(text or "auto").strip()
    if value == "auto":  # the default: nothing to import to check it
        return value
    from ..errors import closest_text
    from .ascend.atc_command import PRECISION_POLICIES

    if value not in PRECISION_POLICIES:
        raise ConfigError(where, f"expected one of {', '.join(PRECISION_POLICIES)}, got "
                                 f"{value!r}{closest_text(value, PRECISION_POLICIES, n=1)}")
    return value


#: every ini value checked, by key (the rest are free text: a directory, an SoC name)
READERS: Mapping[str, Callable] = {
    "ascend_accuracy_cache_size": read_cache_size,
    "ascend_accuracy_max_drop": read_max_drop,
    "ascend_accuracy_worksteal": read_bool,
    "ascend_device_lock": read_bool,
    "ascend_accuracy_dump_mode": read_dump_mode,
    "ascend_precision_policy": read_precision_policy,
}


def check_ini_values(values: Mapping[str, object], source: Callable[[str], Optional[str]]
                     ) -> None:
    """Raise the ``ConfigError`` of the first value of ``values`` (key -> text) that does not
    read; ``source(key)`` says where the key was given (the ini file, ``-o``)."""
    for key, read in READERS.items():
        if key in values:
            read(values[key], ini_where(key, source(key)))


__all__ = ["TRUTH_VALUES", "READERS", "bool_error", "check_ini_values", "ini_where",
           "read_bool", "read_cache_size", "read_dump_mode", "read_max_drop",
           "read_precision_policy"]

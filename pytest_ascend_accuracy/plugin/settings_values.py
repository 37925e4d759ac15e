"""The values of the plugin's options and ini settings, read and checked for ``Settings``
(``session.settings_from_config``): each one's own parser, the error naming the option or key
that was wrong. No pytest import at module level (``ini_bool`` imports it to catch its errors).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..core.locations import DEFAULT_CACHE_DIR, path_under
from ..errors import ConfigError


def read_cache_dir(option, ini, rootdir: Path, invocation_dir: Path) -> Path:
    """The cache directory: ``--accuracy-cache-dir`` relative to where pytest ran (as every path
    given on the command line, ``--accuracy-report`` too), else ini ``ascend_accuracy_cache_dir``
    relative to the rootdir (as pytest's own ``cache_dir``, and ``ascend-accuracy cache``)."""
    if option is not None and not str(option).strip():
        raise ConfigError("--accuracy-cache-dir", "given with an empty value; give a directory, "
                                                  "or leave the option out for the ini "
                                                  "ascend_accuracy_cache_dir (default "
                                                  f"{DEFAULT_CACHE_DIR}/ under the rootdir)")
    base, path = (invocation_dir, option) if option else (rootdir, ini or DEFAULT_CACHE_DIR)
    return path_under(base, path)


def ini_source(config, key: str) -> Optional[str]:
    """Where the ini value ``key`` was given, as its errors name it: ``-o``, else the ini file
    (as unknown keys are named: ``plugin.ini_names``); None without either."""
    overrides = getattr(getattr(config, "option", None), "override_ini", None) or ()
    if any(str(o).partition("=")[0].strip() == key for o in overrides):
        return "-o"
    inipath = getattr(config, "inipath", None)
    return str(inipath) if inipath else None


def _where(config, key: str) -> str:
    from ..backends.ini_values import ini_where

    return ini_where(key, ini_source(config, key))


def precision_policy_setting(option, config) -> str:
    """The ascend backend's precision policy: the option, else the ini value (checked, the
    closest on a typo; ``backends.ini_values``, shared with ``ascend-accuracy cache``)."""
    from ..backends.ini_values import read_precision_policy as read

    if option:
        return read(option, "--ascend-precision-policy")
    return read(config.getini("ascend_precision_policy"), _where(config, "ascend_precision_policy"))


def dump_mode_setting(option, config) -> str:
    """The run's dump mode: the option, else the ini value (checked, closest names on a typo)."""
    from ..backends.ini_values import read_dump_mode as read

    if option:
        return option
    key = "ascend_accuracy_dump_mode"
    return read(config.getini(key), _where(config, key))


def cache_size_setting(config) -> Optional[int]:
    from ..backends.ini_values import read_cache_size as read

    key = "ascend_accuracy_cache_size"
    return read(config.getini(key), _where(config, key))


def ini_bool(config, name: str) -> bool:
    """A ``type="bool"`` ini value; a value pytest cannot read (``ture``) is a ``ConfigError``
    naming the key, where it was given and the closest spelling, not pytest's INTERNALERROR."""
    import pytest

    from ..backends.ini_values import bool_error

    try:
        return bool(config.getini(name))
    except (ValueError, TypeError, pytest.UsageError) as exc:
        # (TypeError: pytest 9's native TOML, a non-bool; from pytest 9.2 both come as a
        # UsageError that does not name the key)
        import re

        where = _where(config, name)
        # the value as pytest read it, from its own message ("invalid truth value 'ture'"):
        # -o overrides and pytest 9's ConfigValue wrappers are not in config.inicfg alike
        text = str(exc)
        typed = re.search(r"expects a bool, got (\w+): (.*)$", text)  # pytest 9, native TOML
        if typed:  # a native TOML value takes a TOML boolean only, unquoted
            raise ConfigError(where, f"must be a TOML boolean, true or false (unquoted), got "
                                     f"{typed.group(2)} ({typed.group(1)})") from None
        quoted = re.findall(r"'([^']*)'", text)
        raise bool_error(quoted[-1] if quoted else text, where) from None


def max_drop_setting(config) -> Optional[float]:
    from ..backends.ini_values import read_max_drop as read

    key = "ascend_accuracy_max_drop"
    return read(config.getini(key), _where(config, key))


def read_positive(value, where: str) -> int:
    if value is None or int(value) < 1:
        raise ConfigError(where, f"must be at least 1, got {value!r}")
    return int(value)

"""The values of the plugin's options and ini settings, read and checked for ``Settings``
(``session.settings_from_config``): each one's own parser, the error naming the option or key
that was wrong. No pytest import at module level (``ini_bool`` imports it to catch its errors).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..core.locations import DEFAULT_CACHE_DIR
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
    path = Path(path).expanduser()
    return path if path.is_absolute() else base / path


def read_precision_policy(option, ini) -> str:
    """The ascend backend's precision policy: the option, else the ini value (checked, the
    closest on a typo)."""
    value = (option or ini or "auto").strip()
    if value == "auto":  # the default: nothing to import at start-up to check it
        return value
    from ..backends.ascend.atc_command import PRECISION_POLICIES
    from ..errors import closest_text

    if value not in PRECISION_POLICIES:
        where = "--ascend-precision-policy" if option else "ini ascend_precision_policy"
        raise ConfigError(where, f"expected one of {', '.join(PRECISION_POLICIES)}, got "
                                 f"{value!r}{closest_text(value, PRECISION_POLICIES, n=1)}")
    return value


def read_dump_mode(option, ini) -> str:
    """The run's dump mode: the option, else the ini value (checked, closest names on a typo)."""
    from ..backends.dump_modes import check_dump_mode

    if option:
        return option
    return check_dump_mode(str(ini or "output").strip(), "ascend_accuracy_dump_mode")


def read_cache_size(text) -> Optional[int]:
    from ..core.cache_size import parse_size

    return parse_size(text, "ascend_accuracy_cache_size")


#: what pytest reads as true or false in a bool ini value (its ``_strtobool``)
TRUTH_VALUES = ("true", "false", "yes", "no", "on", "off", "y", "n", "t", "f", "1", "0")


def ini_bool(config, name: str) -> bool:
    """A ``type="bool"`` ini value; a value pytest cannot read (``ture``) is a ``ConfigError``
    naming the key and the closest spelling, not pytest's INTERNALERROR."""
    import pytest

    try:
        return bool(config.getini(name))
    except (ValueError, TypeError, pytest.UsageError) as exc:
        # (TypeError: pytest 9's native TOML, a non-bool; from pytest 9.2 both come as a
        # UsageError that does not name the key)
        import difflib
        import re

        # the value as pytest read it, from its own message ("invalid truth value 'ture'"):
        # -o overrides and pytest 9's ConfigValue wrappers are not in config.inicfg alike
        text = str(exc)
        typed = re.search(r"expects a bool, got (\w+): (.*)$", text)  # pytest 9, native TOML
        if typed:  # a native TOML value takes a TOML boolean only, unquoted
            raise ConfigError(name, f"must be a TOML boolean, true or false (unquoted), got "
                                    f"{typed.group(2)} ({typed.group(1)})") from None
        quoted = re.findall(r"'([^']*)'", text)
        raw = quoted[-1] if quoted else text
        near = difflib.get_close_matches(raw.lower(), TRUTH_VALUES, n=1, cutoff=0.0)
        raise ConfigError(name, f"must be true or false (or yes/no, on/off, 1/0), got {raw!r}"
                                + (f"; closest: {near[0]!r}" if near else "")) from None


def read_max_drop(text) -> Optional[float]:
    from .marker_spec import validate_max_drop

    if text is None or str(text).strip() == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise ConfigError("ascend_accuracy_max_drop", f"must be a number within [0, 1], got "
                                                      f"{text!r}") from None
    return validate_max_drop(value, "ascend_accuracy_max_drop")


def path_under(root: Path, path) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else root / p


def read_positive(value, where: str) -> int:
    if value is None or int(value) < 1:
        raise ConfigError(where, f"must be at least 1, got {value!r}")
    return int(value)

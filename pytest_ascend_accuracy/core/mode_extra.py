"""A ``Mode``'s ``extra`` ATC options as ``(option, value)`` text pairs, whether given as pairs
or as ``{option: value}``, the form a YAML mode's ``extra`` and the printed modes write:
``Mode(extra={"log": "info"})`` raised ValueError, and a two-letter key was unpacked into its
letters (``{"og": "x"}`` became ``(("o", "g"),)``, silently)."""
from __future__ import annotations

from typing import List, Mapping, Tuple

from ..errors import ConfigError


def option_pairs(extra) -> List[Tuple[str, str]]:
    """``extra`` (pairs, a mapping or None) as ``(option without leading dashes, value text)``
    pairs, a bool as ATC takes it (``option_text``: ``display_model_info`` 1/0, it refuses
    ``True``); anything else is a ``ConfigError`` showing both forms."""
    items = list(extra.items() if isinstance(extra, Mapping) else extra or ())
    if not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in items):
        raise ConfigError("mode", f"extra takes ATC options as {{option: value}} or (option, "
                                  f"value) pairs, e.g. extra={{\"log\": \"info\"}}, got {extra!r}")
    return [(str(k).lstrip("-"), option_text(str(k), v)) for k, v in items]


def option_text(name: str, value: object) -> str:
    """``value`` as ATC takes it on the command line: a bool is ``1``/``0`` for
    ``display_model_info`` (ATC refuses ``true``), ``true``/``false`` elsewhere."""
    if isinstance(value, bool):
        if str(name).lstrip("-") == "display_model_info":
            return "1" if value else "0"
        return "true" if value else "false"
    return str(value)

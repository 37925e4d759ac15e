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


def yaml_extra_pairs(extra, where: str) -> Tuple[Tuple[str, str], ...]:
    """A YAML mode's ``extra`` mapping as ``(option, value)`` text pairs. YAML reads ``true``,
    ``yes``, ``on`` (and their opposites) as booleans: taken as ATC's 1/0 for
    ``display_model_info`` (``option_text``), which ``Mode(extra=...)`` takes too, and refused
    for any other option saying to quote it (a bool was refused as "must map ATC options to
    values", though the mapping was one); YAML's null likewise."""
    def plain(k, v) -> bool:
        return (isinstance(k, str) and bool(k) and isinstance(v, (str, int, float))
                and (not isinstance(v, bool) or k.lstrip("-") == "display_model_info"))

    if not isinstance(extra, Mapping) or not all(plain(k, v) for k, v in extra.items()):
        odd = [(k, v) for k, v in extra.items() if not plain(k, v) and (
            v is None or isinstance(v, bool))] if isinstance(extra, Mapping) else []
        if odd and odd[0][1] is not None:  # (which word was written, YAML no longer says)
            key = odd[0][0]
            meant = ' (ATC\'s "null" is no log)' if key.lstrip("-") == "log" else ""
            raise ConfigError(where, f"{key}: YAML reads yes/no, on/off and true/false as "
                                     f"booleans, not ATC values: write the value ATC takes, "
                                     f'quoted, {key}: "VALUE"{meant}')
        null = f'; YAML reads null as no value: quote it, {odd[0][0]}: "null"' if odd else ""
        raise ConfigError(where, f"must map ATC options to values, e.g. {{log: info}}, got "
                                 f"{extra!r}{null}")
    return tuple((k, option_text(k, v)) for k, v in extra.items())

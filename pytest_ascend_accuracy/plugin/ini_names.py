"""The plugin's ini keys as a user's ini file spells them: a misspelled ``ascend_*`` key is a
usage error naming the closest key, not pytest's "Unknown config option" warning while the
setting it meant silently stays at its default (a docs trial: ``ascend_accuracy_max_dorp``
left baseline checking off)."""
from __future__ import annotations

import difflib
from typing import Iterable, List

from ..errors import ConfigError

#: the prefix of every ini key this plugin registers (``pytest_addoption``)
PREFIX = "ascend_"


def unknown_ini_keys(given: Iterable[str], known: Iterable[str]) -> List[str]:
    """Keys of the ini file in this plugin's namespace that no plugin registered."""
    known = set(known)
    return [k for k in given if k.startswith(PREFIX) and k not in known]


def check_ini_keys(config) -> None:
    """Raise ``ConfigError`` for the first ``ascend_*`` ini key nobody registered, naming the
    closest registered one and the ini file."""
    inicfg = getattr(config, "inicfg", None) or {}
    known = list(getattr(getattr(config, "_parser", None), "_inidict", {}) or {})
    if not known:  # pytest's private table moved: no check rather than a false refusal
        return
    ours = [k for k in known if k.startswith(PREFIX)]
    for key in unknown_ini_keys(list(inicfg), known):
        near = difflib.get_close_matches(key, ours, n=2, cutoff=0.6)
        where = f"{config.inipath}" if getattr(config, "inipath", None) else "ini"
        raise ConfigError(where, f"unknown ini key {key!r}" + (
            "; closest: " + ", ".join(repr(n) for n in near) if near else
            f"; this plugin's keys: {', '.join(sorted(ours))}"))

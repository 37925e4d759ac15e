"""The plugin's ini keys as a user's ini file (or ``-o``) spells them: a misspelled ``ascend_*``
key is a usage error naming the closest key, not pytest's "Unknown config option" warning while
the setting it meant silently stays at its default (a docs trial: ``ascend_accuracy_max_dorp``
left baseline checking off). A key far from all of ours is another tool's: pytest warns."""
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


#: how close an unknown key must be to one of ours to be taken for its misspelling: a key of
#: some other tool that happens to start with ``ascend_`` is left to pytest's own warning
CLOSE = 0.75


def _ini_keys(config):
    """The keys the ini file gives: pytest 9's ``_inicfg`` (its public ``inicfg`` warns from
    9.2 and fails a ``-W error`` session), else the ``inicfg`` of older versions."""
    inicfg = getattr(config, "_inicfg", None)
    if inicfg is None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inicfg = getattr(config, "inicfg", None)
    return list(inicfg or ())


def check_ini_keys(config) -> None:
    """Raise ``ConfigError`` for the first ``ascend_*`` ini key nobody registered that is a
    misspelling of one of this plugin's (``CLOSE``), naming it and where the key was given
    (the ini file, or ``-o``)."""
    known = list(getattr(getattr(config, "_parser", None), "_inidict", {}) or {})
    if not known:  # pytest's private table moved: no check rather than a false refusal
        return
    overrides = [str(o).partition("=")[0].strip()
                 for o in (getattr(getattr(config, "option", None), "override_ini", None)
                           or ())]
    given = list(_ini_keys(config)) + overrides
    ours = [k for k in known if k.startswith(PREFIX)]
    for key in unknown_ini_keys(given, known):
        near = difflib.get_close_matches(key, ours, n=2, cutoff=CLOSE)
        if not near:
            continue
        where = ("-o" if key in overrides else
                 f"{config.inipath}" if getattr(config, "inipath", None) else "ini")
        raise ConfigError(where, f"unknown ini key {key!r}; closest: "
                                 + ", ".join(repr(n) for n in near))

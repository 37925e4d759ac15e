"""The plugin's ini keys as a user's ini file (or ``-o``) spells them: a misspelled ``ascend_*``
key is a usage error naming the closest key, not pytest's "Unknown config option" warning while
the setting it meant silently stays at its default (a docs trial: ``ascend_accuracy_max_dorp``
left baseline checking off). A key far from all of ours is another tool's: pytest warns. The
rule is ``core.ini_keys``' (pytest-free: ``ascend-accuracy cache`` applies it to the ini file)."""
from __future__ import annotations

from ..core.ini_keys import addopts_form, misspelled_ini_key, misspelled_text
from ..errors import ConfigError


def _inicfg(config):
    """What the ini file gives: pytest 9's ``_inicfg`` (its public ``inicfg`` warns from 9.2
    and fails a ``-W error`` session; its values are ``ConfigValue``s), else the ``inicfg`` of
    older versions."""
    inicfg = getattr(config, "_inicfg", None)
    if inicfg is None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inicfg = getattr(config, "inicfg", None)
    return inicfg or {}


def _ini_keys(config):
    return list(_inicfg(config))


def check_ini_keys(config) -> None:
    """Raise ``ConfigError`` for the first ``ascend_*`` ini key nobody registered that is a
    misspelling of one of this plugin's (``core.ini_keys.CLOSE``), naming it and where the key
    was given (the ini file, or ``-o``)."""
    known = list(getattr(getattr(config, "_parser", None), "_inidict", {}) or {})
    if not known:  # pytest's private table moved: no check rather than a false refusal
        return
    overridden = dict(str(o).partition("=")[::2]
                      for o in (getattr(getattr(config, "option", None), "override_ini", None)
                                or ()))
    overrides = [k.strip() for k in overridden]
    # (pytest 9 keeps an override's key unstripped in its table: `-o ' key = v '`)
    given = overrides + [k for k in (k.strip() for k in _ini_keys(config)) if k not in overrides]
    found = misspelled_ini_key(given, known)
    if found is None:
        return
    key, near = found
    inipath = getattr(config, "inipath", None)
    if key in overrides:
        where, value = "-o", next(v for k, v in overridden.items() if k.strip() == key)
    else:
        value = next((v for k, v in _inicfg(config).items() if k.strip() == key), None)
        where, value = (f"{inipath}" if inipath else "ini"), getattr(value, "value", value)
    raise ConfigError(where, misspelled_text(key, near, value, form=addopts_form(inipath),
                                             override=where == "-o"))

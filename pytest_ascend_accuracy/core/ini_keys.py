"""The plugin's ini keys and the rule that takes an unknown ``ascend_*`` key for a misspelling of
one of them, without pytest: the plugin applies it to the keys pytest read
(``plugin/ini_names.check_ini_keys``), ``ascend-accuracy cache`` to the ini file it reads
(``cli/cache``), so the command refuses what a pytest run refuses instead of pruning the
default cache while the ini file meant another (a CI trial: ``ascend_accuracy_cache_dirr``).
A key that is one of ours without its ``ascend_`` prefix (or close to one: ``accuracy_threshold``,
mirroring ``--accuracy-threshold``) is refused the same way, unless some plugin registers it:
pytest's generic warning left the threshold at its default (a CI trial).
"""
from __future__ import annotations

import difflib
from typing import Iterable, List, Optional, Tuple

#: the prefix of every ini key this plugin registers (``pytest_addoption``)
PREFIX = "ascend_"

#: every ini key the plugin registers (``plugin.pytest_addoption``; a test checks the two agree)
PLUGIN_INI_KEYS = (
    "ascend_accuracy_threshold", "ascend_accuracy_cache_dir", "ascend_soc_version",
    "ascend_precision_policy", "ascend_accuracy_cache_size", "ascend_accuracy_dump_mode",
    "ascend_accuracy_max_drop", "ascend_accuracy_baseline_dir", "ascend_device_lock",
    "ascend_accuracy_worksteal",
)

#: the plugin's command-line options that have no ini key, and whether each takes a value
#: (``plugin.pytest_addoption``; a test checks the two agree). Written as ini keys
#: (``ascend_device = 0``) they were taken for misspellings of keys that mean something else:
#: ``ascend_device_lock = 0``, pasted, was accepted and the run stayed on the emulator
COMMAND_LINE_ONLY = {
    "--ascend-device": True, "--accuracy-backend": True, "--accuracy-report": True,
    "--accuracy-diagnose": False, "--accuracy-diagnose-budget": True, "--accuracy-progress": False,
    "--accuracy-regen": False, "--accuracy-regen-all": False, "--accuracy-store-inputs": False,
}

#: how close an unknown key must be to one of ours to be taken for its misspelling: a key of
#: some other tool that happens to start with ``ascend_`` is left to pytest's own warning
CLOSE = 0.75


#: how close an unknown key must be to a command-line option's ini spelling to be taken for it
OPTION_CLOSE = 0.9


def _ini_spellings(option: str) -> List[str]:
    """How an ini file would spell ``option``: ``--ascend-device`` as ``ascend_device`` or
    ``ascend_accuracy_device``, ``--accuracy-report`` as ``accuracy_report`` or
    ``ascend_accuracy_report``."""
    bare = option.lstrip("-").replace("-", "_")
    rest = bare[len(PREFIX):] if bare.startswith(PREFIX) else bare
    rest = rest[len("accuracy_"):] if rest.startswith("accuracy_") else rest
    return sorted({bare, PREFIX + bare, f"{PREFIX}accuracy_{rest}"})


def _score(key: str, names: Iterable[str]) -> float:
    return max((difflib.SequenceMatcher(None, key, n).ratio() for n in names), default=0.0)


def command_line_option(key: str, ours: Iterable[str] = PLUGIN_INI_KEYS) -> Optional[str]:
    """The command-line-only option (``COMMAND_LINE_ONLY``) that the unknown ini key ``key``
    spells, exactly or closer than any ini key of ours (``OPTION_CLOSE`` at least); None if
    none."""
    best, option = max((_score(key, _ini_spellings(o)), o) for o in COMMAND_LINE_ONLY)
    if best >= OPTION_CLOSE and best > _score(key, ours):
        return option
    return None


def misspelled_ini_key(given: Iterable[str], known: Iterable[str] = PLUGIN_INI_KEYS
                       ) -> Optional[Tuple[str, List[str]]]:
    """``(key, closest keys)`` for the first of ``given`` registered by nobody (``known``: every
    plugin's keys) that is close to one of ours (``CLOSE``): in this plugin's namespace, or one
    of ours without its prefix; None where there is none."""
    known = set(known)
    ours = sorted(k for k in known if k.startswith(PREFIX))
    bare = {k[len(PREFIX):]: k for k in ours}
    for key in given:
        if key in known:
            continue
        option = command_line_option(key, ours)
        if option is not None:
            return key, [option]
        if key.startswith(PREFIX):
            near = difflib.get_close_matches(key, ours, n=2, cutoff=CLOSE)
        else:  # ours without the prefix: ``accuracy_threshold``
            near = [bare[b] for b in difflib.get_close_matches(key, list(bare), n=2,
                                                               cutoff=CLOSE)]
        if near:
            return key, near
    return None


#: how ``addopts`` is written in each kind of ini file: text pytest splits as a shell does
#: (pytest.ini, tox.ini, setup.cfg), a TOML string (``[tool.pytest.ini_options]``), a TOML list
#: (pytest 9's ``pytest.toml`` and ``[tool.pytest]``: a string there is a TypeError), or no ini
#: file at all (one to write)
ADDOPTS_FORMS = ("ini", "toml-string", "toml-list", "none")
_OFF = ("", "false", "0", "no", "off")


def addopts_form(inipath) -> str:
    """Which of ``ADDOPTS_FORMS`` the ini file ``inipath`` (None: none) writes addopts in; a
    pyproject.toml is read as TOML, as pytest reads it (a comment naming a table is none)."""
    import os

    if not inipath:
        return "none"
    name = os.path.basename(str(inipath))
    if name in ("pytest.toml", ".pytest.toml"):
        return "toml-list"
    if not name.endswith(".toml"):
        return "ini"
    try:
        try:
            import tomllib
        except ImportError:  # Python 3.10: pytest's own dependency
            import tomli as tomllib
        with open(inipath, "rb") as f:
            tool = tomllib.load(f).get("tool", {}).get("pytest")
    except Exception:  # (unreadable: pytest says so itself)
        return "toml-string"
    if not isinstance(tool, dict):
        return "toml-string"
    # as pytest 9's findpaths reads it: keys of [tool.pytest] besides ini_options make it native
    # TOML (an empty ini_options beside them is none); else an ini_options table, even empty,
    # is ini mode; else (an empty [tool.pytest]) an addopts written there makes it native TOML
    if any(k != "ini_options" for k in tool):
        return "toml-list"
    return "toml-string" if tool.get("ini_options") is not None else "toml-list"


def misspelled_text(key: str, near: Iterable[str], value: object = None,
                    form: str = "ini", override: bool = False) -> str:
    """The error's text: ``unknown ini key 'k'; closest: 'a', 'b'`` (and, for a key without
    the prefix, that every key of this plugin has it); for a command-line option written as a
    key (``near`` is ``[option]``), how to give it instead, with the key's ``value`` (``form``:
    ``addopts_form`` of the ini file; ``override``: the key came as ``-o KEY=VALUE``)."""
    near = list(near)
    if len(near) == 1 and near[0] in COMMAND_LINE_ONLY:
        return _option_text(key, near[0], value, form, override)
    prefix = "" if key.startswith(PREFIX) else f" (this plugin's ini keys start with {PREFIX})"
    return f"unknown ini key {key!r}{prefix}; closest: " + ", ".join(repr(n) for n in near)


def _option_text(key: str, option: str, value: object, form: str, override: bool) -> str:
    import json
    import shlex

    text = str(value if value is not None else "").strip()
    head = f"unknown ini key {key!r}: {option} is a command-line option, which has no ini key"
    given = f"-o {shlex.quote(f'{key}={text}')}" if override else "the line"
    if not COMMAND_LINE_ONLY[option]:
        if text.lower() in _OFF:  # (the option is off unless given: nothing to write)
            undo = f"leave out {given}" if override else "delete the line"
            return f"{head}, off unless given: {undo}"
        item = option
    else:
        item = f"{option}={text or 'VALUE'}"
    arg = item if not COMMAND_LINE_ONLY[option] else f"{option}={shlex.quote(text or 'VALUE')}"
    example = {"ini": f"addopts = {arg}", "toml-string": f"addopts = {json.dumps(arg)}",
               "toml-list": f"addopts = [{json.dumps(item)}]"}.get(form)
    where = (f"add it to the ini file's addopts ({example}, or after the options addopts has)"
             if example else f"write a pytest.ini where pytest runs: [pytest] with addopts = "
                             f"{arg}")
    return (f"{head}; give it on the command line ({arg}) or {where}"
            + (f", in place of {given}" if override else ""))

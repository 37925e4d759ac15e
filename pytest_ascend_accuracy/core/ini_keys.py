"""The plugin's ini keys and the rule that takes an unknown ``ascend_*`` key for a misspelling of
one of them, without pytest: the plugin applies it to the keys pytest read
(``plugin/ini_names.check_ini_keys``), ``ascend-accuracy cache`` to the ini file it reads
(``cli/cache``), so the command refuses what a pytest run refuses instead of pruning the
default cache while the ini file meant another (a CI trial: ``ascend_accuracy_cache_dirr``).
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

#: how close an unknown key must be to one of ours to be taken for its misspelling: a key of
#: some other tool that happens to start with ``ascend_`` is left to pytest's own warning
CLOSE = 0.75


def unknown_ini_keys(given: Iterable[str], known: Iterable[str]) -> List[str]:
    """Keys of the ini file in this plugin's namespace that no plugin registered."""
    known = set(known)
    return [k for k in given if k.startswith(PREFIX) and k not in known]


def misspelled_ini_key(given: Iterable[str], known: Iterable[str] = PLUGIN_INI_KEYS
                       ) -> Optional[Tuple[str, List[str]]]:
    """``(key, closest keys)`` for the first of ``given`` that is in this plugin's namespace,
    registered by nobody (``known``: every plugin's keys) and close to one of ours (``CLOSE``);
    None where there is none."""
    known = list(known)
    ours = [k for k in known if k.startswith(PREFIX)]
    for key in unknown_ini_keys(given, known):
        near = difflib.get_close_matches(key, ours, n=2, cutoff=CLOSE)
        if near:
            return key, near
    return None


def misspelled_text(key: str, near: Iterable[str]) -> str:
    """The error's text: ``unknown ini key 'k'; closest: 'a', 'b'``."""
    return f"unknown ini key {key!r}; closest: " + ", ".join(repr(n) for n in near)

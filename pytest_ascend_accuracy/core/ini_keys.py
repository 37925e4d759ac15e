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

#: how close an unknown key must be to one of ours to be taken for its misspelling: a key of
#: some other tool that happens to start with ``ascend_`` is left to pytest's own warning
CLOSE = 0.75


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
        if key.startswith(PREFIX):
            near = difflib.get_close_matches(key, ours, n=2, cutoff=CLOSE)
        else:  # ours without the prefix: ``accuracy_threshold``
            near = [bare[b] for b in difflib.get_close_matches(key, list(bare), n=2,
                                                               cutoff=CLOSE)]
        if near:
            return key, near
    return None


def misspelled_text(key: str, near: Iterable[str]) -> str:
    """The error's text: ``unknown ini key 'k'; closest: 'a', 'b'`` (and, for a key without
    the prefix, that every key of this plugin has it)."""
    prefix = "" if key.startswith(PREFIX) else f" (this plugin's ini keys start with {PREFIX})"
    return f"unknown ini key {key!r}{prefix}; closest: " + ", ".join(repr(n) for n in near)

"""The optional C extensions (``setup.py``: built where a compiler is there), each looked up
once by its caller: ``compare.pair_sums``, ``compare.tiny_values``, ``dump.channel_blocks``.

``load_once(cache, name, abi, off_env)`` gives the module ``name`` when it imports and its
``ABI`` constant is ``abi`` (an extension built from an older C file is not called with another
signature), else None; None too while the environment variable ``off_env`` is "1" (the numpy
path, to compare the two or to rule the extension out); any value but "1", "0" or none is
refused (``ConfigError``) rather than read as "0". ``cache`` is the caller's own list,
``[module or None]`` after the first lookup: a test empties or replaces it to look again.
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import List, Optional


#: every ``off_env`` of the callers (``compare.pair_sums``, ``compare.tiny_values``,
#: ``dump.channel_blocks``), checked when a session starts (``check_switches``)
OFF_SWITCHES = ("ASCEND_ACCURACY_NUMPY_KERNEL", "ASCEND_ACCURACY_NUMPY_LAYOUT")


def switched_off(off_env: str) -> bool:
    """Whether ``off_env`` is "1"; a value but "1", "0" or none is a ``ConfigError`` ('true' or
    'yes' ran the compiled pass while meant to turn it off)."""
    off = os.environ.get(off_env, "").strip()
    if off not in ("", "0", "1"):
        from ..errors import ConfigError

        raise ConfigError(off_env, f"expected 1 (the numpy path instead of the compiled "
                                   f"extension) or 0 (the extension where it is built), got "
                                   f"{off!r}")
    return off == "1"


def check_switches() -> None:
    """Every ``OFF_SWITCHES`` variable set reads (at a session's start: an extension is looked
    up only for tensors big enough, so a small model's run never read it)."""
    for env in OFF_SWITCHES:
        switched_off(env)


def load_once(cache: List[Optional[ModuleType]], name: str, abi: int,
              off_env: str) -> Optional[ModuleType]:
    """The compiled module ``name`` or None (see the module docstring)."""
    if switched_off(off_env):
        return None
    if not cache:
        try:  # by name: ``from . import`` reads to import analysers as importing the package
            module = importlib.import_module(name)
        except ImportError:
            module = None
        if getattr(module, "ABI", None) != abi:  # missing ABI: built from an older C file
            module = None
        cache.append(module)
    return cache[0]

"""The optional C extensions (``setup.py``: built where a compiler is there), each looked up
once by its caller: ``compare.pair_sums``, ``compare.tiny_values``, ``dump.channel_blocks``.

``load_once(cache, name, abi, off_env)`` gives the module ``name`` when it imports and its
``ABI`` constant is ``abi`` (an extension built from an older C file is not called with another
signature), else None; None too while the environment variable ``off_env`` is "1" (the numpy
path, to compare the two or to rule the extension out). ``cache`` is the caller's own list,
``[module or None]`` after the first lookup: a test empties or replaces it to look again.
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import List, Optional


def load_once(cache: List[Optional[ModuleType]], name: str, abi: int,
              off_env: str) -> Optional[ModuleType]:
    """The compiled module ``name`` or None (see the module docstring)."""
    if os.environ.get(off_env, "") == "1":
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

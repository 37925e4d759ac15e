"""A mode's printed name read back as the mapping a YAML suite writes.

Test ids, the summary grid and ``diagnose`` name a mode by ``Mode.name``: presets joined by
``+`` with list parts ``keep_dtype(a,b)`` and ``rules_off(R)`` and extra ATC options
``option=value`` (``fusion_off+rules_off(R)+keep_dtype(fc)``). ``ascend-accuracy diagnose
--mode`` and ``dataset --mode`` take that name (``cli.mode_arg``); where only a preset name or a
mapping is taken (a YAML suite's ``modes:``, a string in ``@accuracy(modes=[...])``),
``core.modes.resolve_mode`` refuses it with the spellings this reads it as.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional

#: a printed name's list parts, ``keep_dtype(a,b)`` and ``rules_off(R)``, by mapping key
_LISTS = {"keep_dtype": "keep_dtype", "rules_off": "fusion_rules_off"}
_LIST_PART = re.compile(r"^(keep_dtype|rules_off)\((.*)\)$")


def printed_spec(text: str) -> Optional[Dict[str, object]]:
    """``text`` as a mode mapping (keys ``core.modes.MODE_KEYS``) when it holds a list part or
    an ``option=value`` part; None for anything else (preset names, which ``resolve_mode``
    takes or refuses with the closest)."""
    parts = split_parts(text.strip())
    if not any(_LIST_PART.match(p) or "=" in p for p in parts):
        return None
    spec: Dict[str, object] = {}
    presets = []
    for part in parts:
        match = _LIST_PART.match(part)
        if match:
            names = [n.strip() for n in match.group(2).split(",") if n.strip()]
            spec.setdefault(_LISTS[match.group(1)], []).extend(names)
        elif "=" in part:  # an extra ATC option, printed option=value
            key, _, value = part.partition("=")
            spec.setdefault("extra", {})[key.strip()] = value.strip()
        else:
            presets.append(part)
    if presets:
        spec["base"] = "+".join(presets)
    return spec


def split_parts(text: str) -> List[str]:
    """``text`` split at each ``+`` outside parentheses (a ``keep_dtype(...)`` list stays whole)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        elif ch == "+" and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]

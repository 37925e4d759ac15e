"""``--mode`` of ``diagnose`` and ``dataset``: one parser, so a mode printed by either (or by
the plugin) runs pasted into the other.

Three spellings: a preset name or presets joined by ``+`` (``high_precision``,
``buffer_off+fusion_off``); a YAML flow mapping as a suite writes a mode
(``'{base: fusion_off, keep_dtype: ["fc"]}'``, keys ``core.modes.MODE_KEYS``; the form
``--accuracy-diagnose`` prints); and a mode's printed name (``keep_dtype(scale,fc)``,
``fusion_off+rules_off(R)+keep_dtype(fc)``, as test ids and the summary name a mode). Every
keep_dtype entry is checked against the model's ops before anything is converted.
"""
from __future__ import annotations

import re

from ..errors import ConfigError

#: a printed name's list parts, ``keep_dtype(a,b)`` and ``rules_off(R)``, by mapping key
_LISTS = {"keep_dtype": "keep_dtype", "rules_off": "fusion_rules_off"}
_LIST_PART = re.compile(r"^(keep_dtype|rules_off)\((.*)\)$")


def mode_arg(text: str, model, where: str = "--mode"):
    """``--mode TEXT`` as a ``Mode`` checked against ``model``'s ops."""
    import yaml

    from ..core.modes import mode_from_spec
    from ..graph.op_catalogue import check_mode

    try:
        value = yaml.safe_load(text) if text.lstrip().startswith("{") else _printed(text, where)
    except yaml.YAMLError as exc:
        raise ConfigError(where, f"not a preset name or a YAML mapping: {exc}") from None
    mode = mode_from_spec(value, where)
    check_mode(mode, model, where)
    return mode


def _printed(text: str, where: str):
    """A printed mode name as ``mode_from_spec`` takes it: the text itself when it holds no
    list part (preset names: their own errors name the closest), else a mapping."""
    parts = _split(text.strip())
    if not any(_LIST_PART.match(p) or "=" in p for p in parts):
        return text
    spec = {}
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


def _split(text: str):
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

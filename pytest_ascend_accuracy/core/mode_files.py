"""The files a conversion mode's ATC options name, read back: a ``--keep_dtype`` file's entries
and what a ``--fusion_switch_file`` switches off (``core.modes`` writes both; an ATC command line
or a mode's extra options name them)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional, Sequence


def found(path: str, bases: Sequence) -> str:
    """``path`` as given when it exists from here, else under the first of ``bases`` that
    holds it (as given when none does)."""
    if Path(path).is_absolute() or Path(path).exists():
        return path
    for base in bases:
        if base and (Path(base) / path).exists():
            return str(Path(base) / path)
    return path


def _text(path: str) -> Optional[str]:
    """A file's text, or None when it cannot be read from here."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def keep_dtype_lines(path: str) -> Optional[List[str]]:
    """A keep_dtype file's entries, or None when it cannot be read from here."""
    text = _text(path)
    return None if text is None else [ln.strip() for ln in text.splitlines() if ln.strip()]


def fusion_switch_rules(path: str):
    """What a fusion switch file turns off: False for every graph and UB fusion, else the
    rules it switches off as ``fusion_rules_off`` entries (``UBFusion:Name``; ``()``: none);
    None when it cannot be read from here or says something else (not carried)."""
    text = _text(path)
    try:
        doc = json.loads(text) if text is not None else None
    except ValueError:
        return None
    switch = doc.get("Switch", doc) if isinstance(doc, dict) else None
    if not isinstance(switch, dict):
        return None
    sections = [switch.get("GraphFusion") or {}, switch.get("UBFusion") or {}]
    if not all(isinstance(s, dict) for s in sections):
        return None
    alls = [str(s.get("ALL", "")).lower() for s in sections]
    values = [str(v).lower() for s in sections for k, v in s.items() if k != "ALL"]
    if alls == ["off", "off"]:  # a rule switched back on beside ALL off is not fusion_off
        return False if "on" not in values else None
    known = all(str(v).lower() in ("on", "off") for s in sections for v in s.values())
    if any(a == "off" for a in alls) or not known:
        return None  # one section all off, or values this reader does not know
    graph, ub = sections
    return tuple([k for k, v in graph.items() if k != "ALL" and str(v).lower() == "off"]
                 + [f"UBFusion:{k}" for k, v in ub.items()
                    if k != "ALL" and str(v).lower() == "off"])


__all__ = ["found", "fusion_switch_rules", "keep_dtype_lines"]

"""A mode's name as a column title or beside a test id: the name, or where longer than
``GRID_TITLE_MAX`` its op lists given by count (``fusion_off+keep_dtype(313 ops)``, a pasted
diagnosis fix), so the summary grid (``plugin.terminal_report``) stays readable."""
from __future__ import annotations

import re
from typing import Dict, List, Sequence, Tuple

#: a grid column title longer than this gives the counts of its mode's lists, not the names
#: (A1: a pasted 313-op diagnosis fix made the grid's header one line of 19,310 characters)
GRID_TITLE_MAX = 40
#: the lists a mode's name spells out (``core.modes.Mode.name``), and what each holds
_LISTS = {"keep_dtype": ("op", "ops"), "rules_off": ("rule", "rules")}


def short_mode(mode: str) -> str:
    """``mode``'s name, or where longer than ``GRID_TITLE_MAX`` with its keep_dtype and
    rules_off lists given by count (``fusion_off+keep_dtype(313 ops)``)."""
    if len(mode) <= GRID_TITLE_MAX:
        return mode

    def count(m):
        n = len(m.group(2).split(","))
        return f"{m.group(1)}({n} {_LISTS[m.group(1)][n != 1]})"
    return re.sub(r"\b(keep_dtype|rules_off)\(([^()]*)\)", count, mode)


def grid_titles(modes: Sequence[str]) -> Tuple[List[str], List[str]]:
    """``(column titles, legend lines)`` of the grid's ``modes``: a mode's name, or where longer
    than ``GRID_TITLE_MAX`` with its op lists given by count (``fusion_off+keep_dtype(313
    ops)``); two modes alike so are numbered (``... #1``, ``... #2``) and the legend spells
    each out (the test ids and failure lines spell every mode in full)."""
    short = [short_mode(m) for m in modes]
    alike: Dict[str, List[str]] = {}
    for mode, title in zip(modes, short):
        alike.setdefault(title, []).append(mode)
    titles, legend = [], []
    for mode, title in zip(modes, short):
        if len(alike[title]) > 1:
            title = f"{title} #{alike[title].index(mode) + 1}"
            legend.append(f"{title}: {mode}")
        titles.append(title)
    return titles, legend


__all__ = ["GRID_TITLE_MAX", "grid_titles", "short_mode"]

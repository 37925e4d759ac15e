"""Baseline files of older versions, and which version a file is written as.

Version 1 recorded msaccucmp's plain cosine, versions 1 and 2 its plain rel_l2; version 3
records the figures the threshold judges (``baseline.file``). An older file is judged against
this run's figures as it recorded them, and ``older_version_note`` says where the threshold
judges another figure. Version 2 is written where it records what version 3 would, for a check
that judges no line's rel_l2 (a cosine test) and whose every line has the same judged and plain
rel_l2: its bytes are then what earlier releases wrote, and read (a review: every file was
version 3, which a machine still on such a release refuses). Otherwise version 3, whatever the
check (two reviews: a rel_l2 test's file written as version 2 because its recording run had no
subnormal difference was then judged plain against plain, and a later run's subnormal noise
failed a correct device; a cosine test's version 2 file, shared with a rel_l2 test of the same
model, mode and inputs, recorded a plain rel_l2 swollen by subnormal noise, under which a real
fault passed the rel_l2 test). A rewrite never turns a version 3 file into a version 2 one
(``version_on_disk``: the cosine test would otherwise write the shared file back as version 2
under ``--accuracy-regen-all``).
"""
from __future__ import annotations

import math
import re
from typing import Dict, List, Optional, Sequence, Set, Tuple

from .file import PLAIN_REL_L2_VERSION, VERSION, Baseline, OpBaseline, ops_from_result


def written_lines(result, rel_judged: Optional[Set] = None) -> Dict[int, Tuple[OpBaseline, ...]]:
    """``{version: lines}`` of ``result`` (a ``CompareResult``) as files of versions 3 and 2
    record them, the one written first: version 3 where the check judges some line's rel_l2
    rise (``rel_judged``: those lines' keys; None: every line) or where some line's judged
    rel_l2 differs from the plain one, else version 2 (see the module docstring)."""
    judged = ops_from_result(result, version=VERSION)
    plain = ops_from_result(result, version=PLAIN_REL_L2_VERSION)
    if (rel_judged is not None and not rel_judged
            and all(_same(a.rel_l2, b.rel_l2) for a, b in zip(judged, plain))):
        return {PLAIN_REL_L2_VERSION: plain, VERSION: judged}
    return {VERSION: judged, PLAIN_REL_L2_VERSION: plain}


def version_on_disk(path) -> Optional[int]:
    """The ``version:`` a baseline file at ``path`` declares at the top level among its first
    lines (as ``render`` writes it), None where there is no such file or line: enough to keep a
    rewrite from writing the file back as an older version, without reading every line."""
    try:
        with open(path, encoding="utf-8") as f:
            for _, line in zip(range(40), f):
                m = re.fullmatch(r"version:\s*(\d+)\s*(?:#.*)?", line.rstrip("\n"))
                if m:
                    return int(m.group(1))
    except (OSError, UnicodeDecodeError):
        return None
    return None


def rel_judged_lines(max_rel_l2_rise, rel_l2_lines, current=None) -> Optional[Set]:
    """The keys of the lines whose rel_l2 rise a check judges: none without
    ``max_rel_l2_rise``; those ``rel_l2_lines`` names, or every line (None, or the keys of
    ``current`` where given)."""
    if max_rel_l2_rise is None:
        return set()
    if rel_l2_lines is not None:
        return set(rel_l2_lines)
    return None if current is None else {op.key for op in current}


def older_version_note(old: Baseline, current: Sequence[OpBaseline],
                       judged: Sequence[OpBaseline], shown: str, rel_judged=(),
                       written: int = VERSION) -> List[str]:
    """The note on an older file judged by msaccucmp's plain cosine (version 1) or rel_l2
    (versions 1 and 2) where the threshold judges another figure for some line (``judged``: the
    lines it was judged by; ``rel_judged``: the keys whose rel_l2 rise is judged at all: a
    cosine test's version 2 file was urged to a rewrite for a figure nothing judged, a
    review), else none. ``written``: the version a rewrite records (a version 1 file's note
    promised version 3 where the rewrite wrote 2, a review)."""
    if judged is current:
        return []
    which = "cosine" if old.plain_cosine else "rel_l2"
    moved = [c.label for c, p in zip(current, judged)
             if c.compared and getattr(c, which) != getattr(p, which)
             and not math.isnan(getattr(p, which))
             and (which == "cosine" or c.key in rel_judged)]
    if not moved:
        return []
    lines = f"{len(moved)} operator line{'' if len(moved) == 1 else 's'}"
    return [f"note: {shown} is a version {old.version} baseline, whose {which} is msaccucmp's "
            f"plain one: judged against this run's plain {which}, as recorded; the threshold "
            f"judges a {'higher cosine' if which == 'cosine' else 'lower rel_l2'} (float16 "
            f"values below its smallest normal counted as equal) for {lines}: "
            f"{', '.join(moved[:5])}" + (f", +{len(moved) - 5} more" if len(moved) > 5 else "")
            + f"; --accuracy-regen-all records that one (baseline version {written})"]


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


__all__ = ["older_version_note", "rel_judged_lines", "version_on_disk", "written_lines"]

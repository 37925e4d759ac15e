"""Baseline files of older versions, and which version a file is written as.

Version 1 recorded msaccucmp's plain cosine, versions 1 and 2 its plain rel_l2; version 3
records the figures the threshold judges (``baseline.file``). An older file is judged against
this run's figures as it recorded them, and ``older_version_note`` says where the threshold
judges another figure. Version 2 is written where it records what version 3 would, every
line's judged rel_l2 the plain one, and it says so (``file.REL_L2_AS_JUDGED_MARK``, a comment
line): its bytes are then what earlier releases read, and a rel_l2 test judges it as version 3
(``Baseline.judged_as``). Otherwise version 3. Three reviews shaped this: every file version 3
was refused by machines still on an earlier release; a version 2 file of a rel_l2 test, judged
plain against plain, failed a correct device on the next run's subnormal noise; and a cosine
test's version 2 file shared with a rel_l2 test (one model, mode and inputs) did the same, or,
recording a plain rel_l2 swollen by noise, hid 4 lost values (judged 0 -> 1.734e-02) under it,
which test wrote first deciding (a race under xdist). A version 2 file without the mark (an
earlier release's) is judged plain against plain, with a note. A rewrite never turns a version
3 file into a version 2 one (``version_on_disk``: the last writer would flip it).
"""
from __future__ import annotations

import math
import re
from typing import Dict, List, Optional, Sequence, Set, Tuple

from .file import PLAIN_REL_L2_VERSION, VERSION, Baseline, OpBaseline, ops_from_result


def written_lines(result) -> Dict[int, Tuple[OpBaseline, ...]]:
    """``{version: lines}`` of ``result`` (a ``CompareResult``) as files of versions 3 and 2
    record them, the one written first: version 2 (marked: its rel_l2 is the judged one too)
    where no line's judged rel_l2 differs from the plain one, else version 3 (see the module
    docstring): whichever test writes a file its tests share, its lines are right for all."""
    judged = ops_from_result(result, version=VERSION)
    plain = ops_from_result(result, version=PLAIN_REL_L2_VERSION)
    if all(_same(a.rel_l2, b.rel_l2) for a, b in zip(judged, plain)):
        return {PLAIN_REL_L2_VERSION: plain, VERSION: judged}
    return {VERSION: judged, PLAIN_REL_L2_VERSION: plain}


def version_on_disk(path) -> Optional[int]:
    """The ``version:`` a baseline file at ``path`` declares at the top level among its first
    lines (as ``render`` writes it), None where there is no such file or line: enough to keep a
    rewrite from writing the file back as an older version, without reading every line."""
    head = []
    try:
        with open(path, encoding="utf-8") as f:
            for _, line in zip(range(40), f):
                m = re.fullmatch(r"version:\s*(\d+)\s*(?:#.*)?", line.rstrip("\n"))
                if m:
                    return int(m.group(1))
                if line.startswith("ops:"):
                    break
                head.append(line)
    except (OSError, UnicodeDecodeError):
        return None
    return _version_in(head)


def _version_in(head: List[str]) -> Optional[int]:
    """The top-level ``version`` of a header the line match missed (a hand edit: ``version :
    3``, ``"version": 3``, ``version: +3``; a review), read as YAML; None where it is not one."""
    import yaml

    from ..core.safe_yaml import fast_safe_loader, load_yaml

    try:
        data = load_yaml("".join(head), "baseline header", loader=fast_safe_loader(yaml))
    except Exception:  # not YAML, or not a header: nothing to keep
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return version if type(version) is int else None


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

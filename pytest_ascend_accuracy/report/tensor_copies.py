"""The failing ops' tensors, copied next to a report so its links outlive the dumps.

A failing test's dumps stay in pytest's temp dir, which pytest rotates away after three runs;
a report that linked there would point at nothing. ``copy_failing_tensors`` writes, for the
first ``limit`` failing tensors in graph order, the actual and the golden tensor as ``.npy``
files (their logical values, as compared) under ``<report dir>/tensors/`` and returns the
relative links the HTML report shows (a dataset page's traced sample: under a folder of its
own, ``folder``). The first failure is always copied; the others only while the copies stay
within ``max_bytes`` (a report is not a second dump). Each file is written under a temp name
and renamed.
"""
from __future__ import annotations

import os
import re
import uuid
from pathlib import Path
from typing import Dict, Optional, Tuple

#: failing tensors copied per report (graph order; the first is what the user looks at first)
DEFAULT_LIMIT = 10
#: bytes of copies per report beyond the first failure's (which is always copied)
DEFAULT_MAX_BYTES = 64 << 20
#: (op name, slot) -> (actual link, golden link); a link is None when that side is missing
Links = Dict[Tuple[str, str], Tuple[Optional[str], Optional[str]]]


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("._")[:120] or "tensor"


def _tensor(dump, op_name: str, slot: str):
    if dump is None or not op_name:
        return None
    op = dump.get(op_name)
    if op is None:
        return None
    kind, _, index = slot.partition(":")
    tensors = op.inputs if kind == "input" else op.outputs
    try:
        return tensors[int(index or 0)]
    except (ValueError, IndexError):
        return None


def _save(ref, path: Path) -> Optional[str]:
    import numpy as np

    try:
        values = np.asarray(ref.load())
    except Exception:  # an unreadable tensor: the compare already reported its file
        return None
    tmp = path.parent / f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp"
    try:
        with open(tmp, "wb") as f:
            np.save(f, values)
        os.replace(tmp, path)
    except BaseException as exc:  # a Ctrl-C too: no temp file stays behind
        try:
            tmp.unlink()
        except OSError:
            pass
        if not isinstance(exc, OSError):
            raise
        return None
    return path.name


def _nbytes(ref) -> int:
    try:
        import numpy as np

        return int(ref.size) * np.dtype(ref.dtype).itemsize
    except TypeError:  # a dtype numpy does not name (bfloat16...): loaded as float32
        return int(ref.size) * 4


def copy_failing_tensors(actual, golden, verdict, directory, *, limit: int = DEFAULT_LIMIT,
                         max_bytes: int = DEFAULT_MAX_BYTES, folder: str = "tensors",
                         into=None) -> Links:
    """Copy the first failure of ``verdict`` (``verdict.first``, the one the page opens on)
    and the failing tensors after it in graph order, ``limit`` in all, actual and golden side,
    into ``directory/folder`` (``into``: another folder that will be moved there; past the
    first failure, within ``max_bytes``); the links relative to ``directory``."""
    links: Links = {}
    spent = 0
    first = verdict.first
    if first is None:
        return links
    # the first failure skips "not compared" rows (no golden tensor) that may come before it:
    # counted among the failures, ten of them left it uncopied (a review)
    at = next(i for i, f in enumerate(verdict.failures) if f.row is first.row)
    rows = [f.row for f in verdict.failures[at:at + limit]]
    out = Path(into) if into is not None else Path(directory) / folder
    out.mkdir(parents=True, exist_ok=True)
    for k, row in enumerate(rows):
        stem = f"{row.order:04d}-{_safe(row.op_name)}-{_safe(row.slot)}"
        refs = [_tensor(actual, row.op_name, row.slot),
                _tensor(golden, row.golden_name, row.golden_slot)]
        size = sum(_nbytes(r) for r in refs if r is not None)
        if k and spent + size > max_bytes:
            break
        spent += size if k else 0  # the first failure's own bytes are not counted
        pair = []
        for side, ref in zip(("actual", "golden"), refs):
            saved = _save(ref, out / f"{stem}.{side}.npy") if ref is not None else None
            pair.append(f"{folder}/{saved}" if saved else None)
        links[(row.op_name, row.slot)] = (pair[0], pair[1])
    return links

"""The ``ascend-accuracy`` section of the terminal summary, as plain lines (no pytest import).

Counts use correct plurals; the models x modes grid shows each (model, mode) pair's outcome;
every failing test gets one line naming its first failing operator; cache counters and golden
files written close the section.
"""
from __future__ import annotations

import math
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .session import CheckRecord, GoldenWrite

_IRREGULAR = {"miss": "misses"}


def plural(n: int, word: str) -> str:
    """``plural(1, "model") == "1 model"``, ``plural(2, "miss") == "2 misses"``."""
    return f"{n} {word if n == 1 else _IRREGULAR.get(word, word + 's')}"


def _fmt(value: Optional[float]) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return f"{value:.6f}"


def failure_line(rec: CheckRecord) -> str:
    """``FAILED node: first failing op X (cosine 0.41 < 0.95)``."""
    op = "cosine" if rec.metric == "cosine" else rec.metric
    rel = "<" if rec.metric == "cosine" else ">"
    where = f" [{rec.model}, {rec.mode}]"
    if rec.note:
        return f"FAILED {rec.nodeid}{where}: {rec.note}"
    if rec.first_op is None:
        return f"FAILED {rec.nodeid}{where}"
    value = rec.first_value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        detail = f"{op} undefined: NaN/Inf or not compared"
    else:
        from ..compare.thresholds import beside

        detail = f"{op} {beside(value, rec.threshold)} {rel} {rec.threshold:.10g}"
    return f"FAILED {rec.nodeid}{where}: first failing op {rec.first_op} ({detail})"


def grid_lines(records: Sequence[CheckRecord]) -> List[str]:
    """One row per model, one column per mode: ``passed``, ``FAILED``, ``1/2 passed`` or ``-``."""
    models: List[str] = []
    modes: List[str] = []
    cells: Dict[Tuple[str, str], List[bool]] = {}
    for r in records:
        if r.model not in models:
            models.append(r.model)
        if r.mode not in modes:
            modes.append(r.mode)
        cells.setdefault((r.model, r.mode), []).append(r.passed)

    def cell(model, mode):
        outcomes = cells.get((model, mode))
        if not outcomes:
            return "-"
        if all(outcomes):
            return "passed"
        if not any(outcomes):
            return "FAILED"
        return f"{sum(outcomes)}/{len(outcomes)} passed"

    modes = sorted(modes, key=lambda m: m != "default")  # default first, the rest as met
    header = ["model"] + modes
    rows = [[m] + [cell(m, mode) for mode in modes] for m in models]
    widths = [max(len(row[i]) for row in [header] + rows) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header] + rows]


def dataset_lines(records: Sequence[Mapping]) -> List[str]:
    """``2 dataset checks: ...``, one line of figures per check and a line per failure."""
    records = sorted(records, key=lambda r: r["nodeid"])
    passed = sum(bool(r["passed"]) for r in records)
    lines = [f"{plural(len(records), 'dataset check')}: {passed} passed, "
             f"{len(records) - passed} failed"]
    for r in records:
        sign = "<=" if r["passed"] else ">"
        lines.append(f"  {r['model']} [{r['mode']}] {r['metric']} {r['device']:.4f} device vs "
                     f"{r['reference']:.4f} reference (drop {r['reference'] - r['device']:.4f} "
                     f"{sign} {r['max_drop']:g}), {plural(r['samples'], 'sample')}, "
                     f"{r['flipped']} flipped")
    for r in records:
        if not r["passed"]:
            traced = (f"; first failing op {r['first_op']} (sample {r['first_sample']})"
                      if r.get("first_op") else "")
            lines.append(f"FAILED {r['nodeid']} [{r['model']}, {r['mode']}]: {r['metric']} drop "
                         f"{r['reference'] - r['device']:.4f} > max_drop {r['max_drop']:g}{traced}")
    return lines


def summary_lines(records: Sequence[CheckRecord], *, backend: str,
                  cache_stats: Mapping[str, int], golden_writes: Iterable[GoldenWrite] = (),
                  report_dir: Optional[str] = None,
                  dataset_records: Sequence[Mapping] = ()) -> List[str]:
    """Every line of the section, in order. Records are ordered by test id, so the section is
    the same whichever xdist worker ran which test."""
    records = sorted(records, key=lambda r: r.nodeid)
    lines = [f"backend: {backend}"]
    if records:
        passed = sum(r.passed for r in records)
        failed = len(records) - passed
        n_models = len({r.model for r in records})
        n_modes = len({r.mode for r in records})
        lines.append(f"{plural(len(records), 'accuracy check')}: {passed} passed, {failed} failed "
                     f"({plural(n_models, 'model')} x {plural(n_modes, 'mode')})")
        lines.extend("  " + line for line in grid_lines(records))
        lines.extend(failure_line(r) for r in records if not r.passed)
    elif not dataset_records:
        lines.append("no accuracy checks ran")
    if dataset_records:
        lines.extend(dataset_lines(dataset_records))
    hits, misses = cache_stats.get("hits", 0), cache_stats.get("misses", 0)
    cache_line = f"cache: {plural(hits, 'hit')}, {plural(misses, 'miss')}"
    if cache_stats.get("rebuilt"):
        cache_line += f", {cache_stats['rebuilt']} corrupt entr{'y' if cache_stats['rebuilt'] == 1 else 'ies'} rebuilt"
    lines.append(cache_line)
    writes = list(golden_writes)
    for kind in ("golden file", "baseline file"):
        these = [w for w in writes if w.reason.startswith("baseline") == (kind == "baseline file")]
        if these:
            lines.append(f"{plural(len(these), kind)} written:")
            lines.extend(f"  {w.path}: {w.reason}" for w in these)
    if report_dir:
        lines.append(f"reports: {report_dir}")
    return lines

"""The figures a report shows: the cosine the verdict judged, and msaccucmp's plain one beside it.

A float16 tensor made of values below float16's smallest normal has two cosines
(``compare/tiny_values.py``): msaccucmp's plain one (``TensorMetrics.cosine``, the CSV's
``CosineSimilarity``, kept equal to msaccucmp's on purpose) and the one with those positions
counted as equal (``normal_cosine``), which judging takes where it is the higher
(``TensorMetrics.value("cosine")``). Every table, chart and baseline shows the judged one, so a
row that passed is never drawn or listed below its threshold; where the plain figure differs it
is named as msaccucmp's (a review: the HTML chart drew the real PP-OCRv4 detector's passing
probability map at 0.997705, under its 0.999 threshold line). The plain cosine, as every figure,
leaves out the positions where a float16 device's saturated value stands against the golden's
±float32 max (the mask stand-in, ``compare/mask_stand_in.py``), which msaccucmp's takes in:
``csv_cosine_note`` says so on such a row.
"""
from __future__ import annotations

import math
from typing import List, Optional, Sequence

from ..compare import mask_stand_in


def six_places(v: Optional[float]) -> str:
    """A figure as the reports print it: 6 decimals, ``NaN``, ``inf``/``-inf``."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return "{:.6f}".format(v)


def error_figure(v: Optional[float]) -> str:
    """An error figure: six decimals, or 4 significant digits for a non-zero one below 1e-3,
    which six decimals printed as 0.000000 (H324's mobilenet: max abs error 3e-8; a YOLO
    diagnosis's step table, 2e-8, beside the failure's own 1.931e-08)."""
    if v is not None and math.isfinite(v) and 0.0 < abs(v) < 1e-3:
        return f"{v:.4g}"
    return six_places(v)


def judged_cosine(m) -> float:
    """The cosine the verdict judges for ``m`` (``TensorMetrics``)."""
    return m.value("cosine")


def failing_cosine(f) -> str:
    """The cosine cell of a failing row ``f`` (``Failure``): ``cosine_cell`` of its judged
    cosine where a cosine threshold judges it, else six decimals."""
    value = judged_cosine(f.row.metrics)
    return (cosine_cell(value, f.threshold.value) if f.threshold.metric == "cosine"
            else six_places(value))


def cosine_cell(value: float, threshold: float) -> str:
    """A cosine in a table: six decimals, or, below ``threshold``, as many as show it below
    (``beside``): tables printed ``0.999999  cosine < 0.999999`` for 0.9999985 (audit 34, a
    strict MTCNN check); at or above it (a passing row, a scale-guard failure) six."""
    from ..compare.thresholds import beside

    if not math.isfinite(value) or value >= threshold:
        return six_places(value)
    return beside(value, threshold)


def plain_differs(m, metric: str = "cosine") -> bool:
    """Whether msaccucmp's plain figure of ``metric`` for ``m`` reads otherwise than the judged
    one as printed (6 decimals): float16's subnormal positions counted as equal moved it. A
    change in the 12th decimal is no difference to name (a PP-OCRv4 trial: "msaccucmp's plain
    cosine: #263 0.999689" under a table showing 0.999689). False without metrics."""
    if m is None:
        return False
    return six_places(m.value(metric)) != six_places(getattr(m, metric))


def plain_cosine_text(m, metric: str = "cosine") -> str:
    """``"msaccucmp's plain cosine 0.997705"``, where it differs as printed; else ""."""
    if not plain_differs(m, metric):
        return ""
    return f"msaccucmp's plain {metric} {six_places(getattr(m, metric))}"


def csv_cosine_note(m) -> str:
    """The CSV's note on a row whose ``CosineSimilarity`` is not msaccucmp's figure as it
    stands: where it does not read as the cosine judged (msaccucmp's plain cosine beside the
    judged one), and where the mask stand-in's saturated positions are left out of it, which
    msaccucmp's cosine takes in (``mask_stand_in.saturated_in``); else ""."""
    notes = []
    saturated = mask_stand_in.saturated_in(m.notes) if m is not None else 0
    if saturated:
        notes.append(f"CosineSimilarity and the other figures leave out the {saturated} "
                     f"position{'s' if saturated > 1 else ''} of float16's saturated value "
                     "against the golden's ±3.4e38 (the mask stand-in, compared as equal); "
                     "msaccucmp's take them in")
    if plain_differs(m):
        notes.append(f"CosineSimilarity is msaccucmp's plain cosine; the cosine judged is "
                     f"{six_places(judged_cosine(m))}")
    return "; ".join(notes)


def plain_cosine_lines(rows: Sequence, indent: str = "  ",
                       metrics: Sequence[str] = ("cosine",)) -> List[str]:
    """The lines under a text table whose ``metrics`` columns show the judged figures: which of
    its ``rows`` (``TensorCompare``) have another plain figure as printed, and what it is, one
    line per metric; [] where none."""
    lines = []
    for metric in metrics:
        shown = [f"#{r.order} {six_places(getattr(r.metrics, metric))}" for r in rows
                 if plain_differs(r.metrics, metric)]
        if shown:
            lines.append(f"{indent}{metric}: the figure judged (float16 values below its "
                         f"smallest normal on both sides counted as equal, as the notes say); "
                         f"msaccucmp's plain {metric}: {', '.join(shown)}")
    return lines

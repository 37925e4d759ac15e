"""The figures a report shows: the cosine the verdict judged, and msaccucmp's plain one beside it.

A float16 tensor made of values below float16's smallest normal has two cosines
(``compare/tiny_values.py``): msaccucmp's plain one (``TensorMetrics.cosine``, the CSV's
``CosineSimilarity``, kept equal to msaccucmp's on purpose) and the one with those positions
counted as equal (``normal_cosine``), which judging takes where it is the higher
(``TensorMetrics.value("cosine")``). Every table, chart and baseline shows the judged one, so a
row that passed is never drawn or listed below its threshold; where the plain figure differs it
is named as msaccucmp's (a review: the HTML chart drew the real PP-OCRv4 detector's passing
probability map at 0.997705, under its 0.999 threshold line).
"""
from __future__ import annotations

import math
from typing import List, Optional, Sequence


def six_places(v: Optional[float]) -> str:
    """A figure as the reports print it: 6 decimals, ``NaN``, ``inf``/``-inf``."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return "{:.6f}".format(v)


def judged_cosine(m) -> float:
    """The cosine the verdict judges for ``m`` (``TensorMetrics``)."""
    return m.value("cosine")


def plain_differs(m) -> bool:
    """Whether msaccucmp's plain cosine of ``m`` is not the judged one (float16's subnormal
    positions counted as equal raised it); False without metrics."""
    return m is not None and judged_cosine(m) != m.cosine and not (
        math.isnan(m.cosine) and math.isnan(judged_cosine(m)))


def plain_cosine_text(m) -> str:
    """``"msaccucmp's plain cosine 0.997705"``, where it differs from the judged one; else ""."""
    return f"msaccucmp's plain cosine {six_places(m.cosine)}" if plain_differs(m) else ""


def csv_cosine_note(m) -> str:
    """The CSV's note on a row whose ``CosineSimilarity`` (msaccucmp's plain cosine) is not the
    cosine judged; else ""."""
    if not plain_differs(m):
        return ""
    return (f"CosineSimilarity is msaccucmp's plain cosine; the cosine judged is "
            f"{six_places(judged_cosine(m))}")


def plain_cosine_lines(rows: Sequence, indent: str = "  ") -> List[str]:
    """The line under a text table whose cosine column shows the judged figure: which of its
    ``rows`` (``TensorCompare``) have another plain figure, and what it is; [] where none."""
    shown = [f"#{r.order} {six_places(r.metrics.cosine)}" for r in rows if plain_differs(r.metrics)]
    if not shown:
        return []
    return [f"{indent}cosine: the figure judged (float16 values below its smallest normal on "
            f"both sides counted as equal, as the notes say); msaccucmp's plain cosine: "
            f"{', '.join(shown)}"]

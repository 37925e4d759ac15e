"""What an exporter writes about the inputs a model is deployed at.

Ultralytics writes ``imgsz`` (``[320, 320]``) and ``stride`` into every export's metadata; NudeNet's
``320n.onnx`` declares its input ``[batch, 3, height, width]``, and the dynamic-shape advice
offered 32x32 (its first common size that runs), a 1x1 top feature map and a 21-anchor head, not
the graph it is deployed as (audit 34). ``image_size`` reads it, so the advice offers the size the
model was exported for.
"""
from __future__ import annotations

import re
from typing import Optional, Tuple


def image_size(model) -> Optional[Tuple[int, int]]:
    """``(height, width)`` of the ``imgsz`` an Ultralytics export records (``[320, 320]`` or
    ``320``), else None."""
    props = {p.key: p.value for p in getattr(model, "metadata_props", ())}
    found = [int(v) for v in re.findall(r"\d+", props.get("imgsz", ""))]
    if len(found) == 1:
        found *= 2
    return (found[0], found[1]) if len(found) == 2 and all(v > 0 for v in found) else None


__all__ = ["image_size"]

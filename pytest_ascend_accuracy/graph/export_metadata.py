"""What an exporter writes about the inputs a model is deployed at.

Ultralytics writes ``imgsz`` (``[320, 320]``) and ``stride`` into every export's metadata; NudeNet's
``320n.onnx`` declares its input ``[batch, 3, height, width]``, and the dynamic-shape advice
offered 32x32 (its first common size that runs), a 1x1 top feature map and a 21-anchor head, not
the graph it is deployed as (audit 34). ``image_size`` reads it, so the advice offers the size the
model was exported for; ``stride_note`` says what sizes it takes where an input's are refused.
"""
from __future__ import annotations

import os
import re
from typing import Dict, Mapping, Optional, Tuple


def image_size(model) -> Optional[Tuple[int, int]]:
    """``(height, width)`` of the ``imgsz`` an Ultralytics export records (``[320, 320]`` or
    ``320``), else None."""
    return _imgsz({p.key: p.value for p in getattr(model, "metadata_props", ())})


def _imgsz(props: Mapping[str, str]) -> Optional[Tuple[int, int]]:
    found = [int(v) for v in re.findall(r"\d+", props.get("imgsz", ""))]
    if len(found) == 1:
        found *= 2
    return (found[0], found[1]) if len(found) == 2 and all(v > 0 for v in found) else None


def stride_note(path, feeds) -> str:
    """``"; its metadata's stride is 32 ..."`` where the model at ``path`` records an export
    stride (Ultralytics' ``stride``) and an image of ``feeds`` (a 4-D array) is not a multiple
    of it: a 300x300 NudeNet input was refused at a Concat of two branches ("Inferred=19
    Declared=20"), which told nothing of the sizes it takes (audit 34); else ""."""
    import numpy as np
    import onnx

    try:
        proto = onnx.load(os.fspath(path), load_external_data=False)
        props: Dict[str, str] = {p.key: p.value for p in proto.metadata_props}
        stride = int(props.get("stride", "0"))
    except Exception:  # noqa: BLE001 - no model, or no stride: nothing to say
        return ""
    odd = [name for name, a in feeds.items() if np.ndim(a) == 4 and stride > 1
           and any(d % stride for d in np.shape(a)[2:])]
    if not odd:
        return ""
    size = _imgsz(props)
    example = f", e.g. {size[0]}x{size[1]}, the imgsz it was exported for" if size else ""
    given = "x".join(map(str, np.shape(feeds[odd[0]])[2:]))
    return (f"; its metadata's stride is {stride} (an Ultralytics export): the height and width "
            f"of input {odd[0]!r} ({given}) must be multiples of {stride}{example}")


__all__ = ["image_size", "stride_note"]

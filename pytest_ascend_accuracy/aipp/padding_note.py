"""Why no AIPP field fixes a border padded before normalisation, said in one line.

AIPP pads last, after normalisation, with one ``padding_value`` for every channel (the order in
:mod:`.apply`). A reference that pads the raw image (``np.pad`` or ``cv2.copyMakeBorder`` with
black) and then normalises has a border of ``(0 - mean) / std`` per channel, -2.118, -2.036,
-1.804 for ImageNet statistics: one value per channel, which no ``padding_value`` can express,
so the mistake search finds no fields and could only say "compare by hand". This module
recognises that border and says what it is and what to do instead.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from .agreement import judge_image
from .apply import apply_aipp_image
from .config import AippOp

_SIDES = ("top_padding_size", "bottom_padding_size", "left_padding_size", "right_padding_size")
#: formats whose pixels reach normalisation as the image's bytes (no colour conversion)
_DIRECT = ("RGB888_U8", "XRGB8888_U8", "YUV400_U8")


def per_channel_border_note(op: AippOp, images: Sequence[np.ndarray],
                            refs: Sequence[np.ndarray]) -> str:
    """The line for a reference whose border (the file's padding sizes) holds one constant per
    channel, not one for all; '' for any other reference."""
    if not op.get("padding"):
        return ""
    sizes = [int(op.get(k)) for k in _SIDES]
    values = _border_values(refs, sizes)
    if values is None or len(set(values)) < 2:
        return ""
    shown = ", ".join(f"{v:.4g}" for v in values)
    border = "/".join(str(s) for s in sizes)
    text = (f"the reference's {border}-pixel border (top/bottom/left/right) holds one value per "
            f"channel ({shown})")
    raw = _raw_value(op, values)
    if raw is not None:
        text += (f": pixel value {raw:g} padded before normalisation, ({raw:g} - mean_chn - "
                 f"min_chn) * var_reci_chn per channel")
    if _interior_agrees(op, images, refs, sizes):
        text += "; everything inside the border agrees"
    text += (f". AIPP pads after normalisation with one padding_value for every channel, so no "
             f"padding_value gives these: pad after normalising in the reference (the border "
             f"then holds padding_value, {float(op.get('padding_value')):g} in this file), as "
             f"AIPP does")
    if raw is not None and op.input_format in _DIRECT:
        h, w = images[0].shape[:2]
        text += (f"; or, if the network needs this border, pad the raw images with {raw:g} before "
                 f"AIPP (src_image_size_w: {w + sizes[2] + sizes[3]}, src_image_size_h: "
                 f"{h + sizes[0] + sizes[1]}) and set padding: false")
    return text


def _mask(shape, sizes) -> np.ndarray:
    top, bottom, left, right = sizes
    h, w = shape
    mask = np.zeros((h, w), dtype=bool)
    mask[:top], mask[h - bottom:], mask[:, :left], mask[:, w - right:] = True, True, True, True
    return mask


def _border_values(refs, sizes) -> Optional[List[float]]:
    """Each channel's one border value, the same in every reference; None otherwise."""
    found = None
    for ref in refs:
        if ref.ndim != 3 or min(ref.shape[1:]) <= max(sizes[0] + sizes[1], sizes[2] + sizes[3]):
            return None
        border = ref[:, _mask(ref.shape[1:], sizes)]
        if border.size == 0 or np.any(np.ptp(border, axis=1) != 0):
            return None
        values = [float(v) for v in border[:, 0]]
        if found is not None and values != found:
            return None
        found = values
    return found


def _raw_value(op: AippOp, values: List[float]) -> Optional[float]:
    """The one pixel value the file's normalisation turns into ``values``, if there is one."""
    raws = []
    for c, v in enumerate(values):
        var = float(op.get(f"var_reci_chn_{c}"))
        if not var:
            return None
        raws.append(v / var + float(op.get(f"mean_chn_{c}")) + float(op.get(f"min_chn_{c}")))
    raw = round(float(np.mean(raws)))
    return float(raw) if all(abs(r - raw) < 0.5 for r in raws) else None


def _interior_agrees(op: AippOp, images, refs, sizes) -> bool:
    """Whether the AIPP output agrees with each reference once their borders are made equal."""
    for image, ref in zip(images, refs):
        out = apply_aipp_image(op, image)
        if out.shape != ref.shape:
            return False
        mask = _mask(ref.shape[1:], sizes)
        same = np.array(ref, copy=True)
        same[:, mask] = out[:, mask]
        if not judge_image(op, image, same).ok:
            return False
    return True

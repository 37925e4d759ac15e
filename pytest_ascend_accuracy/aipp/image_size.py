"""The AIPP output size at run time, when the file leaves it to the images.

A block without ``src_image_size_w/h`` (and without a crop size on that axis) passes the images'
size on: the emulator's conversion cannot hold it against the model input, so each run does,
and images that AIPP makes another size than the model input are an error naming the AIPP file,
its block and the keys to set (``src_image_size_*`` and a crop to the model's size), not the
model input's shape alone (an AIPP user trial: "input 'x' has shape [1, 3, 20, 24], the model
declares [1, 3, 16, 16]", with no word of the file).
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from .apply import _is_single_image
from .config import AippOp, aipp_value_text


def check_output_size(op: AippOp, name: str, raw: np.ndarray, result: np.ndarray,
                      dims: Optional[Sequence[Optional[int]]]) -> None:
    """Raise a ConfigError naming the file when ``result`` (N x C x H x W, AIPP's output for
    the images ``raw``) is not the H x W of model input ``name`` (``dims``; None: undeclared)."""
    if dims is None or len(dims) != 4 or result.ndim != 4:
        return
    (oh, ow), (dh, dw) = result.shape[-2:], (dims[2], dims[3])
    bad = [axis for axis, got, want in (("w", ow, dw), ("h", oh, dh))
           if want is not None and got != want]
    if not bad:
        return
    ih, iw = image_hw(op, raw)
    shown = "x".join("?" if d is None else str(d) for d in dims)
    free = [axis for axis in ("w", "h") if _from_images(op, axis)]
    key = f"src_image_size_{(free or bad)[0]}"
    lead = ("not set, so the AIPP output's size follows the images'" if free else
            "the image after AIPP is not the size the model is fed")
    problem = (f"{lead}: the images of {name!r} are {iw} wide and {ih} high, which AIPP makes "
               f"{ow} wide and {oh} high ({_how(op)}), but model input {name!r} is {shown} "
               f"(N x C x H x W: {dw} wide, {dh} high)")
    need = _images_needed(op, (ih, iw), (dh, dw))
    if need is not None:
        problem += f". Feed images {need[1]} wide and {need[0]} high"
    advice = _crop_advice(op, (ih, iw), (dh, dw))
    if advice:
        problem += (", or have AIPP crop these to the model's size: " if need is not None else
                    ". Have AIPP crop these to the model's size: ") + advice
    raise op.error(key, problem)


def image_hw(op: AippOp, raw: np.ndarray) -> Tuple[int, int]:
    """Height and width of the (first) image in ``raw`` (NV12 rows: 2/3 of them are Y)."""
    img = raw if _is_single_image(op, raw) else raw[0]
    rows = img.shape[0] * 2 // 3 if op.input_format == "YUV420SP_U8" else img.shape[0]
    return int(rows), int(img.shape[1])


def _from_images(op: AippOp, axis: str) -> bool:
    """The output size along ``axis`` is the images' (the file fixes neither a source nor a
    crop size there)."""
    return not op.get(f"src_image_size_{axis}") and not (op.get("crop") and
                                                         op.get(f"crop_size_{axis}"))


def _pads(op: AippOp, axis: str) -> int:
    if not op.get("padding"):
        return 0
    sides = ("top", "bottom") if axis == "h" else ("left", "right")
    return sum(int(op.get(f"{side}_padding_size")) for side in sides)


def _how(op: AippOp) -> str:
    parts = []
    if op.get("crop"):
        sizes = [f", crop_size_{a} {op.get(f'crop_size_{a}')}" for a in "wh"
                 if op.get(f"crop_size_{a}")]
        parts.append(f"crop from load_start_pos_w {op.get('load_start_pos_w')}, load_start_pos_h "
                     f"{op.get('load_start_pos_h')}{''.join(sizes)}"
                     f"{', the model input sized' if len(sizes) < 2 else ''}")
    if op.get("padding"):
        parts.append(f"padding {_pads(op, 'w')} wide, {_pads(op, 'h')} high")
    return "; ".join(parts) or "no crop, no padding"


def _images_needed(op: AippOp, image: Tuple[int, int], model: Tuple[int, int]):
    """The image size AIPP turns into the model's, as the file stands (None: none does)."""
    out = []
    for axis, have, want in (("h", image[0], model[0]), ("w", image[1], model[1])):
        if not _from_images(op, axis):
            out.append(op.get(f"src_image_size_{axis}") or have)
            continue
        size = want - _pads(op, axis) + (op.get(f"load_start_pos_{axis}") if op.get("crop") else 0)
        if size <= 0:
            return None
        out.append(size)
    if op.input_format == "YUV420SP_U8" and any(n % 2 for n in out):
        return None  # NV12 images have an even height and width
    return tuple(out)


def _crop_advice(op: AippOp, image: Tuple[int, int], model: Tuple[int, int]) -> str:
    """The keys that make AIPP crop images of ``image`` size to the model's (lines to add to
    the block, and lines of it to change), or "" when no crop can."""
    want = {"src_image_size_w": image[1], "src_image_size_h": image[0], "crop": True}
    for axis, have, size in (("w", image[1], model[1]), ("h", image[0], model[0])):
        start = op.get(f"load_start_pos_{axis}") if op.get("crop") else 0
        crop = size - _pads(op, axis)
        if crop <= 0 or start + crop > have:
            return ""
        if op.input_format == "YUV420SP_U8" and have % 2:
            return ""  # YUV420SP_U8 images have even sizes (the crop size may be odd)
        want[f"crop_size_{axis}"] = crop
    add: List[str] = []
    change: List[Tuple[int, str]] = []
    for key, value in want.items():
        line = f"{key}: {aipp_value_text(value)}"
        if key not in op.values:
            add.append(f"    {line}")
        elif op.values[key] != value:
            change.append((op.lines[key], f"line {op.lines[key]} to {line}"))
    text = f"add to the aipp_op block at {op.where()}\n" + "\n".join(add) if add else ""
    if change:
        text += ("\n  and change " if add else f"in the aipp_op block at {op.where()}, change ")
        text += ", ".join(c for _, c in sorted(change))
    return text

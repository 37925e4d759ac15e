"""One sentence per corrected AIPP field: which classic mistake the old value looks like."""
from __future__ import annotations

from typing import Dict

from .config import AippOp
from .keys import YUV2RGB_STANDARDS, matrix_keys


def close(a: float, b: float, rel: float = 0.01) -> bool:
    """``a`` and ``b`` within ``rel`` of the larger magnitude."""
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def why_changed(op: AippOp, key: str, new, changes: Dict[str, object], size_why: str,
                plain: str = "") -> str:
    """Why ``key`` should become ``new`` (``changes`` is the whole correction). A normalisation
    field whose values name no mistake says what the reference does ("the reference scales
    channel 0 by 0.0171"), or ``plain`` where given (where the value comes from)."""
    old = op.get(key)
    if key == "rbuv_swap_switch":
        if op.input_format == "YUV420SP_U8":
            return "the images' chroma order is " + ("NV21 (V, U)" if new else "NV12 (U, V)")
        return "the reference's channel order is the other one (RGB vs BGR)"
    if key == "ax_swap_switch":
        # ax_swap_switch true reads X first (CSC_config.md: "XRGB8888_U8转RGB" sets it true)
        return "the images carry the X byte " + ("first (XRGB)" if new else "last (RGBX)")
    if key in matrix_keys() or key.startswith("input_bias_") or key == "csc_switch":
        return _csc_why(changes)
    if key.startswith("var_reci_chn_"):
        return _var_why(op, key, float(old), float(new), plain)
    if key.startswith(("mean_chn_", "min_chn_")):
        return _offset_why(op, key, old, new, changes, plain)
    if key.startswith("load_start_pos_"):
        return "the reference's window starts at x={}, y={}".format(
            changes.get("load_start_pos_w", op.get("load_start_pos_w")),
            changes.get("load_start_pos_h", op.get("load_start_pos_h")))
    if key.endswith("_padding_size"):
        sides = ("top", "bottom", "left", "right")
        sizes = [changes.get(f"{side}_padding_size", op.get(f"{side}_padding_size"))
                 for side in sides]
        return "the reference's border is " + ", ".join(f"{n} {side}"
                                                        for n, side in zip(sizes, sides))
    if key == "padding_value":
        return _padding_value_why(op, float(old), float(new))
    if key.startswith("crop"):
        return size_why or "the reference is cropped"
    if key.startswith("src_image_size_"):
        return "the images' size: ATC refuses a crop without it"
    return "the reference pre-processing needs it"


def _padding_value_why(op: AippOp, old: float, new: float) -> str:
    """AIPP pads after normalisation: a pixel-unit value goes through mean, min and var_reci."""
    c0 = ((old - float(op.get("mean_chn_0")) - float(op.get("min_chn_0")))
          * float(op.get("var_reci_chn_0")))
    if old != new and close(c0, new, 0.005):
        return (f"AIPP pads after normalisation: {old:g} is the pixel value, the output holds "
                f"({old:g} - mean_chn - min_chn) * var_reci_chn = {new:g}")
    return f"the reference's border holds {new:g} (AIPP pads after normalisation, in output units)"


def _csc_why(changes: Dict[str, object]) -> str:
    rows = tuple(tuple(changes.get(k) for k in matrix_keys()[i * 3:i * 3 + 3]) for i in range(3))
    for name, (std_rows, _) in YUV2RGB_STANDARDS.items():
        if rows == std_rows:
            return f"the images are {name} YUV, output R, G, B"
        if rows == std_rows[::-1]:
            return f"the images are {name} YUV, output B, G, R"
    return "the reference's colour conversion differs"


def _file_channels(op: AippOp, kind: str, c: int):
    """The other channels whose ``kind`` (``mean_chn``, ...) the file sets itself: only those of
    the format's output (one for YUV400_U8, else three) count, and a left-out key's default
    (mean 0, var_reci 1) is not 'a value of channel N of the file'."""
    channels = op.channels
    return [o for o in range(channels) if o != c and f"{kind}_{o}" in op.values]


def _var_why(op: AippOp, key: str, old: float, new: float, plain: str = "") -> str:
    c = int(key[-1])
    if new and close(old * new, 1.0):
        return f"{old:g} is the std; var_reci_chn is its reciprocal 1/std"
    if new and close(old, new * new):
        return f"{old:g} is 1/std^2 (the 'reciprocal of the variance' read literally); the multiplier is 1/std"
    if new and close(old, new * 255) or close(old * 255, new):
        return "a /255 scaling is missing or applied twice"
    for other in _file_channels(op, "var_reci_chn", c):
        if close(float(op.get(f"var_reci_chn_{other}")), new, 1e-3):
            return f"the value belongs to channel {other} of the file: channel order mix-up"
    return plain or f"the reference scales channel {c} by {new:g}"


def _offset_why(op: AippOp, key: str, old, new, changes: Dict[str, object],
                plain: str = "") -> str:
    c = int(key[-1])
    kind = key[:-2]
    mean_k, min_k = f"mean_chn_{c}", f"min_chn_{c}"
    # the channel's whole offset after the correction (both of its fields may change)
    total_new = (float(changes.get(mean_k, op.get(mean_k)))
                 + float(changes.get(min_k, op.get(min_k))))
    total_old = float(op.get(mean_k)) + float(op.get(min_k))
    if not total_old:
        return (f"the reference subtracts {total_new:g} from channel {c}; the file subtracts "
                f"nothing there (mean zeroed?)")
    if not total_new:
        return (f"the reference subtracts no mean from channel {c}; the file subtracts "
                f"{total_old:g} there")
    for other in _file_channels(op, kind, c):
        if close(float(op.get(f"{kind}_{other}")), float(new), 0.005):
            return f"the value belongs to channel {other} of the file: channel order mix-up (RGB vs BGR means)"
    if close(float(old) * 255, float(new), 0.02):
        return "the mean was written on the 0..1 scale; AIPP subtracts it from 0..255 pixels"
    return plain or f"the reference subtracts {total_new:g} from channel {c}"

"""What the AIPP operator refuses at conversion that protobuf's TextFormat takes.

ATC compiles the ``Aipp`` operator from the parsed block; the operator's static-config check
(ascend-opp ``impl/aipp_comm.py``, ``check_aipp_static_config``) raises on values that the file
parser accepted, and the ATC guide's configuration template (mirror-cann/ge
``docs/zh/user_guides/atc_tools/AIPP/config_file_template.md``) documents the same ranges:

- ``mean_chn_N`` 0..255 for the U8 input formats (``check_mean``; template "类型：uint8,
  取值范围：[0, 255]") and ``min_chn_N`` 0..255 (``check_param_range('min_chn_0', ..., 0,
  255)``; template "类型：float16, 取值范围：[0, 255]"): a channel's whole offset, ``mean_chn +
  min_chn`` (both subtracted), is therefore 0..510, and :func:`offset_fields` splits one into the
  fields ATC takes;
- padding sizes at most 32 ("The max padding size is 32"; template "取值范围：[0,32]");
- a crop whose size is 0 (left to the model input's size) without padding ("when crop_size_h
  ... is equal to 0 ..., resize ... and padding ... should be not enable"; template "若开启抠图
  功能，并且没有配置padding，该场景下crop_size_w和crop_size_h才能取值为0或不配置");
- crop or padding only with ``src_image_size_w/h`` ("when crop ... or padding ... is enable,
  src_image_size_w ... and src_image_size_h ... should be greater than 0"; template "只有crop，
  padding功能都没有开启的场景，src_image_size_w和src_image_size_h才能取值为0或不配置").

The operator's "after padding, aipp output W should be less than or equal to 1080" holds on
some chips only (Ascend310/610/710 there; the template: Atlas inference/training series 1080,
A2/A3 4096); the file does not say which chip it converts for, so it is not checked here.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

#: ``mean_chn_N`` and ``min_chn_N`` ranges for U8 input (every format the emulator takes)
OFFSET_FIELD_MAX = 255
#: the largest padding size on a side
PADDING_MAX = 32

_OPP = "ascend-opp aipp_comm.py"


def offset_fields(total: float, whole_in_min: bool = False,
                  snap: bool = True) -> Optional[Tuple[int, float]]:
    """Channel offset ``total`` (``mean_chn + min_chn``, both subtracted) as the ``(mean_chn,
    min_chn)`` ATC accepts: a whole ``mean_chn`` 0..255 and the rest, 0..255, in ``min_chn``
    (``whole_in_min``: all of it in ``min_chn`` where that holds it). None when no pair does:
    an offset below 0 or above 510. ``snap`` (a fitted offset): within 0.02 of a whole level it
    is that level, and a fraction past either end of the range is the end."""
    top, slack = 2 * OFFSET_FIELD_MAX, 0.02 if snap else 0.0
    if not -slack <= total <= top + slack:
        return None
    total = min(max(float(total), 0.0), float(top))
    if whole_in_min and total <= OFFSET_FIELD_MAX:
        return 0, round(total, 3)
    near = round(total)
    mean = int(near) if snap and abs(total - near) < slack else int(math.floor(total))
    mean = min(mean, OFFSET_FIELD_MAX)
    rest = round(total - mean, 3)
    return mean, rest if rest > 0 else 0.0


def offset_advice(c: int, total: float) -> str:
    """How to write channel ``c``'s offset ``total`` with fields ATC accepts (the lines to
    write), or why no file value can."""
    fields = offset_fields(total)
    if fields is None:
        return (f"no mean_chn_{c} / min_chn_{c} pair subtracts {total:g}: each is 0..255, so "
                f"AIPP subtracts 0..510 from a channel")
    return (f"to subtract {total:g} write mean_chn_{c}: {fields[0]} and "
            f"min_chn_{c}: {fields[1]:g}")


def check_operator_ranges(op) -> None:
    """Raise the block's first value the AIPP operator refuses (module docstring), naming the
    file, the line, the key and the documented range. ``op``: a parsed :class:`.config.AippOp`."""
    for c in range(4):
        mean_k, min_k = f"mean_chn_{c}", f"min_chn_{c}"
        total = float(op.get(mean_k)) + float(op.get(min_k))
        for key, kind, check in ((mean_k, "uint8", "check_mean"),
                                 (min_k, "float16", "check_param_range")):
            value = op.values.get(key)
            if value is not None and not 0 <= value <= OFFSET_FIELD_MAX:
                raise op.error(key, f"{value:g} is outside 0..{OFFSET_FIELD_MAX}, the AIPP "
                                    f"operator's range for {op.input_format} input (ATC refuses "
                                    f"it: {_OPP} {check}; the ATC template: {kind}, [0, 255]); "
                                    f"mean_chn_{c} + min_chn_{c} is the offset subtracted: "
                                    f"{offset_advice(c, total)}")
    if op.get("padding"):
        for side in ("left", "right", "top", "bottom"):
            key = f"{side}_padding_size"
            if op.get(key) > PADDING_MAX:
                raise op.error(key, f"{op.get(key)} is over {PADDING_MAX}, the largest padding "
                                    f"the AIPP operator takes (ATC refuses it: {_OPP}, \"The max "
                                    f"padding size is 32\"; the ATC template: [0,32])")
    if op.get("crop") and op.get("padding"):
        for axis in ("w", "h"):
            key = f"crop_size_{axis}"
            if not op.get(key):
                where, what = _unset(op, key, "crop")
                raise op.error(where, (
                    f"{what} while padding is on. A crop size of 0 takes the model input's "
                    f"size, which ATC allows only without padding ({_OPP}: \"when crop_size_h "
                    f"... is equal to 0 ..., padding ... should be not enable\"): set "
                    f"crop_size_w and crop_size_h to the window before padding (the model "
                    f"input's width and height less the padding)"))
    for switch in ("crop", "padding"):
        if not op.get(switch):
            continue
        for axis in ("w", "h"):
            key = f"src_image_size_{axis}"
            if not op.get(key):
                where, what = _unset(op, key, switch)
                raise op.error(where, (
                    f"{what}, but {switch} is on: ATC needs the source image's size then "
                    f"({_OPP}: \"when crop ... or padding ... is enable, src_image_size_w ... "
                    f"and src_image_size_h ... should be greater than 0\"): set "
                    f"src_image_size_w and src_image_size_h to the images' width and height"))


def _unset(op, key: str, switch: str) -> Tuple[str, str]:
    """``(the key an error names, what is wrong)`` for ``key`` at 0: its own line when the
    file gives it, else the ``switch`` that needs it."""
    return (key, "0") if key in op.values else (switch, f"{key} is left out")

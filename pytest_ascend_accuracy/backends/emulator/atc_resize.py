"""Nearest ``Resize`` ops ATC computes otherwise than ONNX: the emulator cannot vouch for them.

The emulator runs a Resize with onnxruntime, by ONNX's definition. ATC's ONNX parser does not
keep that definition for a nearest Resize: every CANN ONNX plugin found builds
``ResizeNearestNeighborV2`` (TensorFlow's op: two flags, ``align_corners`` and
``half_pixel_centers``, and no ``nearest_mode``), and the plugins disagree on the flags:

* ``hicann/ops-cv`` ``common/src/framework/resize_onnx_plugin.cpp`` (2025, opsets 10-18):
  ``half_pixel_centers`` for ``half_pixel`` and ``pytorch_half_pixel``, ``align_corners`` for
  ``align_corners``; ``nearest_mode`` is not read; opset 10: both flags off;
* canndev's ``ops/built-in/framework/onnx_plugin/resize_plugin.cc`` (opsets 10-13; the mirror
  ``dengguojie/vue-element-admin`` @f9f56511): ``half_pixel_centers`` for
  ``pytorch_half_pixel`` only (``half_pixel`` gets neither flag);
* another canndev version builds ``Resize`` with every attribute, which its
  ``ResizeFusionPass`` (static shapes) rewrites to ``ResizeNearestNeighborV2D`` with the flags
  as the line above, deleting ``nearest_mode``.

So which source pixel the device takes depends on the CANN version, and the emulator's pass
proves nothing for such an op. By TensorFlow's definitions (source index ``floor(o * s)``;
``floor((o + 0.5) * s)`` with ``half_pixel_centers``; ``round(o * (in - 1) / (out - 1))`` with
``align_corners``; ``s = in / out``) three ONNX settings agree with what every version builds,
where the output size is the input size times the scale: ``SAFE`` below. Any other nearest
Resize of opset 11 or newer is reported (``resize_rows``), with a warning at each conversion
(``resize_warning``). Opset 10 (no such attributes) is not reported.
"""
from __future__ import annotations

import warnings
from typing import Iterable, List, Optional, Sequence


class AtcResizeWarning(UserWarning):
    """A nearest Resize whose result on the device the emulator cannot vouch for."""


#: (coordinate_transformation_mode, nearest_mode) pairs of a nearest Resize that every CANN
#: parser found computes as ONNX does (see the module docstring)
SAFE = frozenset({("asymmetric", "floor"), ("align_corners", "round_prefer_ceil"),
                  ("pytorch_half_pixel", "round_prefer_ceil")})

#: ONNX's defaults (opset 11+)
_DEFAULTS = {"mode": "nearest", "coordinate_transformation_mode": "half_pixel",
             "nearest_mode": "round_prefer_floor"}


def _attrs(node) -> dict:
    out = dict(_DEFAULTS)
    for a in node.attribute:
        if a.name in out:
            out[a.name] = a.s.decode("utf-8", "replace")
    return out


def resize_rows(model, nodes: Iterable) -> List[List[str]]:
    """``[name, coordinate_transformation_mode, nearest_mode]`` of each nearest Resize among
    ``nodes`` (ONNX nodes of ``model``, an ``onnx.ModelProto``) that ATC's parsers do not
    compute as ONNX does (not ``SAFE``)."""
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                default=0)
    if opset < 11:
        return []
    rows = []
    for n in nodes:
        if n.op_type != "Resize" or n.domain not in ("", "ai.onnx"):
            continue
        a = _attrs(n)
        pair = (a["coordinate_transformation_mode"], a["nearest_mode"])
        if a["mode"] == "nearest" and pair not in SAFE:
            rows.append([n.name, *pair])
    return rows


def resize_warning(label: str, rows: Sequence[Sequence[str]]) -> str:
    """The warning for ``rows`` (``resize_rows``) of the model ``label``."""
    shown = "; ".join(f"{name!r} (coordinate_transformation_mode={ctm!r}, nearest_mode={nm!r})"
                      for name, ctm, nm in rows[:8])
    more = f"; and {len(rows) - 8} more" if len(rows) > 8 else ""
    ops = "this op" if len(rows) == 1 else "these ops"
    return (f"model {label!r}: nearest Resize {shown}{more}: the emulator computes it as ONNX "
            f"defines it, but ATC's ONNX parser builds ResizeNearestNeighborV2 "
            f"(align_corners, half_pixel_centers), dropping nearest_mode, and CANN versions set "
            f"half_pixel_centers differently for 'half_pixel' (the 2025 plugin sets it, canndev's "
            f"did not): the device may take other source pixels, so a pass on the emulator proves "
            f"nothing for {ops}. The settings every version computes as ONNX does: "
            f"coordinate_transformation_mode='asymmetric' with nearest_mode='floor', "
            f"'align_corners' with 'round_prefer_ceil', 'pytorch_half_pixel' with "
            f"'round_prefer_ceil' (an output size that is the input size times the scale)")


def warn_resize(label: str, rows: Optional[Sequence[Sequence[str]]]) -> None:
    """Warn (``AtcResizeWarning``) of ``rows`` (``resize_rows``, read back from a converted
    entry) of the model ``label``; nothing when there are none."""
    if rows:
        warnings.warn(AtcResizeWarning(resize_warning(label, rows)), stacklevel=3)

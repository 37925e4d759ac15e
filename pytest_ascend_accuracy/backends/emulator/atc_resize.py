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
Resize whose sizes are known is compared axis by axis (``resize_pixels``): onnxruntime's source
pixels against the op each parser builds (opset 10: both flags off), and reported where some
parser's differ (``resize_rows``), with a warning at each conversion (``resize_warning``);
where the sizes or scales are not known, a nearest Resize not ``SAFE`` is reported by its
settings alone.
"""
from __future__ import annotations

from typing import Iterable, List, Optional, Sequence

from ...core.caller_warning import warn_at_caller


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


def resize_rows(model, nodes: Iterable, info=None) -> List[List[str]]:
    """``[name, coordinate_transformation_mode, nearest_mode, why]`` of each nearest Resize
    among ``nodes`` (ONNX nodes of ``model``, an ``onnx.ModelProto``, and their branches) that
    some ATC parser does not compute as ONNX does: at known sizes (``info``: the model's
    ``tensor_info``) where some parser's source pixels differ (``why`` says which), else a
    pair not ``SAFE`` (``why`` empty). A review: ``asymmetric``/``floor`` resizing 10
    rows by 0.35 takes rows 0, 2, 5 in ONNX (scale 0.35) and 0, 3, 6 on the device (10 / 3),
    and ``pytorch_half_pixel`` to an output of 1 takes row 0 in ONNX, ``floor(0.5 * in)`` on
    the device; both passed on the emulator without a word."""
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                default=0)
    rows = []
    for n in _with_branches(nodes):
        if n.op_type != "Resize" or n.domain not in ("", "ai.onnx"):
            continue
        if opset < 11:  # no coordinate attributes: ATC builds both flags off (a review; canndev
            mode = next((a.s.decode("utf-8", "replace") for a in n.attribute  # built linear
                         if a.name == "mode"), "nearest")  # as ResizeBilinearV2 so too)
            why = (_sizes_why(model, n, "", info or {}, opset, linear=mode == "linear")
                   if mode in ("nearest", "linear") else "")
            if why:
                rows.append([n.name, "", "linear" if mode == "linear" else "", why])
            continue
        a = _attrs(n)
        pair = (a["coordinate_transformation_mode"], a["nearest_mode"])
        if a["mode"] == "linear":  # compared where sizes are known, never by settings alone
            why = _sizes_why(model, n, pair[0], info or {}, opset, linear=True)
            if why is None and _downscaling_antialias(n, info or {}):
                why = _ANTIALIAS_WHY
            if why:
                rows.append([n.name, pair[0], "linear", why])
            continue
        if a["mode"] != "nearest":
            continue
        why = _sizes_why(model, n, pair[0], info or {}, opset)
        if why is None and pair not in SAFE:  # not compared: the settings alone decide
            rows.append([n.name, *pair, ""])
        elif why:
            rows.append([n.name, *pair, why])
    return rows


def _with_branches(nodes):
    """``nodes`` and the nodes of their subgraphs (an If's branches, a Loop's body), depth
    first: a nearest Resize inside an If branch went unreported (a review)."""
    for n in nodes:
        yield n
        for a in n.attribute:
            graphs = [a.g] if a.HasField("g") else list(a.graphs)
            for g in graphs:
                yield from _with_branches(g.node)


def _sizes_why(model, node, ctm: str, info, opset: int,
               linear: bool = False) -> Optional[str]:
    """Where this Resize takes other source pixels on the device than in onnxruntime, under
    some CANN parser, axis by axis (``resize_pixels``): the text; "" where it takes the same
    under every parser (ONNX's defaults doubling an image do: a trial counted 129 such
    warnings); None where the sizes or the scales are not known (then its settings decide)."""
    shapes = _known_shapes(node, info)
    if shapes is None:
        return None
    from .resize_pixels import differing_axis

    ins, outs = shapes
    differs = differing_axis(node, _constants(model, node), ins, outs, ctm, opset, linear)
    if differs is None:
        return None
    if not differs:
        return ""
    axis, onnx_idx, dev_idx, parser = differs
    under = f" (as {parser} builds it)" if parser else ""
    what = "source coordinates" if linear else "positions"
    first = next((k for k, (a, b) in enumerate(zip(onnx_idx, dev_idx)) if a != b), 0)
    start = max(0, first - 2)  # (from near the first difference: the heads may agree, a review)
    at = f" from output position {start}" if start else ""
    return (f"resizing axis {axis} from {ins[axis]} to {len(onnx_idx)}, ONNX reads {what}{at} "
            f"{_listed(onnx_idx[start:])} and the device{under} {_listed(dev_idx[start:])}")


#: a linear downscale with antialias (opset 18): canndev's op has no such filter (a review)
_ANTIALIAS_WHY = ("its antialias filter, which acts when downscaling, is not one canndev's "
                  "parser's ResizeBilinearV2 applies")


def _downscaling_antialias(node, info) -> bool:
    """A Resize with ``antialias`` whose known output is smaller than its input on some axis."""
    if not any(a.name == "antialias" and a.i for a in node.attribute):
        return False
    shapes = _known_shapes(node, info)
    return shapes is not None and any(o < i for i, o in zip(*shapes))


def _known_shapes(node, info):
    """(input shape, output shape) of a Resize from the model's ``tensor_info``, or None where
    either is not fully known or their ranks differ."""
    ins = (info.get(node.input[0]) or (0, None))[1] if node.input else None
    outs = (info.get(node.output[0]) or (0, None))[1] if node.output else None
    if not ins or not outs or len(ins) != len(outs) or None in ins or None in outs:
        return None
    return ins, outs


def _listed(values) -> str:
    return "[" + ", ".join(map(str, values[:8])) + (", ...]" if len(values) > 8 else "]")


def _constants(model, node) -> dict:
    """``{name: array}`` of the node's constant inputs (initializers, Constant nodes)."""
    from onnx import numpy_helper

    wanted = {n for n in node.input if n}
    out = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer if t.name in wanted}
    for n in model.graph.node:
        if n.op_type == "Constant" and n.output and n.output[0] in wanted:
            for a in n.attribute:
                if a.name == "value":
                    out[n.output[0]] = numpy_helper.to_array(a.t)
    return out


def resize_warning(label: str, rows: Sequence[Sequence[str]]) -> str:
    """The warning for ``rows`` (``resize_rows``) of the model ``label``."""
    rows = [list(r) + [""] * (4 - len(r)) for r in rows]  # (a format-9 entry's rows: 3 items)
    odd = [r for r in rows if not r[3]]
    sized = [r for r in rows if r[3]]
    parts = []
    if odd:
        parts.append(_pair_text(label, odd))
    for kind, group in (("nearest", [r for r in sized if r[2] != "linear"]),
                        ("linear", [r for r in sized if r[2] == "linear"])):
        if not group:
            continue
        shown = "; ".join(f"{name!r} ({_settings(ctm, nm)}): {why}"
                          for name, ctm, nm, why in group[:8])
        more = f"; and {len(group) - 8} more" if len(group) > 8 else ""
        parts.append(f"model {label!r}: {kind} Resize {shown}{more}: the device takes other "
                     f"source pixels than the emulator here, so a pass on the emulator proves "
                     f"nothing for {'this op' if len(group) == 1 else 'these ops'}")
    return " ".join(parts)


def _settings(ctm: str, nm: str) -> str:
    if not ctm:
        return "opset 10, without coordinate_transformation_mode"
    if nm == "linear":
        return f"coordinate_transformation_mode={ctm!r}"
    return f"coordinate_transformation_mode={ctm!r}, nearest_mode={nm!r}"


def _pair_text(label: str, rows) -> str:
    shown = "; ".join(f"{name!r} (coordinate_transformation_mode={ctm!r}, nearest_mode={nm!r})"
                      for name, ctm, nm, _ in rows[:8])
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
            f"'round_prefer_ceil' (with output sizes that are the input sizes times whole-number "
            f"products of the scales, and for 'pytorch_half_pixel' no output size of 1)")


def warn_resize(label: str, rows: Optional[Sequence[Sequence[str]]]) -> None:
    """Warn (``AtcResizeWarning``) of ``rows`` (``resize_rows``, read back from a converted
    entry) of the model ``label``; nothing when there are none."""
    if rows:
        warn_at_caller(AtcResizeWarning(resize_warning(label, rows)))  # at the test's line

"""``Resize`` ops ATC computes otherwise than ONNX: the emulator cannot vouch for them.

The emulator runs a Resize with onnxruntime, by ONNX's definition. ATC's ONNX parser builds a
nearest Resize as ``ResizeNearestNeighborV2`` (TensorFlow's op: two flags, ``align_corners`` and
``half_pixel_centers``, and no ``nearest_mode``) under every plugin found, and a linear one as
``ResizeBilinearV2`` under canndev's or as ``Resize`` keeping its coordinate mode under the 2025
one; which plugin takes a Resize depends on the model's ``ai.onnx`` opset (canndev's registers
opsets 10-13, the 2025 one 10-18), and the plugins disagree on the flags: ``resize_parsers``
holds the table and cites the sources. So which source pixel the device takes depends on the
model's opset and, at opsets 10-13, on the CANN version, which the emulator does not know.

By TensorFlow's definitions (source index ``floor(o * s)``; ``floor((o + 0.5) * s)`` with
``half_pixel_centers``; ``round(o * (in - 1) / (out - 1))`` with ``align_corners``;
``s = in / out``) some ONNX settings agree with what every parser that takes the opset builds,
where the output size is the input size times the scale: ``safe_pairs`` (``SAFE`` at every
opset; at 14-18, where only the 2025 parser is found, ``half_pixel`` with
``round_prefer_ceil`` too). Any Resize whose sizes are known is compared axis by axis
(``resize_pixels``): onnxruntime's source pixels against the op each such parser builds, and
reported where some parser's differ (``resize_rows``: which parsers, and the opset), with one
warning per model at each conversion (``resize_warning``), which names the parsers, their
opsets and the model's, and says where the CANN version decides; where the sizes or scales are
not known, a nearest Resize not safe is reported by its settings alone.
"""
from __future__ import annotations

from typing import Iterable, List, Optional, Sequence

from ...core.caller_warning import warn_at_caller
from .resize_parsers import CANNDEV, OPS_CV


class AtcResizeWarning(UserWarning):
    """A Resize whose result on the device the emulator cannot vouch for."""


#: (coordinate_transformation_mode, nearest_mode) pairs of a nearest Resize that every CANN
#: parser found computes as ONNX does, at any opset (see the module docstring)
SAFE = frozenset({("asymmetric", "floor"), ("align_corners", "round_prefer_ceil"),
                  ("pytorch_half_pixel", "round_prefer_ceil")})


def safe_pairs(opset: int) -> frozenset:
    """The pairs every parser that takes a Resize at ``opset`` computes as ONNX does: ``SAFE``,
    and at opsets 14-18, which only the 2025 parser takes (``half_pixel_centers`` for
    ``half_pixel``), ``half_pixel`` with ``round_prefer_ceil`` (``floor(x + 0.5)`` of
    ``x = (o + 0.5) / scale - 0.5`` is TensorFlow's ``floor((o + 0.5) * s)``)."""
    if CANNDEV.takes(opset):
        return SAFE
    return SAFE | {("half_pixel", "round_prefer_ceil")}


#: ONNX's defaults (opset 11+)
_DEFAULTS = {"mode": "nearest", "coordinate_transformation_mode": "half_pixel",
             "nearest_mode": "round_prefer_floor"}


def _attrs(node) -> dict:
    out = dict(_DEFAULTS)
    for a in node.attribute:
        if a.name in out:
            out[a.name] = a.s.decode("utf-8", "replace")
    return out


def resize_rows(model, nodes: Iterable, info=None) -> List[List]:
    """``[name, coordinate_transformation_mode, nearest_mode or "linear", why, parsers,
    opset]`` of each Resize among ``nodes`` (ONNX nodes of ``model``, an ``onnx.ModelProto``,
    and their branches) that some ATC parser taking the model's opset does not compute as ONNX
    does: at known sizes (``info``: the model's ``tensor_info``) where some such parser's source
    pixels differ (``why`` says how, ``parsers`` which, their keys joined by ","), else a
    nearest pair not safe at that opset (``why`` empty). A review: ``asymmetric``/``floor``
    resizing 10 rows by 0.35 takes rows 0, 2, 5 in ONNX (scale 0.35) and 0, 3, 6 on the device
    (10 / 3), and ``pytorch_half_pixel`` to an output of 1 takes row 0 in ONNX,
    ``floor(0.5 * in)`` on the device; both passed on the emulator without a word."""
    from .resize_parsers import parsers_for

    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                default=0)
    takers = ",".join(p.key for p in parsers_for(opset))
    if not takers:  # no parser found registers a Resize at this opset (19+): ATC refuses the
        return []  # model rather than computing it otherwise (resize_parsers), no claim here
    rows = []
    for n in _with_branches(nodes):
        if n.op_type != "Resize" or n.domain not in ("", "ai.onnx"):
            continue
        if opset < 11:  # no coordinate attributes: both parsers build both flags off (the
            mode = next((a.s.decode("utf-8", "replace") for a in n.attribute  # 2025 one's
                         if a.name == "mode"), "nearest")  # linear: Resize, half_pixel)
            why = (_sizes_why(model, n, "", info or {}, opset, linear=mode == "linear")
                   if mode in ("nearest", "linear") else None)
            if why:
                rows.append([n.name, "", "linear" if mode == "linear" else "", *why, opset])
            continue
        a = _attrs(n)
        pair = (a["coordinate_transformation_mode"], a["nearest_mode"])
        dropped = (dropped_settings(n, a["mode"], pair[0]) if a["mode"] in ("linear", "cubic")
                   else "")
        if dropped and OPS_CV.takes(opset):  # the one parser that builds Resize keeping them
            rows.append([n.name, pair[0], a["mode"], dropped, OPS_CV.key, opset])
            continue
        if a["mode"] == "linear":  # compared where sizes are known, never by settings alone
            if takers and _downscaling_antialias(n, info or {}):  # every parser drops it
                why = (_ANTIALIAS_WHY, takers)
            else:
                why = _sizes_why(model, n, pair[0], info or {}, opset, linear=True)
            if why:
                rows.append([n.name, pair[0], "linear", *why, opset])
            continue
        if a["mode"] != "nearest":
            continue
        why = _sizes_why(model, n, pair[0], info or {}, opset)
        if why is None and pair not in safe_pairs(opset):  # not compared: the settings decide
            rows.append([n.name, *pair, "", takers, opset])
        elif why:
            rows.append([n.name, *pair, *why, opset])
    return rows


#: the IR defaults of CANN's ``Resize`` (``REG_OP(Resize)``, ``image_ops.h``), which are
#: ONNX's too: the 2025 parser sets only ``coordinate_transformation_mode`` and ``mode``
#: (``ParseParamsResize``), so the op it builds has these whatever the model says
CANN_RESIZE_DEFAULTS = {"cubic_coeff_a": -0.75, "exclude_outside": 0, "extrapolation_value": 0.0}


def dropped_settings(node, mode: str, ctm: str) -> str:
    """What of a linear or cubic Resize (its ``mode`` and ``coordinate_transformation_mode``,
    as ``_attrs`` reads them) the 2025 parser drops, in words (its ``cubic_coeff_a`` and
    ``exclude_outside`` where cubic, its ``extrapolation_value`` where ``tf_crop_and_resize``
    reads it), "" where the model keeps CANN's defaults. tf2onnx writes TensorFlow's bicubic as
    ``cubic_coeff_a=-0.5, exclude_outside=1``: the device computes it with -0.75 and 0 (review
    RA2 of audit 35: the README said the parser computes cubic "as ONNX does")."""
    values = {a.name: (a.f if a.name != "exclude_outside" else a.i) for a in node.attribute
              if a.name in CANN_RESIZE_DEFAULTS}
    read = (["cubic_coeff_a", "exclude_outside"] if mode == "cubic" else []) + (
        ["extrapolation_value"] if ctm == "tf_crop_and_resize" else [])
    differ = [k for k in read if k in values and values[k] != CANN_RESIZE_DEFAULTS[k]]
    if not differ:
        return ""
    kept = ", ".join(f"{k}={CANN_RESIZE_DEFAULTS[k]:g}" for k in differ)
    said = ", ".join(f"{k}={values[k]:g}" for k in differ)
    return f"{_DROPPED} {kept} where the model says {said}"


_DROPPED = "the device computes it with CANN's"


def _with_branches(nodes):
    """``nodes`` and the nodes of their subgraphs (an If's branches, a Loop's body), depth
    first: a nearest Resize inside an If branch went unreported (a review)."""
    for n in nodes:
        yield n
        for a in n.attribute:
            graphs = [a.g] if a.HasField("g") else list(a.graphs)
            for g in graphs:
                yield from _with_branches(g.node)


def _sizes_why(model, node, ctm: str, info, opset: int, linear: bool = False):
    """Where this Resize takes other source pixels on the device than in onnxruntime, under
    some CANN parser that takes ``opset``, axis by axis (``resize_pixels``): (the text, the
    parsers' keys joined by ","); () where it takes the same under every such parser (ONNX's
    defaults doubling an image do: a trial counted 129 such warnings); None where the sizes or
    the scales are not known (then its settings decide)."""
    shapes = _known_shapes(node, info)
    if shapes is None:
        return None
    from .resize_parsers import parser_named
    from .resize_pixels import differing_axis

    ins, outs = shapes
    differs = differing_axis(node, _constants(model, node), ins, outs, ctm, opset, linear)
    if differs is None:
        return None
    if not differs:
        return ()
    axis, onnx_idx, dev_idx, keys = differs
    under = f" (as {parser_named(keys[0]).name.split(' (')[0]} builds it)"
    what = "source coordinates" if linear else "positions"
    first = next((k for k, (a, b) in enumerate(zip(onnx_idx, dev_idx)) if a != b), 0)
    start = max(0, first - 2)  # (from near the first difference: the heads may agree, a review)
    at = f" from output position {start}" if start else ""
    return (f"resizing axis {axis} from {ins[axis]} to {len(onnx_idx)}, ONNX reads {what}{at} "
            f"{_listed(onnx_idx[start:])} and the device{under} {_listed(dev_idx[start:])}",
            ",".join(keys))


#: a linear downscale with antialias (opset 18, which only the 2025 parser takes: it logs
#: "Current antialias unsupported" and builds Resize without it; canndev's op had no such
#: filter either, a review)
_ANTIALIAS_WHY = ("its antialias filter, which acts when downscaling, is dropped by the parser "
                  "(it builds the Resize without it)")


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


def resize_warning(label: str, rows: Sequence[Sequence]) -> str:
    """The one warning for ``rows`` (``resize_rows``) of the model ``label``: for each kind of
    Resize, the ops (8, "and N more"), what each reads against the device, the model's opset,
    the CANN parsers that take that opset, which of them differ, and where the CANN version
    (unknown to the emulator) decides. Audit 35 F4: an opset-15 model's 39 linear Resizes were
    warned of under canndev's ResizeBilinearV2, a parser that does not take opset 15."""
    rows = [_padded(r) for r in rows]  # (a format-9 entry's rows: 3 items; before 30: 4)
    opset = next((r[5] for r in rows if r[5] is not None), None)
    head = f"model {label!r}" + (f" (ONNX opset {opset})" if opset is not None else "")
    parts = []
    odd = [r for r in rows if not r[3]]
    if odd:
        parts.append(_pair_text(head, odd, opset))
    dropped = [r for r in rows if r[3].startswith(_DROPPED)]
    if dropped:
        parts.append(_dropped_text(head, dropped, opset))
    groups: dict = {}
    for r in (r for r in rows if r[3] and r not in dropped):
        kind = "linear" if r[2] == "linear" else "nearest"
        groups.setdefault((kind, r[4], r[1]), []).append(r)
    for (kind, parsers, ctm), group in sorted(groups.items(), key=lambda g: g[0][0] == "linear"):
        shown = "; ".join(f"{r[0]!r} ({_settings(r[1], r[2])}): {r[3]}" for r in group[:8])
        more = f"; and {len(group) - 8} more" if len(group) > 8 else ""
        ops = "this op" if len(group) == 1 else "these ops"
        if opset is None or not parsers:  # rows of an older entry: no parser recorded
            clause, when = ("the device takes other source pixels than the emulator here", "")
        else:
            from .resize_parsers import which_cann

            clause, when = which_cann(kind, ctm, opset, parsers.split(","))
        parts.append(f"{head}: {kind} Resize {shown}{more}: {clause}, so {when}a pass on the "
                     f"emulator proves nothing for {ops}")
    return " ".join(parts)


def _dropped_text(head: str, rows, opset: Optional[int]) -> str:
    """Linear or cubic Resizes whose settings the 2025 parser drops (``dropped_settings``); at
    opsets 11-13 canndev's parser refuses a cubic one ("Unsupported interpolation mode")."""
    shown = "; ".join(f"{r[0]!r} ({r[2]}, coordinate_transformation_mode={r[1]!r}): {r[3]}"
                      for r in rows[:8])
    more = f"; and {len(rows) - 8} more" if len(rows) > 8 else ""
    ops = "this op" if len(rows) == 1 else "these ops"
    cubic = any(r[2] == "cubic" for r in rows)
    other = (f"; canndev's parser, which also takes opset {opset}, refuses a cubic Resize "
             f"(\"Unsupported interpolation mode\")" if cubic and opset is not None
             and CANNDEV.takes(opset) else "")
    return (f"{head}: Resize {shown}{more}: {OPS_CV.name} builds Resize keeping only the "
            f"model's mode and coordinate_transformation_mode{other}, so a pass on the "
            f"emulator, which computes the model's settings, proves nothing for {ops} (a "
            f"model exported with ONNX's defaults, cubic_coeff_a=-0.75, exclude_outside=0, "
            f"extrapolation_value=0, loses nothing there)")


def _padded(row) -> list:
    """A row as ``resize_rows`` writes it now: rows an older entry cached lack the reason (3
    items), the parsers and the opset (4)."""
    row = list(row) + [""] * max(0, 5 - len(row))
    return row + [None] if len(row) < 6 else row


def _settings(ctm: str, nm: str) -> str:
    if not ctm:
        return "opset 10, without coordinate_transformation_mode"
    if nm == "linear":
        return f"coordinate_transformation_mode={ctm!r}"
    return f"coordinate_transformation_mode={ctm!r}, nearest_mode={nm!r}"


def _pair_text(head: str, rows, opset: Optional[int]) -> str:
    """Nearest Resizes whose sizes are not known, by their settings alone, at ``opset``."""
    shown = "; ".join(f"{r[0]!r} (coordinate_transformation_mode={r[1]!r}, "
                      f"nearest_mode={r[2]!r})" for r in rows[:8])
    more = f"; and {len(rows) - 8} more" if len(rows) > 8 else ""
    ops = "this op" if len(rows) == 1 else "these ops"
    if opset is not None and not CANNDEV.takes(opset) and OPS_CV.takes(opset):
        who = (f"at opset {opset} the only parser found that takes it is {OPS_CV.name}, which "
               f"sets half_pixel_centers for 'half_pixel' and 'pytorch_half_pixel' (canndev's "
               f"resize_plugin.cc registers opsets 10-13 only)")
    else:
        at = f"at opset {opset} " if opset is not None else ""
        who = (f"{at}CANN versions set half_pixel_centers differently for 'half_pixel' "
               f"({OPS_CV.name} sets it, {CANNDEV.name} does not), and the emulator does not "
               f"know which your CANN has")
    safe = sorted(safe_pairs(opset if opset is not None else 13))
    settings = ", ".join(f"{c!r} with {n!r}" for c, n in safe)
    return (f"{head}: nearest Resize {shown}{more}: the emulator computes it as ONNX "
            f"defines it, but ATC's ONNX parser builds ResizeNearestNeighborV2 "
            f"(align_corners, half_pixel_centers), dropping nearest_mode, and {who}: the device "
            f"may take other source pixels, so a pass on the emulator proves nothing for {ops}. "
            f"The settings every parser that takes this opset computes as ONNX does "
            f"(coordinate_transformation_mode with nearest_mode): {settings} (with output "
            f"sizes that are the input sizes times whole-number products of the scales, and for "
            f"'pytorch_half_pixel' no output size of 1)")


def warn_resize(label: str, rows: Optional[Sequence[Sequence[str]]]) -> None:
    """Warn (``AtcResizeWarning``) of ``rows`` (``resize_rows``, read back from a converted
    entry) of the model ``label``; nothing when there are none."""
    if rows:
        warn_at_caller(AtcResizeWarning(resize_warning(label, rows)))  # at the test's line

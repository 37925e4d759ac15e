"""The input shape of a model converted with an AIPP file, as far as the file fixes it.

An AIPP input of the model is fed the image after AIPP (ATC guide, atlasatc_16_0023: its size
is the model input's): its channels follow from ``input_format`` (1 for YUV400_U8, else 3) and
its height and width from ``src_image_size_*``, the crop and the padding
(``emulation._output_size``). A model whose N x C x H x W input leaves those dimensions dynamic
(the PP-OCR cls model's ``x`` is ``[-1, 3, ?, ?]``) is converted at the file's size: the user
gives ``input_shape`` only for what the file leaves open (the batch), or leaves that to each
run's images (``aipp_placeholders``: what the model input is for those images, its shape for
``shape_from_inputs``); the advice for it shows the file's sizes, not a guess of 1 that the
AIPP check then refuses.
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional, Tuple

import numpy as np

from .apply import _is_single_image, output_hw
from .config import AippConfig
from .emulation import _output_size
from .image_size import image_hw


def aipp_input_shape(config: AippConfig, model, input_shape=None, where: str = "input_shape"):
    """``input_shape`` with the AIPP inputs it leaves out completed from ``config`` (a dict
    {name: dims}), or ``input_shape`` as given when the file fixes nothing it does not. An AIPP
    input with a dimension the file does not fix either (the batch) raises the dynamic-shape
    error, its example the file's sizes with 1 for what is left."""
    from ..graph.onnx_graph import declared_shape, graph_inputs, load_model, parse_input_shape
    from ..graph.onnx_graph import resolve_input_shapes
    from ..graph.shape_advice import DynamicShapeError

    given = parse_input_shape(input_shape, where) or {}
    proto = load_model(model, weights=False)
    inputs = graph_inputs(proto)
    fixed: Dict[str, Tuple[Optional[int], ...]] = {}
    for op in config.ops:
        if op.rank >= len(inputs) or inputs[op.rank].name in given:
            continue  # no such input: the conversion names the file's line
        vi = inputs[op.rank]
        dims = declared_shape(vi)
        if len(dims) != 4 or None not in dims:
            continue  # not N x C x H x W (the conversion says so), or static already
        open_axes = [a for a, k in (("h", 2), ("w", 3))
                     if op.get("crop") and not op.get(f"crop_size_{a}") and dims[k] is None]
        if open_axes:  # the crop is the model input's size, which nothing gives (H109)
            shown = ", ".join("?" if d is None else str(d) for d in dims)
            raise op.error("crop", (
                f"true without {' and '.join(f'crop_size_{a}' for a in open_axes)} crops "
                f"the model input's height and width (as ATC does), and input {vi.name!r} of "
                f"the model leaves them dynamic ([{shown}]): give the size the model is "
                f"deployed at, as the conversion's input_shape (ascend_model(..., "
                f"input_shape=...), a YAML entry's input_shape:) or in the file "
                f"({', '.join(f'crop_size_{a}' for a in open_axes)})"))
        channels = op.channels
        h, w = (_output_size(op, axis)[0] for axis in ("h", "w"))
        filled = (dims[0], dims[1] or channels, dims[2] or h, dims[3] or w)
        if filled != dims:
            fixed[vi.name] = filled
            shape = vi.type.tensor_type.shape  # the copy declares what the file fixes
            for k, size in enumerate(filled):
                if size is not None and dims[k] is None:
                    shape.dim[k].Clear()
                    shape.dim[k].dim_value = int(size)
    if not fixed:
        return input_shape
    try:
        resolve_input_shapes(proto, given, where=where, source=model)
    except DynamicShapeError as exc:
        note = "; ".join(f"the AIPP file {config.shown} fixes C x H x W of {n!r}: "
                         f"{' x '.join('?' if d is None else str(d) for d in dims[1:])}"
                         for n, dims in fixed.items())
        raise DynamicShapeError(exc.where, f"{exc.what} ({note})", exc.example, exc.chosen,
                                exc.unranked, exc.n_dims, trial=exc._trial_call,  # tried on
                                reused=exc.reused, slots=exc.slots) from None  # the file
    out = dict(given)
    out.update({n: tuple(int(d) for d in dims) for n, dims in fixed.items()})
    return out


def aipp_placeholders(config: AippConfig, model, arrays: Mapping[str, object]) -> dict:
    """``arrays`` with each AIPP input's raw images replaced by a stand-in (zeros, not
    allocated) of the model input AIPP makes of them: N images, the file's channels, the output
    height and width (the file's, else what crop and padding make of the images' size). Raw
    images that AIPP cannot read stay as they are: the run names what is wrong with them."""
    from ..graph.onnx_graph import declared_shape, graph_inputs, input_dtype

    inputs = graph_inputs(model)
    out = dict(arrays)
    for op in config.ops:
        if op.rank >= len(inputs) or inputs[op.rank].name not in arrays:
            continue
        vi = inputs[op.rank]
        raw, dims = np.asarray(arrays[vi.name]), declared_shape(vi)
        if raw.dtype != np.uint8 or raw.ndim < 2 or len(dims) != 4:
            continue
        single = _is_single_image(op, raw)
        if not single and raw.shape[0] == 0:
            continue
        fixed = [_output_size(op, axis)[0] for axis in ("h", "w")]
        h, w = dims[2] or fixed[0], dims[3] or fixed[1]
        if h is None or w is None:  # the images' size through the crop and padding
            seen = output_hw(op.with_model_hw((dims[2], dims[3])), image_hw(op, raw))
            h, w = h or seen[0], w or seen[1]
        shape = (1 if single else raw.shape[0], dims[1] or op.channels, h, w)
        out[vi.name] = np.broadcast_to(np.zeros((), input_dtype(vi)), shape)
    return out

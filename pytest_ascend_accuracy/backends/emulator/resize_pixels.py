"""Which source pixels a nearest Resize takes: onnxruntime's (what the emulator and the golden
compute) against the ``ResizeNearestNeighborV2`` ATC builds (TensorFlow's definition, with the
flags every CANN parser found sets for the three settings ``atc_resize.SAFE`` lists).

``atc_resize`` warned of a "safe" setting wherever a scale gave a fractional size; a review
found 186 of 417 such cases computed alike (``align_corners`` never differs: ONNX computes it
from the sizes too). So the two index lists are computed and compared: onnxruntime's by running
the Resize alone on an input that numbers its pixels (exactly its own arithmetic), the
device's by TensorFlow's formulas (``CalculateResizeScale``, ``floor`` of ``o * s`` or of
``(o + 0.5) * s`` with ``half_pixel_centers``, ``roundf`` with ``align_corners``, in float32,
clamped). Only a 4-D input whose first two axes keep their size is looked at (the NCHW Resize
of a detector or a segmentation head); other cases are not compared and get no claim.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

#: the flags ATC's parsers set for each ``SAFE`` coordinate mode (atc_resize's docstring)
FLAGS = {"asymmetric": {}, "align_corners": {"align_corners": True},
         "pytorch_half_pixel": {"half_pixel_centers": True}}
#: pixels numbered exactly in float32
_MAX_PIXELS = 1 << 24


def device_indices(n_in: int, n_out: int, *, align_corners: bool = False,
                   half_pixel_centers: bool = False) -> np.ndarray:
    """The source index of each output position along one axis, as TensorFlow's
    ResizeNearestNeighbor (the op ATC builds) computes it."""
    f32 = np.float32
    scale = (f32(n_in - 1) / f32(n_out - 1) if align_corners and n_out > 1
             else f32(n_in) / f32(n_out))
    o = np.arange(n_out, dtype=f32)
    if half_pixel_centers:
        x = np.floor((o + f32(0.5)) * scale)
    elif align_corners:
        x = np.floor(o * scale + f32(0.5))  # roundf of a non-negative
    else:
        x = np.floor(o * scale)
    return np.clip(x.astype(np.int64), 0, n_in - 1)


def onnx_indices(node, consts, shape: Sequence[int], opset: int
                 ) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """(row indices, column indices) onnxruntime takes for ``node`` on an input of ``shape``
    (``[N, C, H, W]``), its ``scales``/``sizes`` from ``consts`` (name -> array); None where
    they are not constants or the pixels cannot be numbered exactly."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    h, w = int(shape[2]), int(shape[3])
    if h * w >= _MAX_PIXELS:
        return None
    inputs = list(node.input) + [""] * (4 - len(node.input))
    scales = consts.get(inputs[2]) if inputs[2] else None
    sizes = consts.get(inputs[3]) if inputs[3] else None
    if sizes is not None and len(sizes) == 4:
        given = [("sizes", np.array([1, 1, *np.asarray(sizes)[2:]], np.int64))]
        names = ["", "", "sizes"]
    elif scales is not None and len(scales) == 4:
        given = [("scales", np.array([1, 1, *np.asarray(scales)[2:]], np.float32))]
        names = ["", "scales"]
    else:
        return None
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    probe = helper.make_node("Resize", ["x", *names], ["y"], **attrs)
    graph = helper.make_graph([probe], "probe",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                             [1, 1, h, w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(a, n) for n, a in given])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 8)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    try:
        session = ort.InferenceSession(model.SerializeToString(), so,
                                       providers=["CPUExecutionProvider"])
        x = np.arange(h * w, dtype=np.float32).reshape(1, 1, h, w)
        y = session.run(None, {"x": x})[0].astype(np.int64)[0, 0]
    except Exception:  # onnxruntime refuses what the model's own run would too: no claim
        return None
    return y[:, 0] // w, y[0, :] % w


def differing_axis(node, consts, ins: Sequence[int], outs: Sequence[int], ctm: str,
                   opset: int) -> Optional[List]:
    """``[axis, onnx indices, device indices]`` of the first axis (2 or 3) where onnxruntime
    and the device take other source pixels, [] where they take the same, None where this
    cannot be told (see the module docstring)."""
    if len(ins) != 4 or len(outs) != 4 or list(ins[:2]) != list(outs[:2]):
        return None
    got = onnx_indices(node, consts, ins, opset)
    if got is None:
        return None
    for axis, onnx_idx in zip((2, 3), got):
        dev = device_indices(int(ins[axis]), int(outs[axis]), **FLAGS[ctm])
        if len(onnx_idx) != len(dev) or not np.array_equal(onnx_idx, dev):
            return [axis, onnx_idx.tolist(), dev.tolist()]
    return []


__all__ = ["FLAGS", "device_indices", "differing_axis", "onnx_indices"]

"""Whether the float32 model itself refuses inputs its converted run refused.

A test that runs the device before its golden (``om.run(inputs)`` first) got onnxruntime's
words under "emulator run of 'silero_vad' failed": an LSTM's ``initial_h`` of batch 2 beside an
``input`` of batch 1 (audit 32). Those inputs are wrong for the model, not for the conversion,
and the golden would refuse them the same way; the error blamed the emulated device. Where the
run is refused, the model file is asked once, on the same arrays: ``model_refusal`` gives
onnxruntime's float32 refusal in one line, or None where it runs them (the conversion's own
fault) or cannot be asked (no onnxruntime, no session, arrays not of the model's inputs, as an
AIPP conversion's raw images are)."""
from __future__ import annotations

import os
from typing import Mapping, Optional

import numpy as np


def model_refusal(path, feeds: Mapping[str, np.ndarray]) -> Optional[str]:
    """onnxruntime's refusal of ``feeds`` by the float32 model at ``path`` (``shape_trial``'s
    one line), or None (module doc)."""
    try:
        session = _session_for(path, feeds)
    except Exception:  # noqa: BLE001 - a model or session not at hand: nothing to tell
        return None
    if session is None:
        return None
    import onnxruntime

    quiet = onnxruntime.RunOptions()
    quiet.log_severity_level = 4  # (the refusal is said in the error, once)
    outputs = [o.name for o in session.get_outputs()]
    try:
        session.run(outputs, dict(feeds), quiet)
    except Exception as exc:  # noqa: BLE001 - the model's own refusal of these arrays
        from .shape_trial import refusal_line

        return refusal_line(str(exc))
    return None


def _session_for(path, feeds):
    """A float32 session of ``path`` where ``feeds`` name its inputs with their declared
    element types and ranks, else None."""
    import onnx

    from .onnx_graph import graph_inputs, input_dtype, session_options
    from .onnxruntime_version import require_onnxruntime

    proto = onnx.load(os.fspath(path), load_external_data=False)
    declared = {i.name: i for i in graph_inputs(proto)}
    if set(feeds) != set(declared):
        return None
    for name, array in feeds.items():
        vi = declared[name]
        dims = vi.type.tensor_type.shape.dim
        if np.asarray(array).dtype != input_dtype(vi) or (
                vi.type.tensor_type.HasField("shape") and len(dims) != np.ndim(array)):
            return None
    ort = require_onnxruntime()
    options = session_options()
    options.log_severity_level = 4
    return ort.InferenceSession(os.fspath(path), options, providers=["CPUExecutionProvider"])


__all__ = ["model_refusal"]

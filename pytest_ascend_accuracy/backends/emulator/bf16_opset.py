"""The emulator's bfloat16 modes need the model at ONNX opset 13 or later.

``allow_mix_precision_bf16`` and ``allow_fp32_to_bf16`` round values to bfloat16 with a pair of
``Cast`` nodes (``rounding.rounding_nodes``), and ``Cast`` takes bfloat16 from opset 13. In a
model of an earlier opset (PP-OCRv4 det and rec are opset 12, the PP-OCR mobile cls 11) every
emulated run failed in onnxruntime ("Type 'tensor(bfloat16)' of input parameter ... of operator
(Cast) ... is invalid", H103): a crash with no verdict. Real ATC converts such a model in these
modes; the emulator cannot, so it refuses at conversion with a command that converts the model
to opset 13 with onnx's own version converter, whose file both the golden and the emulated run
then take (the compare is of one model).
"""
from __future__ import annotations

import shlex
from pathlib import Path

from ...errors import ConfigError

#: precision modes the emulator rounds to bfloat16 (``rounding.unit_precision``)
BF16_MODES = frozenset({"allow_mix_precision_bf16", "allow_fp32_to_bf16"})
#: the first opset whose ``Cast`` takes bfloat16
CAST_BF16_OPSET = 13


def check_bf16_opset(model, mode, label: str) -> None:
    """A ``ConfigError`` where ``mode`` rounds to bfloat16 and ``model`` (a path or a
    ``ModelProto``) is of an opset whose ``Cast`` does not take it."""
    if mode.precision_mode not in BF16_MODES:
        return
    from ...graph.onnx_graph import load_model

    proto = model if hasattr(model, "graph") else load_model(model, weights=False)
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None or opset >= CAST_BF16_OPSET:
        return
    advice = "convert it to opset 13 with onnx's version converter and test the file it writes"
    if not hasattr(model, "graph"):  # (a shell command: quoted whole, whatever the path holds)
        src = Path(model)
        out = src.with_name(f"{src.stem}_opset13{src.suffix}")
        program = (f"import onnx; from onnx import version_converter; "
                   f"onnx.save(version_converter.convert_version(onnx.load({str(src)!r}), 13), "
                   f"{str(out)!r})")
        advice += f", {str(out)!r}: python -c {shlex.quote(program)}"
    raise ConfigError(f"precision_mode={mode.precision_mode}",
                      f"the emulator rounds to bfloat16 with Cast, which takes bfloat16 from "
                      f"ONNX opset {CAST_BF16_OPSET}; model {label!r} is opset {opset} (real ATC "
                      f"converts it; the emulator cannot): {advice}")


__all__ = ["BF16_MODES", "CAST_BF16_OPSET", "check_bf16_opset"]

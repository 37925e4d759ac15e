"""ONNX ``STFT`` and ``DFT``: signal ops no ATC ONNX parser plugin is found for.

CANN's ONNX parser converts an op only through a plugin registered for its
``ai.onnx::<opset>::<type>`` (``REGISTER_CUSTOM_OP(...).FrameworkType(ONNX).OriginOpType(...)``):
canndev's ``ops/built-in/framework/onnx_plugin`` (the mirror ``dengguojie/vue-element-admin``,
154 plugins) has none for ``STFT`` or ``DFT``, and the 2025 ``hicann/ops-math``, which holds an
``STFT`` kernel (``math/stft``: an aclnn API, an op proto and tiling), gives it no ``framework/``
folder, where the ops it parses from ONNX keep theirs (``math/arg_min/framework/
argmin_onnx_plugin.cpp``); no ``OriginOpType("ai.onnx::17::STFT")`` or ``::17::DFT`` occurs in
the code index searched (audit 33, 2026-12-07; a negative finding: no real ``atc`` run). ATC
then stops with ``E19010`` ("No parser is registered for Op [...]"), as for ``Loop``/``Scan``.

The emulator ran them in onnxruntime, and onnx_asr 0.12's ``kaldi.onnx`` and ``nemo80.onnx``
passed, a verdict on a model no NPU would get; at int16 scale the hint even kept the STFT in
float32. Such a model is refused at conversion (``signal_refusal``), pointing to the export a
device runs: the transform as a Conv over frames with the DFT's cos/sin rows as its weights
(onnx_asr ships such ``*_conv.onnx`` twins of its pre-processors).
"""
from __future__ import annotations

from typing import List, Tuple

#: ONNX signal ops ATC's ONNX parser has no plugin for (module doc)
UNPARSED_SIGNAL_OPS = frozenset({"STFT", "DFT"})


def signal_ops(graph) -> List[Tuple[str, str, str]]:
    """``(node name as ATC names it, op type, where)`` of every ``STFT``/``DFT`` of ``graph``,
    the branches of its ``If`` nodes included."""
    from .control_flow import typed_ops

    return typed_ops(graph, UNPARSED_SIGNAL_OPS)


def signal_refusal(label: str, model) -> str:
    """Why ``model`` (shown as ``label``) cannot be converted: its STFT/DFT ops; "" if none."""
    from .control_flow import listed_ops, onnx_opset

    found = signal_ops(model.graph)
    if not found:
        return ""
    name, op, _ = found[0]
    return (f"model {label!r} has {len(found)} STFT/DFT operator{'s' if len(found) != 1 else ''}"
            f": {listed_ops(found)}. No ATC ONNX parser plugin is registered for them (CANN's ONNX "
            f"op plugins have none; ATC stops with E19010 \"No parser is registered for Op "
            f"[{name}, optype [ai.onnx::{onnx_opset(model)}::{op}]]\"), so the model cannot be "
            f"converted; export the transform as a Conv over frames whose weights are the "
            f"DFT's cos and sin rows (with its window applied), as a device runs it, or check "
            f"the parts before and after it as models of their own (onnx.utils.extract_model)")


__all__ = ["UNPARSED_SIGNAL_OPS", "signal_ops", "signal_refusal"]

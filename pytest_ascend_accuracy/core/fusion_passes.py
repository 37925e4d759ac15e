"""What CANN documents of the fusion passes the emulator imitates: where each is supported.

These are facts about ATC, kept apart from the emulator (``backends.emulator.fusion``) so that
the report layer can say them too (``report.fused_overflow``). The graph fusion and UB fusion
reference ("graphubfusionref") lists, per pass, its restrictions and the products it is
supported on. The products cannot be decided by the emulator (it imitates no chip); the graph
conditions are checked where it matches (``backends.emulator.fusion_limits``).

Pages read (hiascend.com, ``.../maintenref/graphubfusionref/<page>.html``):

- ``LayerNormFusionPass``, atlasrr_30_0010 (CANN 8.1.RC1, 8.5, 9.0): Atlas A2 training /
  Atlas A2 inference products (8.1.RC1: "Atlas 800I A2"; the 8.1.RC1alpha001 page also lists
  the Atlas inference series). For ONNX models canndev's ``LayerNormONNXFusionPass``
  (``layer_norm_onnx_fusion_pass.cpp``) matches the ONNX spelling (ReduceMean, Sub, Pow,
  ReduceMean, Add, Sqrt, RealDiv[, Mul, Add]); the 2025 ops-nn page of that pass lists the
  Ascend 950 only.
- ``GeluFusionPass``, atlasrr_30_0011 (8.2.RC1 .. 9.0): Atlas A2 training / A2 inference.
- ``ConvBatchnormFusionPass``, atlasrr_30_0021 (7.0 .. 9.0): Atlas inference series, Atlas
  200I/500 A2 inference, Atlas training series (8.1.RC1 also Atlas 200/300/500 inference).
- ``MatMulBiasAddFusionPass``, atlasrr_30_0028 (8.1.RC1 .. 9.0): Atlas A2 and A3 training /
  inference (9.0 also the Atlas 350); "if BiasAdd/Add is computed in FP16 before fusion, bias
  is accumulated inside matmul in FP32 after fusion".
- UB fusion (``TbeCommonRules0FusionPass``, ``ATbeMatmulElemwiseFusionPass``): decided per
  chip when ATC builds the kernels; ``--fusion_switch_file`` (atlasatcparam_16_0053, 9.0):
  "Atlas 350 accelerator cards do not support UB fusion".
"""
from __future__ import annotations

from typing import Dict

#: rule -> (the products its page lists, the page)
DOCUMENTED_FOR: Dict[str, str] = {
    "LayerNormFusionPass": "Atlas A2 training/inference products only, graph fusion reference "
                           "atlasrr_30_0010, CANN 8.1-9.0",
    "GeluFusionPass": "Atlas A2 training/inference products only, graph fusion reference "
                      "atlasrr_30_0011, CANN 8.2-9.0",
    "ConvBatchnormFusionPass": "the Atlas inference and training series and Atlas 200I/500 A2 "
                               "only, graph fusion reference atlasrr_30_0021, CANN 7.0-9.0",
    "MatMulBiasAddFusionPass": "Atlas A2/A3 training/inference products only, graph fusion "
                               "reference atlasrr_30_0028, CANN 8.1-9.0",
    "TbeCommonRules0FusionPass": "UB fusion, decided per chip as ATC builds the kernels; not "
                                 "on the Atlas 350, --fusion_switch_file atlasatcparam_16_0053",
    "ATbeMatmulElemwiseFusionPass": "UB fusion, decided per chip as ATC builds the kernels; not "
                                    "on the Atlas 350, --fusion_switch_file "
                                    "atlasatcparam_16_0053",
}


def documented_for(rule: str) -> str:
    """Where ``rule`` is documented to apply, as a phrase ("" for a rule not listed)."""
    return DOCUMENTED_FOR.get(rule, "")


__all__ = ["DOCUMENTED_FOR", "documented_for"]

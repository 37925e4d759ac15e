"""What CANN documents of the fusion passes the emulator imitates: where each is supported.

These are facts about ATC, kept apart from the emulator (``backends.emulator.fusion``) so that
the report layer can say them too (``report.fused_overflow``). The graph fusion and UB fusion
reference ("graphubfusionref") lists, per pass, its restrictions and the products it is
supported on. The products cannot be decided by the emulator (it imitates no chip); the graph
conditions are checked where it matches (``backends.emulator.fusion_limits``).

Pages read (hiascend.com, ``.../maintenref/graphubfusionref/<page>.html``):

- ``LayerNormFusionPass``, atlasrr_30_0010 (CANN 8.1.RC1, 8.5, 9.0): Atlas A2 training /
  Atlas A2 inference products (8.1.RC1: "Atlas 800I A2"; the 8.1.RC1alpha001 page also lists
  the Atlas inference series). That page draws the TensorFlow spelling (ReduceMean,
  SquaredDifference): it is not the pass that fuses an ONNX model's LayerNorm.
- ``LayerNormONNXFusionPass``: the pass that fuses the ONNX spelling (ReduceMean, Sub, Pow,
  ReduceMean, Add, Sqrt, Div[, Mul, Add]), so the one an ONNX model's LayerNorm meets. canndev's
  ``ops/built-in/fusion_pass/graph_fusion/ai_core/layer_norm_onnx_fusion_pass.cpp`` checks no
  product; the 2025 ops-nn version (gitcode.com/cann/ops-nn, ``norm/layer_norm``, merge request
  !9915 "迁移 LayerNormONNXFusionPass 与 LayerNormONNXMULFusionPass"; its page
  ``LayerNormONNXFusionPass.md``, 支持的型号) lists "Ascend 950PR&950DT" only, and its unit
  test sets platform 3510 (NpuArch). The emulator's rule keeps the name LayerNormFusionPass
  (``Mode(fusion_rules_off=("LayerNormFusionPass",))``); the warning names the ONNX pass
  (``atc_pass``), and the fusion switch file switches both off (``switch_names``: the file
  takes any rule name of the graph fusion reference, atlasatcparam_16_0053; an ONNX pass's
  name in it: e.g. ``"GraphFusion": {"MDCLayerNormONNXFusionPass": "off"}`` in SenseTime
  nart's deploy configs).
- ``GeluFusionPass``, atlasrr_30_0011 (8.2.RC1 .. 9.0): Atlas A2 training / A2 inference. The
  page fuses "Pow、Mul、Add、Tanh等" (the tanh approximation); the emulator's rule matches the
  erf form (Div, Erf, Add, Mul, Mul), which that page does not draw: its product list is said
  of the pass, not of the erf form.
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

from typing import Dict, Tuple

#: rule -> (the products its page lists, the page)
DOCUMENTED_FOR: Dict[str, str] = {
    "LayerNormFusionPass": "Atlas A2 training/inference products only (its TensorFlow "
                           "spelling), graph fusion reference atlasrr_30_0010, CANN 8.1-9.0",
    "LayerNormONNXFusionPass": "any product in canndev's layer_norm_onnx_fusion_pass.cpp (it "
                               "checks none), the Ascend 950PR/950DT only in its 2025 version "
                               "(cann/ops-nn norm/layer_norm, LayerNormONNXFusionPass.md)",
    "GeluFusionPass": "Atlas A2 training/inference products only, graph fusion reference "
                      "atlasrr_30_0011, CANN 8.2-9.0 (a page drawing the tanh form)",
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

#: the emulator's rule -> the ATC pass that fuses the same pattern of an ONNX model
ONNX_PASS: Dict[str, str] = {"LayerNormFusionPass": "LayerNormONNXFusionPass"}
#: ATC's name of a pass -> the emulator's rule imitating it (``fusion_rules_off`` takes both)
EMULATOR_RULE: Dict[str, str] = {v: k for k, v in ONNX_PASS.items()}


def atc_pass(rule: str) -> str:
    """The ATC pass that fuses an ONNX model where the emulator's ``rule`` does."""
    return ONNX_PASS.get(rule, rule)


def switch_names(rule: str) -> Tuple[str, ...]:
    """The names a fusion switch file turns off for the ``fusion_rules_off`` entry ``rule``
    (its name, without a section): LayerNormFusionPass and LayerNormONNXFusionPass together,
    since ATC fuses an ONNX LayerNorm by the latter (``Mode(fusion_rules_off=
    ("LayerNormFusionPass",))`` left it fused on a device while the emulator unfused it)."""
    rule = EMULATOR_RULE.get(rule, rule)
    return (rule,) + ((ONNX_PASS[rule],) if rule in ONNX_PASS else ())


def documented_for(rule: str) -> str:
    """Where ``rule`` is documented to apply, as a phrase ("" for a rule not listed)."""
    return DOCUMENTED_FOR.get(rule, "")


__all__ = ["DOCUMENTED_FOR", "EMULATOR_RULE", "ONNX_PASS", "atc_pass", "documented_for",
           "switch_names"]

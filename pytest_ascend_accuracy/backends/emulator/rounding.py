"""What precision each operator runs in under a conversion mode, and how values are rounded.

The emulator's model of ATC + NPU numerics (design notes, "The emulator"):

- an operator's *precision* is one of
  ``fp16``   inputs and outputs rounded to float16, arithmetic inside in float32 (the Cube
             unit's fp16-in / fp32-accumulate; vector ops are modelled the same way);
  ``fp16in`` inputs rounded to float16, output kept float32 (``cube_fp16in_fp32out``);
  ``bf16``   inputs and outputs rounded to bfloat16 (``*_bf16`` modes);
  ``fp32``   nothing rounded.
- ``force_fp16`` (ATC default): every operator fp16.
- ``allow_fp32_to_fp16``: cube operators (Conv, ConvTranspose, MatMul, Gemm and fused groups
  anchored on them) fp16, vector operators fp32.
- ``force_fp32`` / ``cube_fp16in_fp32out``: cube operators fp16in, vector operators fp32.
- ``must_keep_origin_dtype``: everything fp32 (keep_dtype is ignored, as ATC ignores it).
- ``allow_mix_precision`` / ``allow_mix_precision_fp16``: a small black list (exp/log/pow,
  reductions, softmax, normalisations) fp32, everything else fp16; ``allow_mix_precision_bf16``
  the same with bf16; ``allow_fp32_to_bf16``: cube ops bf16, vector ops fp32. ATC's real lists
  live in per-SoC op-info files; this is an approximation and says so.
- ``keep_dtype`` entries (op names or ``OpType::X`` with the ONNX or the Ascend type) run fp32,
  but a kept cube op (or a unit anchored on one) fp16in on a chip without float32 cube kernels
  (``--soc-version``, below); a fused unit is kept when any of its members is kept. That is
  ATC's rule for a GraphFusion op, which inherits ``_keep_dtype`` from any member; a UBFusion
  is made after each node's dtype is judged, so ``fusion.build_units`` never UB-fuses a kept
  unit with one not kept (a kept Relu leaves its MatMul fp16: docs/formats.md, "keep_dtype and
  fusion").

Cube ops and the chip (audit 36 B F1: a kept Conv ran fp32 on every chip, though high precision
and force_fp32 never let a cube op take float32 inputs). CANN's conv2d API (aicpuopapi
atlaste_07_0050, CANN 8.3.RC1.alpha002 and 8.5.0) gives the feature map and weight dtypes per
product: float16 only on Atlas 200/300/500 inference, Atlas training (910) and Atlas inference
(310P: Atlas 300I/300V) products; float16, float32 and bfloat16 on Atlas 200I/500 A2, Atlas A2
and A3. aclnnMatmul (aolapi aclnnMatmul.md, 8.0.0.alpha001): the Cube unit of Atlas training and
inference products takes no FLOAT inputs (cubeMathType ALLOW_FP32_DOWN_PRECISION casts them to
float16), as cann/ops-nn pull 5481 repeats ("Cube单元不支持FLOAT32计算"). Float16 inputs with a
float32 output exist there: conv2d's mad_dtype defaults to float32 (atlaste_07_0050, 8.0.RC2),
ConvCastFusionPass (graphubfusionref atlasrr_30_0054) fuses a float16 Conv2D with a Cast to
float32 on those products. And --keep_dtype (atlasatcparam_16_0074): "If the computation
precision is not supported by the Ascend AI Processor, the system automatically uses the high
precision supported by the operators". So ``cube_fp32_kernels(soc_version)``: a kept cube op runs
fp32 with no SoC (the emulator's numbers before the SoC was read) or an A2/A3/200I-500 A2 one
(``FLOAT32_CUBE_PREFIXES``), fp16in with an Atlas inference/training one (``FLOAT16_CUBE_SOCS``).
The names are CANN's (RecSDK's cust_op/ascendc_op/config/transform.json maps each SoC to its
family: Ascend910B with no digit is an Ascend910 variant, not a 910B). ``force_fp32`` /
``cube_fp16in_fp32out`` keep cube ops fp16in on every chip: --precision_mode
(atlasatcparam_16_0067/0069) has a cube op prefer float16 inputs with a float32 output.

Rounding to float16 follows IEEE round-to-nearest-even with subnormals (as numpy and
onnxruntime's Cast do); values past 65504 become +-inf with ``overflow="inf"`` (newer chips) or
+-65504 with ``overflow="saturate"`` (older chips' saturation mode; NaN stays NaN).
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterable, Iterator, Optional, Tuple

import numpy as np

from ...errors import ConfigError
from ...core.modes import Mode
from .optypes import node_parser_type, parser_type

from ...core.fp16 import FP16_MAX  # noqa: E402  (one definition, in core)
OVERFLOW_POLICIES = ("inf", "saturate")
PRECISIONS = ("fp16", "fp16in", "bf16", "fp32")

CUBE_OPS = frozenset({"Conv", "ConvTranspose", "MatMul", "Gemm"})
#: ops allow_mix_precision keeps in fp32 (black list approximation)
MIX_BLACK_LIST = frozenset({"Exp", "Log", "Pow", "ReduceMean", "ReduceSum", "ReduceSumSquare",
                            "ReduceL2", "ReduceLogSumExp", "Softmax", "LogSoftmax",
                            "LayerNormalization", "LayerNorm", "BatchNormalization",
                            "InstanceNormalization", "Sqrt", "Reciprocal", "Div", "Erf"})
#: ops whose outputs are values (or selections) of their inputs: when the inputs are already
#: representable in the op's precision, so are the outputs, and no output rounding is needed
VALUE_PRESERVING = frozenset({
    "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split", "Slice",
    "Gather", "GatherElements", "GatherND", "Tile", "Expand", "Identity", "MaxPool",
    "GlobalMaxPool", "Relu", "ReduceMax", "ReduceMin", "Max", "Min", "Neg", "Abs", "Where",
    "DepthToSpace", "SpaceToDepth", "Pad", "Sign", "Floor", "Ceil", "Round", "TopK",
})


#: SoC name prefixes (ATC's --soc_version) of chips with float32 cube kernels: Atlas A2
#: (Ascend910B1-B4, B2C, B4-1), A3 (Ascend910_93xx), 200I/500 A2 (Ascend310B*) and Atlas 350
#: (Ascend950PR/DT: CANN's ConvolutionForward page lists FLOAT for the 950 series) products;
#: by family, as CANN's RecSDK ``transform.json`` maps SoC names (a review: exact names refused
#: Ascend950PR and Ascend910_9363, real SoCs an ini shared with device runs names)
FLOAT32_CUBE_PREFIXES = ("Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4",
                         "Ascend910_93", "Ascend310B", "Ascend950")
#: SoC names, and prefixes ending in ``*``, of chips whose cube unit takes float16 only: Atlas
#: 200/300/500 inference (Ascend310), Atlas inference (Ascend310P*: Atlas 300I/300V) and Atlas
#: training (Ascend910, 910A, 910B with no digit, 910ProA/ProB/PremiumA) products
FLOAT16_CUBE_SOCS = ("Ascend310", "Ascend310P*", "Ascend910", "Ascend910A", "Ascend910B",
                     "Ascend910ProA", "Ascend910ProB", "Ascend910PremiumA")
#: the families, as an unknown name's error lists them
SOC_FAMILIES = ("float32 cube kernels: Ascend910B1-B4 (Atlas A2), Ascend910_93xx (A3), "
                "Ascend310B* (Atlas 200I/500 A2), Ascend950* (Atlas 350); float16 only: "
                "Ascend310, Ascend310P* (Atlas 300I/300V), Ascend910/910A/910B/910ProA/910ProB/"
                "910PremiumA (Atlas training)")
_KNOWN = ("Ascend910B1", "Ascend910B2", "Ascend910B2C", "Ascend910B3", "Ascend910B4",
          "Ascend910_9391", "Ascend910_9392", "Ascend310B1", "Ascend950PR", "Ascend950DT",
          "Ascend310", "Ascend310P1", "Ascend310P3", "Ascend910", "Ascend910A", "Ascend910B",
          "Ascend910ProA", "Ascend910ProB", "Ascend910PremiumA")


def _float16_only(soc: str) -> bool:
    return any(soc == n or (n.endswith("*") and soc.startswith(n[:-1]))
               for n in FLOAT16_CUBE_SOCS)


def cube_fp32_kernels(soc_version: Optional[str], where: str = "--soc-version") -> bool:
    """Whether a kept cube op computes from float32 inputs on ``soc_version``: True with None
    (no chip named) or a chip with float32 cube kernels, False on one whose cube unit takes
    float16 only; an unknown name is a ``ConfigError`` of ``where`` listing the families."""
    if soc_version is None or str(soc_version).startswith(FLOAT32_CUBE_PREFIXES):
        return True
    if _float16_only(str(soc_version)):
        return False
    import difflib

    close = difflib.get_close_matches(str(soc_version), _KNOWN, 3)
    raise ConfigError(where, f"unknown SoC {soc_version!r} for the emulator"
                             + (f" (closest: {', '.join(close)})" if close else "")
                             + f"; it knows {SOC_FAMILIES}; leave it out to model a chip with "
                               f"float32 cube kernels")


def cube_kernels_label(soc_version: Optional[str]) -> str:
    """What a baseline and a cache key record of the chip: ``cube-fp16`` for a float16-only one,
    else "": no SoC and an A2/A3 one compute alike, so they share a conversion and a
    baseline, as two names of one class do (a review)."""
    return "" if cube_fp32_kernels(soc_version) else "cube-fp16"


#: whether the conversion being built models float32 cube kernels (``float32_cube``): set by the
#: backend around ``rewrite.emulate_graph``, read by ``unit_precision``
_CUBE_FP32: ContextVar = ContextVar("cube_fp32", default=True)


@contextmanager
def float32_cube(on: bool) -> Iterator[None]:
    """Within it, ``unit_precision`` models a chip with (``on``) or without float32 cube kernels."""
    token = _CUBE_FP32.set(bool(on))
    try:
        yield
    finally:
        _CUBE_FP32.reset(token)


def kept_precision(cube: bool, cube_fp32: Optional[bool] = None) -> str:
    """The precision of a unit keep_dtype keeps: fp32, but a cube op's fp16in where the chip has
    no float32 cube kernel (``cube_fp32`` False; None: the current ``float32_cube`` setting)."""
    fp32 = _CUBE_FP32.get() if cube_fp32 is None else cube_fp32
    return "fp16in" if cube and not fp32 else "fp32"


def check_overflow(overflow: str) -> str:
    if overflow not in OVERFLOW_POLICIES:
        raise ConfigError("overflow", f"unknown overflow policy {overflow!r}; known: "
                                      f"{', '.join(OVERFLOW_POLICIES)}")
    return overflow


def unit_precision(mode: Mode, *, anchor_type: str, member_names: Iterable[str],
                   member_types: Iterable[str],
                   keeps: Optional[Callable[[str, str], bool]] = None,
                   cube_fp32: Optional[bool] = None) -> str:
    """Precision of one executed unit (a single op or a fused group) under ``mode``;
    ``keeps(name, onnx_type)``: whether keep_dtype keeps a member (``Mode.keeps_fp32``);
    ``cube_fp32``: the chip has float32 cube kernels (None: the ``float32_cube`` setting)."""
    names = list(member_names)
    types = list(member_types)
    pm = mode.precision_mode
    if pm == "must_keep_origin_dtype" or types == ["If"]:
        # an If computes nothing: its branch ops round their own outputs (branch_rounding);
        # rounding its outputs again made a branch op kept in float32 overflow there (a review)
        return "fp32"
    cube = anchor_type in CUBE_OPS
    for name, typ in zip(names, types):
        # by the parser's type, as ATC: never a fused op's; any member: UB units are all kept
        # or none (build_units)
        if (keeps or mode.keeps_fp32)(name, typ):
            return kept_precision(cube, cube_fp32)
    if pm == "force_fp16":
        return "fp16"
    if pm == "allow_fp32_to_fp16":
        return "fp16" if cube else "fp32"
    if pm in ("force_fp32", "cube_fp16in_fp32out"):
        return "fp16in" if cube else "fp32"
    if pm in ("allow_mix_precision", "allow_mix_precision_fp16", "allow_mix_precision_bf16"):
        low = "bf16" if pm.endswith("bf16") else "fp16"
        return "fp32" if any(t in MIX_BLACK_LIST for t in types + [anchor_type]) else low
    if pm == "allow_fp32_to_bf16":
        return "bf16" if cube else "fp32"
    return "fp16"  # unknown future modes: the ATC default


def kept_by_parser_type(mode: Mode, nodes) -> Callable[[str, str], bool]:
    """``mode.keeps_fp32`` by the type ATC's parser gives each of ``nodes``: where that type
    depends on an attribute (``core.ascend_optypes.MODE_TYPES``: a nearest Resize is
    ``ResizeNearestNeighborV2``), ``OpType::`` entries match that type, as on ATC."""
    moded = {n.name: node_parser_type(n) for n in nodes
             if node_parser_type(n) != parser_type(n.op_type)}
    return lambda name, typ: mode.keeps_fp32(name, moded.get(name, typ))


def rounds_inputs(precision: str) -> Optional[str]:
    """The rounding kind applied to a unit's float inputs (None: not rounded)."""
    return {"fp16": "fp16", "fp16in": "fp16", "bf16": "bf16"}.get(precision)


def rounds_outputs(precision: str) -> Optional[str]:
    return {"fp16": "fp16", "bf16": "bf16"}.get(precision)


# -- numpy rounding (initializers, tests) ------------------------------------------------------
def round_fp16(values: np.ndarray, overflow: str = "inf") -> np.ndarray:
    """float32 values rounded to float16 and back (the value an fp16 op sees)."""
    x = np.asarray(values, dtype=np.float32)
    if overflow == "saturate":
        x = np.clip(x, -FP16_MAX, FP16_MAX)  # NaN stays NaN
    with np.errstate(over="ignore"):
        return x.astype(np.float16).astype(np.float32)


def round_bf16(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (nearest even) and back; NaN stays NaN."""
    x = np.ascontiguousarray(values, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).astype(np.uint32)
    out = rounded.view(np.float32).reshape(x.shape)
    return np.where(np.isnan(x), x, out)


def round_array(values: np.ndarray, kind: str, overflow: str = "inf") -> np.ndarray:
    return round_fp16(values, overflow) if kind == "fp16" else round_bf16(values)


# -- graph nodes ---------------------------------------------------------------------------
def rounding_nodes(src: str, dst: str, kind: str, overflow: str, *, prefix: str,
                   half_name: Optional[str] = None, bounds: Optional[Tuple[str, str]] = None):
    """ONNX nodes that round tensor ``src`` into ``dst`` (float32 holding rounded values).

    For fp16 the float16 tensor in between is named ``half_name`` (what dumps fetch). With
    ``overflow="saturate"`` values are first clamped to +-65504 with Min/Max (initializer names
    ``bounds`` = (low, high)); Min/Max keep NaN, as the saturation mode is modelled."""
    from onnx import TensorProto, helper

    nodes = []
    cur = src
    if kind == "fp16" and overflow == "saturate":
        lo, hi = bounds
        nodes.append(helper.make_node("Min", [cur, hi], [f"{dst}__sat_hi"], name=f"{prefix}/sat_hi"))
        nodes.append(helper.make_node("Max", [f"{dst}__sat_hi", lo], [f"{dst}__sat"], name=f"{prefix}/sat_lo"))
        cur = f"{dst}__sat"
    low_type = TensorProto.FLOAT16 if kind == "fp16" else TensorProto.BFLOAT16
    mid = half_name or f"{dst}__{kind}"
    nodes.append(helper.make_node("Cast", [cur], [mid], name=f"{prefix}/to_{kind}", to=low_type))
    nodes.append(helper.make_node("Cast", [mid], [dst], name=f"{prefix}/to_fp32", to=TensorProto.FLOAT))
    return nodes

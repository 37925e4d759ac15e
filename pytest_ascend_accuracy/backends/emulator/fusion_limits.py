"""The graph conditions under which ATC's fusion passes fuse, as the emulator checks them.

``fusion.py`` matches each pattern; the functions here say whether the matched nodes meet the
conditions CANN documents for the pass (a pattern ATC would not fuse is not fused here either,
so its inner values round as separate ops do). Only graph conditions are checked: which chip
runs the pass is not known to the emulator (``core.fusion_passes`` lists the products, and a
check says where a fused op hid a value past float16's range: ``report.fused_overflow``).

LayerNorm (``LayerNormFusionPass``). ATC's ONNX parser gives the pass ReduceMeanD, Sub, Pow,
ReduceMeanD, Add, Sqrt, RealDiv[, Mul, Add]. Sources:

- graph fusion reference atlasrr_30_0010 (CANN 8.1.RC1, 8.5, 9.0; hiascend.com
  ``.../maintenref/graphubfusionref/atlasrr_30_0010.html``): no dynamic shapes; both
  ReduceMeans' axes equal and ending at the input's last dimension, their ``keep_dims`` true;
  Sub's first input the LayerNorm's input, its second ReduceMean_0's output (not swapped);
  FLOAT32/FLOAT16; "Const_0 must be 1-D of length 1", Const_1/Const_2 (gamma, beta) 1-D of the
  last dimension's length. That page draws the TensorFlow spelling (SquaredDifference);
- canndev ``ops/built-in/fusion_pass/graph_fusion/ai_core/layer_norm_onnx_fusion_pass.cpp``
  (``LayerNormONNXFusionPass``, the ONNX spelling; ``CheckValue``, ``GetScalarFromOp``,
  ``CheckShape``, ``CheckEdges``), and the 2025 ops-nn page of that pass: ReduceMean_0's
  ``keep_dims`` true (else "not change"); Pow's exponent and the epsilon constants of
  FLOAT32/FLOAT16, a scalar or of shape [1] ("the const input ... must be scalar"), the
  exponent 2 and epsilon at most 0.1; the axes a non-empty run of consecutive axes ending at
  the last; gamma and beta constants of as many dimensions as axes are normalised (a gamma of
  another rank: "not change" for the pattern with them; the pattern without them, Div as its
  exit, still fuses); only Pow squares here; every member's output used inside the group
  only. The 2025 page: "涉及第0维时应使用对应的负轴表示，不使用值为0的轴" (axis 0 is written
  as its negative axis): canndev normalises ``axes[i] > 0 ? a : a + n``, so an axis written 0
  becomes n, out of range, and the pattern is left apart; here too (``layernorm_core_ok``).

Squares written otherwise. The 2025 pass accepts Square as well as Pow(2), and canndev rewrites
``Mul(x, x)`` (``MulSquareFusionPass``) and ``Pow(x, 2)`` (``Pow2SquareFusionPass``) into
Square, and fuses a ``Mul(x, x)`` LayerNorm with two Subs by ``LayerNormONNXMULFusionPass``
(into LayerNormV3): whether such a graph fuses on a device depends on the order of those passes,
which the emulator does not model. It fuses the Pow(2) spelling only (a ``Mul(x, x)`` LayerNorm
runs unfused, each op rounded: the stricter of the two outcomes).

Float16 constants. canndev's ``GetScalarFromOp`` accepts a FLOAT16 exponent or epsilon but
reads its bytes as a ``float`` (``reinterpret_cast<float*>``), so a float16 model's Pow(2) is
not 2.0 there and that pass leaves it apart; the 2025 pass reads float16 as float16 and fuses
it. The emulator follows the 2025 pass (a float16 model's LayerNorm is fused).

The eps of a 0-D ``Constant`` (openWakeWord's hey_jarvis, torch's export of ``x.pow(2).mean()``
... ``+ 1e-5``) meets canndev's ONNX pass ("scalar or [1]") though the reference page asks a 1-D
Const_0: that model is fused here, and ``report.fused_overflow`` says what a pass then proves.
Not checked: the input's last dimension (the emulator's plan carries ranks, not shapes), and a
gamma of the right rank whose dims broadcast (a [1] gamma under a 768-wide input).
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

#: epsilon above this is not a LayerNorm's (canndev: "should be close to 0, not change")
MAX_EPSILON = 0.1
_FLOATS = (np.float32, np.float16)


def scalar_const(g, name: str) -> Optional[float]:
    """The value of constant ``name`` where it is a float32/float16 scalar or of shape [1]
    (``GetScalarFromOp``), else None."""
    c = g.const(name)
    if c is None or c.dtype.type not in _FLOATS or c.shape not in ((), (1,)):
        return None
    return float(c.reshape(-1)[0])


def _attr(node, name: str, default=None):
    for a in node.attribute:
        if a.name == name:
            from onnx import helper

            return helper.get_attribute_value(a)
    return default


def reduce_axes(g, node, rank: Optional[int]) -> Optional[Tuple[int, ...]]:
    """The axes ``node`` (a ReduceMean) reduces, non-negative where ``rank`` is known, or None
    where they are not constant (opset 18's ``axes`` input from another op) or absent."""
    axes = _attr(node, "axes")
    if axes is None and len(node.input) > 1 and node.input[1]:
        c = g.const(node.input[1])
        axes = None if c is None else [int(v) for v in np.asarray(c).reshape(-1)]
    if not axes:
        return None
    if rank is None:
        return tuple(int(a) for a in axes)
    return tuple(int(a) + rank if int(a) < 0 else int(a) for a in axes)


def layernorm_core_ok(g, rm1, rm2, square, add, x_rank: Optional[int]) -> Optional[Tuple[int, ...]]:
    """The normalised axes where ReduceMean ``rm1``, ``rm2``, the squaring ``square`` and the
    epsilon ``add`` meet the pass's conditions (module docstring), else None."""
    if square.op_type != "Pow" or scalar_const(g, square.input[1]) != 2.0:
        return None
    if x_rank is not None and x_rank < 1:
        return None
    if any(int(_attr(rm, "keepdims", 1)) != 1 for rm in (rm1, rm2)):
        return None
    axes, axes2 = reduce_axes(g, rm1, x_rank), reduce_axes(g, rm2, x_rank)
    if axes is None or axes != axes2 or 0 in reduce_axes(g, rm1, None):
        return None  # (ReduceMean_0's axis 0 written as 0: refused, module docstring)
    if x_rank is not None and (list(axes) != list(range(axes[0], x_rank)) or axes[0] < 0):
        return None  # consecutive, increasing, ending at the last axis
    eps_name = next((t for t in add.input if g.const(t) is not None), None)
    eps = None if eps_name is None else scalar_const(g, eps_name)
    if eps is None or eps > MAX_EPSILON:
        return None
    return axes


def affine_ok(g, node, produced: str, n_axes: int) -> bool:
    """Whether ``node`` (the Mul by gamma or the Add of beta after the normalisation) takes
    ``produced`` and a float constant of ``n_axes`` dimensions (``CheckShape``)."""
    if produced not in node.input:
        return False
    other = [t for t in node.input if t != produced]
    c = g.const(other[0]) if len(other) == 1 else None
    return c is not None and c.dtype.type in _FLOATS and c.ndim == n_axes


def matmul_bias_ok(bias: np.ndarray, weight: Optional[np.ndarray]) -> bool:
    """``MatMulBiasAddFusionPass`` (graph fusion reference atlasrr_30_0028, CANN 8.1.RC1 ..
    9.0): "one of the two inputs of the add operator must have a dimension of 1", the bias's
    length that of the output's last dimension, "broadcast is not supported". A 1-D bias, as
    long as the constant weight's last dimension where it is constant."""
    if bias.ndim != 1:
        return False
    return weight is None or weight.ndim < 1 or bias.shape[0] == weight.shape[-1]


__all__ = ["MAX_EPSILON", "affine_ok", "layernorm_core_ok", "matmul_bias_ok", "reduce_axes",
           "scalar_const"]

"""Which emulator numerics a converted model's numbers are those of (what a baseline records).

``backend.EMULATOR_NUMERICS`` is bumped when a conversion can compute other numbers. Some bumps
change only models that have what they changed: 10 rounds the ops inside an If kept as one
operator, which a model without such an If never had. A baseline records the numerics of its own
model, so an upgrade says "rebaseline required" only where numbers really moved (an upgrade
trial: bump 10 made every emulator baseline "rebaseline required", If or not, with op lines
byte for byte the same after the regen, and machines on two releases rewrote each other's files).

The versions (``backend.EMULATOR_NUMERICS``), as that constant's comment had them: a baseline
recorded the format itself, so a format bump that changed no number made every emulator
baseline "rebaseline required" on upgrade, and machines on two releases rewrote each other's
files (a trial). 9: format 9 did change numbers, a review found: OpType::Resize no longer keeps
a nearest Resize in float32 (its type is ResizeNearestNeighborV2), so a model with both kinds
computes that op in float16 now; 10: the ops inside an If kept as one operator run in float16
(they ran in float32): a model without such an If records 9 still; 11: a model computing in
float16 gets each float16 op's output rounded to float16 (onnxruntime's CPU carried float32
between them); 12: an If branch's constants reach ops kept in float32 unrounded; 13: a fusion
pattern left unfused by the conditions CANN documents for its pass (``fusion_limits``).
"""
from __future__ import annotations

from typing import Callable, Dict, Mapping, Optional


def _kept_if(plan_info: Mapping) -> bool:
    graph = plan_info.get("graph") or {}
    return bool(graph.get("kept_ifs")) or any(
        len(op) > 1 and op[1] == "If" for op in graph.get("subgraph_ops") or ())


def _float16_model(plan_info: Mapping) -> bool:
    return bool(plan_info.get("float16_tensors"))


def _branch_weights_unrounded(plan_info: Mapping) -> bool:
    return bool(plan_info.get("branch_weights_unrounded"))


#: numerics versions that change only some models' numbers, each with the test of a converted
#: model's plan info saying whether it has what changed; 11: a model's float16 ops round their
#: outputs to float16 (float16_model.py; a model without float16 tensors records 10 still);
#: 12: a constant of an If's branch (a ``Constant`` node, or what only constants feed) is a
#: weight, rounded by its consumer's precision, where it was rounded to float16 as an op's
#: output: only a conversion where such a constant reaches an op that does not round its
#: inputs to float16 (keep_dtype, high precision: silero-vad's branch Convs) computes other
#: numbers (``branch_rounding``)
#: 13: a LayerNorm or MatMul+Add pattern that fused before is left unfused, or its Mul and
#: Add of gamma and beta, where the graph breaks the conditions CANN documents for the pass
#: (``fusion_limits``: epsilon's shape, keep_dims, the axes, a broadcast bias)
PARTIAL: Dict[int, Callable[[Mapping], bool]] = {
    10: _kept_if, 11: _float16_model, 12: _branch_weights_unrounded,
    13: lambda info: bool(info.get("fusion_refused"))}


def numerics_version(plan_info: Optional[Mapping]) -> int:
    """The newest numerics version whose change applies to the model ``plan_info`` (a
    conversion's plan info) describes."""
    from .backend import EMULATOR_NUMERICS

    info = plan_info or {}
    return max(v for v in range(1, EMULATOR_NUMERICS + 1)
               if v not in PARTIAL or PARTIAL[v](info))

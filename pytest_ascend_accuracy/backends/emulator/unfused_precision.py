"""What each fused op of an emulator run is, and which of its members an unfused run rounds.

``report.fused_overflow`` warns where a fused op computed, in float32, an inner value past
float16's range (``AtcFusionWarning``). Two facts about the run decide what it may say, and
both are the emulator's plan's (``PlannedOp``), not the golden's (whose op types are empty):

- the passes that fused the op (``PlannedOp.rules``: a MatMul+Mul is UB-fused by
  ``ATbeMatmulElemwiseFusionPass``, a Conv+BatchNormalization folded by
  ``ConvBatchnormFusionPass``), and each member's ONNX type (``PlannedOp.onnx_types``);
- whether a member, run apart in the test's mode with fusion off, has its output rounded to
  float16 (``rounding.unit_precision`` of that member alone, as ``rewrite`` computes a unit's
  precision), by itself or as the input of the member after it, where that takes float16
  inputs (the plan holds no edges; in the patterns the passes fuse the next member reads it):
  under ``HIGH_PRECISION`` or ``force_fp32`` a LayerNorm's Pow runs in float32 and nothing
  overflows (a review: the warning said "this op overflows" there, and its own mode pasted
  passed), while under ``keep_dtype(['square'])`` the kept Pow's output is cast to float16 for
  the variance's ReduceMean.

Where the run is not the emulator's (a device dump) or its plan is gone, ``fused_op_facts`` is
None and the report names the passes by the dumped op types, every member counted.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Mapping, Optional

from ...report.fused_overflow import FusedOpFacts
from .plan import PLAN_FILE
from .rounding import unit_precision

#: the plan's ops by plan file (a cache entry's, never rewritten): a model checked again, or in
#: its next test, is not read again
_READ: Dict[str, list] = {}


def _plan_ops(meta: Mapping) -> Optional[list]:
    om_json = meta.get("om_json") if meta.get("backend") == "emulator" else None
    if not om_json:
        return None
    path = str(Path(om_json).parent / PLAN_FILE)
    if path not in _READ:
        try:
            ops = json.loads(Path(path).read_text(encoding="utf-8"))["ops"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if len(_READ) > 64:
            _READ.clear()
        _READ[path] = [op for op in ops if len(op.get("original_names") or ()) > 1]
    return _READ[path]


def fused_op_facts(actual, mode=None) -> Optional[Dict[str, FusedOpFacts]]:
    """Each fused op of the emulator run ``actual`` (a ``DumpSet``) by name: its rules, its
    members' ONNX types, and the members whose output a run of ``mode`` (None: the default)
    with fusion off rounds to float16. None where ``actual`` is no emulator run with a plan."""
    from ...core.modes import DEFAULT, FUSION_OFF

    ops = _plan_ops(getattr(actual, "meta", None) or {})
    if ops is None:
        return None
    unfused = (mode if mode is not None else DEFAULT) | FUSION_OFF
    facts = {}
    for op in ops:
        names, types = tuple(op["original_names"]), tuple(op.get("onnx_types") or ())
        if len(types) != len(names):
            types = ("",) * len(names)
        precision = [unit_precision(unfused, anchor_type=t, member_names=[n], member_types=[t])
                     for n, t in zip(names, types)]
        # rounded by itself, or where the member after it, its consumer in the patterns these
        # passes fuse (the plan holds no edges), takes float16 inputs: a kept Pow's float32
        # output is cast for a float16 ReduceMean, not for a kept one (review RX: any later
        # member counted, so the plugin's own keep list of Pow and ReduceMean, pasted with
        # fusion off, passed under a warning that "this op overflows")
        rounded = frozenset(n for k, n in enumerate(names) if precision[k] == "fp16" or (
            k + 1 < len(names) and precision[k + 1] in ("fp16", "fp16in")))
        facts[op["name"]] = FusedOpFacts(tuple(op.get("rules") or ()), dict(zip(names, types)),
                                         rounded)
    return facts


__all__ = ["fused_op_facts"]

"""Fusion rules switched off that fuse nothing in the model.

``Mode(fusion_rules_off=("MatMulBiasAddFusionPass",))`` on a model without a MatMul converted
exactly as the default, yet was cached and reported as a mode of its own, and passed (H103 on
PP-OCRv4 det): a rule the emulator imitates, so ``fusion.check_rules_off`` accepted it, that
switched nothing off. ``unused_rules_off`` names such entries from the plan of the same
conversion with the rules on (``PlannedOp.rules``); the plugin warns of them at the test's line.
A warning, not an error: on a device ATC's own rule may match more than the emulator's imitation.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import List, Mapping, Optional

from .plan import PLAN_FILE, Plan


class FusionRuleUnusedWarning(UserWarning):
    """A ``fusion_rules_off`` entry names a rule that fuses no op of the model."""


def unused_rules_off(backend, model, mode, *, input_shape=None,
                     atc_options: Optional[Mapping[str, str]] = None) -> List[str]:
    """The entries of ``mode.fusion_rules_off`` whose rule fuses no op of ``model`` in the same
    conversion with every rule on (converted, or read from the cache, by ``backend``)."""
    if not mode.fusion_rules_off or not mode.fusion:
        return []
    on = backend.convert(model, replace(mode, fusion_rules_off=(), label=None),
                         input_shape=input_shape, atc_options=atc_options)
    used = {rule for op in Plan.load(Path(on.path).parent / PLAN_FILE).ops for rule in op.rules}
    return [e for e in mode.fusion_rules_off if e.rpartition(":")[2] not in used]


def unused_text(entries, model) -> str:
    from ...graph.onnx_graph import model_label

    label = model_label(model)
    names = ", ".join(repr(e) for e in entries)
    return (f"fusion_rules_off {names}: no op of model {label!r} is fused by "
            f"{'that rule' if len(entries) == 1 else 'those rules'} in the emulator's "
            f"conversion with every rule on, so switching {'it' if len(entries) == 1 else 'them'}"
            f" off changes nothing: this mode's figures are those of the same mode without it")


__all__ = ["FusionRuleUnusedWarning", "unused_rules_off", "unused_text"]

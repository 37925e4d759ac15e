"""Fusion rules switched off that fuse nothing in the model.

``Mode(fusion_rules_off=("MatMulBiasAddFusionPass",))`` on a model without a MatMul converted
exactly as the default, yet was cached and reported as a mode of its own, and passed (H103 on
PP-OCRv4 det): a rule the emulator imitates, so ``fusion.check_rules_off`` accepted it, that
switched nothing off. ``unused_rules_off`` names such entries by the plans (``PlannedOp.rules``)
of the mode and of the mode less each entry; the plugin warns of them at the test's line.
A warning, not an error: on a device ATC's own rule may match more than the emulator's imitation.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Dict, List, Mapping, Optional

from .plan import PLAN_FILE, Plan


class FusionRuleUnusedWarning(UserWarning):
    """A ``fusion_rules_off`` entry names a rule that fuses no op of the model."""


def unused_rules_off(backend, model, mode, converted, *, input_shape=None,
                     atc_options: Optional[Mapping[str, str]] = None) -> List[str]:
    """The entries of ``mode.fusion_rules_off`` without which ``model`` fuses the same ops as
    ``converted`` (its conversion in ``mode``) does: each compared with the conversion of the
    same mode less that entry (converted, or read from the cache, by ``backend``), not with all
    rules on -- a UBFusion rule may fuse only once a GraphFusion rule is off (H108). A
    conversion that fails says nothing here (the mode's own conversion succeeded)."""
    if not mode.fusion_rules_off or not mode.fusion:
        return []
    key = str(converted.path)  # (a cache entry: one model, mode and options, read once)
    if key not in _FOUND:
        if len(_FOUND) > 256:
            _FOUND.clear()
        _FOUND[key] = _unused(backend, model, mode, converted, input_shape, atc_options)
    return list(_FOUND[key])


#: ``unused_rules_off`` by converted model: a test converting one model in one mode again, or
#: its next test, does not convert and read the plans of the comparison again
_FOUND: Dict[str, List[str]] = {}


def _unused(backend, model, mode, converted, input_shape, atc_options) -> List[str]:
    own, unused = _fused(converted), []
    for entry in mode.fusion_rules_off:
        rest = tuple(e for e in mode.fusion_rules_off if e != entry)
        try:
            other = backend.convert(model, replace(mode, fusion_rules_off=rest, label=None),
                                    input_shape=input_shape, atc_options=atc_options)
        except Exception:  # noqa: BLE001
            continue
        if _fused(other) == own:
            unused.append(entry)
    return unused


def _fused(converted) -> List[tuple]:
    """Each planned op's name and the rules that fused it: what a rule switched off changes."""
    plan = Plan.load(Path(converted.path).parent / PLAN_FILE)
    return [(op.name, tuple(op.rules)) for op in plan.ops]


def unused_text(entries, model) -> str:
    from ...graph.onnx_graph import model_label

    one = len(entries) == 1
    return (f"fusion_rules_off {', '.join(repr(e) for e in entries)}: model "
            f"{model_label(model)!r} fuses the same ops in the emulator's conversion with "
            f"{'that entry' if one else 'each of those entries'} left out, so switching "
            f"{'it' if one else 'them'} off changes nothing: this mode's figures are those of "
            f"the same mode without {'it' if one else 'them'}")


__all__ = ["FusionRuleUnusedWarning", "unused_rules_off", "unused_text"]

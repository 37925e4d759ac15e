"""The framework ops an ``atc --mode=1`` om json shows folded at conversion (docs/formats.md
section 4, checked against the real ATC 5.1 and 6.0 files in ``../shared/realdata``).

ATC keeps the value of what it computed at conversion as a ``Const`` op, named
``dynamic_const_<n>_<k>`` or after an initializer, with an empty original-names list. A
``Const`` output's ``_datadump_origin_name`` names either the op that runs with that constant
(14 tdnn ``Const``s name a ``BatchNormalization_N`` that its ``BNInferenceD`` names too) or,
where no running op names it, the framework op folded into it (tdnn
``dynamic_const_67614_276`` -> ``Cast_311``, read by ``Mul_312``). So the file names some
folded ops, not all: the other ``Const``s name nothing, and a folded op whose value only
another folded op read is in no ``Const``. The Ascend backend (its run's ``meta["folded_ops"]``)
and ``ascend-accuracy compare --om-json`` read them here.
"""
from __future__ import annotations

from typing import Tuple

#: om json op types holding a constant
CONST_TYPES = ("Const", "Constant")


def const_origins(graph) -> Tuple[str, ...]:
    """The framework ops the om json ``graph`` (an ``om_json.OmGraph``) shows folded: named by
    a ``Const`` op (its outputs' ``_datadump_origin_name``, or its original op names) and by no
    op that runs (a ``Const`` holding a running op's weights names that op: real ATC 6.0,
    ``BatchNormalization_365`` beside its ``BNInferenceD``)."""
    running = set()
    for op in graph.ops:
        if op.type not in CONST_TYPES:
            running.update((op.name, *op.original_names,
                            *(o[0] for o in op.output_origins if o)))
    shown = [n for op in graph.ops if op.type in CONST_TYPES
             for n in (*op.original_names, *(o[0] for o in op.output_origins if o))]
    return tuple(n for n in dict.fromkeys(shown) if n not in running)

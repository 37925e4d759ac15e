"""The nodes of a prepared ONNX graph that ATC computes at conversion time: every node whose
outputs are all static (``graph.static``: constants, shapes of known tensors and what only
they feed) and none of them a model output. They never run on the device and are never dumped,
so a comparison counts their golden ops as folded at conversion, not as unmatched.

The emulator folds exactly these (``backends.emulator.rewrite.fold_constants``); the CLI finds
them in the model a stored golden was written from, where no conversion of its own is at hand.
"""
from __future__ import annotations

from typing import List, Optional, Set


def folded_nodes(model, static: Optional[Set[str]] = None) -> List[str]:
    """Names of the nodes of ``model`` (an ``onnx.ModelProto`` prepared as
    ``graph.prepare.prepare_model`` prepares it) folded at conversion, in graph order;
    ``static``: its static tensors when the caller has them."""
    if static is None:
        from .onnx_graph import tensor_info
        from .static import static_tensors

        static = static_tensors(model, tensor_info(model))
    return [n.name for n in folded_node_protos(model, static)]


def folded_node_protos(model, static: Set[str]) -> list:
    """The ``NodeProto``s ``folded_nodes`` names, given the model's static tensors."""
    graph = model.graph
    outputs = {o.name for o in graph.output}
    return [n for n in graph.node
            if any(n.output) and all(o in static for o in n.output if o)
            and not any(o in outputs for o in n.output)]

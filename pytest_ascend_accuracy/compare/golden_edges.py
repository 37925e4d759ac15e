"""The edges of a golden's model that the float16-range read follows (``compare.fp16_range``):
which op makes each operand, the model's float weights, its op types, read once per model
(``ModelEdges``)."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

from ..dump.dtypes import value_dtype
from ..dump.layout import op_by_model_name
from ..dump.model import DumpSet


def producers_by_file(golden: DumpSet) -> Dict[str, Tuple[str, str]]:
    """``{file of an output: (op name, output:k)}``: a golden run stores an operand that is
    another op's output as that output's own file."""
    return {t.source: (op.name, t.slot) for op in golden.ops for t in op.outputs if t.source}


def producer_in_graph(golden: DumpSet, op_name: str, slot: str,
                      graph) -> Optional[Tuple[str, str]]:
    """``(op name, output:k)`` of the op whose output feeds ``op_name``'s ``slot`` in the
    model, when the golden holds that op."""
    inputs, producers = graph[0], graph[1]
    k = int(slot.split(":")[1])
    tensors = inputs.get(op_name, ())
    made = producers.get(tensors[k]) if k < len(tensors) else None
    producer = op_by_model_name(golden, made[0]) if made else None
    return None if producer is None else (producer.name, f"output:{made[1]}")


def graph_edges(model):
    """``(inputs, producers, weights, types)`` of ``model`` with its nodes named as the golden
    run names them (``graph.prepare``): ``{node name: its input tensor names}``, ``{tensor name:
    (producer node name, output index)}``, ``{initializer name: loader}`` of the float
    initializers and ``{node name: op type}``; empty where the model cannot be read (the hint
    then says the operands were not checked)."""
    from ..graph.external import initializer_array
    from ..graph.prepare import prepare_model
    if isinstance(model, ModelEdges):
        return model.edges()
    try:
        prepared = prepare_model(model, require_static=False, weights_by_reference=True)
    except Exception:  # a model gone or unreadable since the check ran: nothing to look up
        return {}, {}, {}, {}
    graph, folder = prepared.model.graph, prepared.folder
    inputs = {n.name: list(n.input) for n in graph.node}
    producers = {o: (n.name, k) for n in graph.node for k, o in enumerate(n.output) if o}
    weights = {t.name: (lambda t=t: initializer_array(t, folder)) for t in graph.initializer
               if t.data_type in _FLOAT_TYPES}
    types = {n.name: n.op_type for n in graph.node}
    return inputs, producers, weights, types


class ModelEdges:
    """A model (path or ModelProto) whose ``graph_edges`` are read once, when first asked:
    pass it as ``model=`` wherever one hint looks at the same model several times."""

    def __init__(self, model):
        self.model = model
        self._edges = None

    def edges(self):
        if self._edges is None:
            self._edges = graph_edges(self.model)
        return self._edges


#: ONNX element types of float tensors (FLOAT, FLOAT16, DOUBLE, BFLOAT16)
_FLOAT_TYPES = (1, 10, 11, 16)


def operands_in_graph(golden: DumpSet, op_name: str, graph) -> List[Tuple[str, Callable]]:
    """``(input:k, loader)`` for each float input of ``op_name`` that is a weight of the model
    or the output of another op the golden holds (the values the golden run fed it)."""
    inputs, producers, weights = graph[:3]
    out = []
    for k, tensor in enumerate(inputs.get(op_name, ())):
        if tensor in weights:
            out.append((f"input:{k}", weights[tensor]))
            continue
        made = producers.get(tensor)
        producer = op_by_model_name(golden, made[0]) if made else None
        for t in producer.outputs if producer is not None else ():
            if t.index == made[1] and value_dtype(t.dtype).kind == "f":
                out.append((f"input:{k}", t.load))
    return out


__all__ = ["ModelEdges", "graph_edges", "operands_in_graph", "producer_in_graph",
           "producers_by_file"]

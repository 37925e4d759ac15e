"""Which golden operands of failing operators leave the float16 range.

An fp16 overflow does not always show in an operator's *output*: a BatchNormalization whose
running variance is 1e9 (the real PP-OCRv4 detector has one) turns that operand into inf when
ATC converts it to float16, and the output merely collapses. Looking at the golden *inputs* of
the first failing operators (weights included, as golden dumps record them) finds that case;
only a few small tensors are read, and only after a comparison failed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, List, Tuple

import numpy as np

from ..dump.dtypes import value_dtype
from ..dump.model import DumpSet

from ..core.fp16 import FP16_MAX  # noqa: E402  (one definition, in core)


@dataclass(frozen=True)
class RangeFinding:
    """A golden operand of op ``op`` (slot ``input:k``) whose values reach past 65504."""

    op: str
    slot: str
    max_abs: float

    def describe(self) -> str:
        return f"{self.op} {self.slot} reaches |{self.max_abs:.4g}|"


class RangeFindings(list):
    """``golden_inputs_past_fp16``'s findings (a list of ``RangeFinding``) and ``checked``, how
    many float operands it looked at: 0 means the golden held none of the failing ops' inputs
    (a golden stored with outputs only, and no model to find them from), so the absence of a
    finding says nothing."""

    checked: int = 0


def golden_inputs_past_fp16(golden: DumpSet, op_names: Iterable[str], *, limit: int = 3,
                            model=None) -> RangeFindings:
    """Findings for the golden inputs of the first ``limit`` of ``op_names`` found in ``golden``.
    An op the golden holds no inputs of (a golden of outputs only) has its operands looked up
    among the golden outputs of their producers in ``model`` (the ONNX model the golden ran,
    a path or ModelProto), when given."""
    found = RangeFindings()
    seen = 0
    graph = None
    for name in op_names:
        op = golden.get(name)
        if op is None:
            continue
        seen += 1
        operands = [(t.slot, t.load) for t in op.inputs if value_dtype(t.dtype).kind == "f"]
        if not op.inputs and model is not None:
            graph = _graph_edges(model) if graph is None else graph
            operands = _operands_in_graph(golden, op.name, graph)
        for slot, load in operands:
            try:
                values = np.asarray(load())
            except Exception:  # unreadable operand: the comparison already reported its file
                continue
            found.checked += 1
            finite = values[np.isfinite(values)]
            peak = float(np.max(np.abs(finite))) if finite.size else 0.0
            if peak > FP16_MAX:
                found.append(RangeFinding(op.name, slot, peak))
        if seen >= limit:
            break
    return found


def _graph_edges(model):
    """``(inputs, producers, weights)`` of ``model`` with its nodes named as the golden run
    names them (``graph.prepare``): ``{node name: its input tensor names}``, ``{tensor name:
    (producer node name, output index)}`` and ``{initializer name: loader}`` of the float
    initializers; empty where the model cannot be read (the hint then says the operands were
    not checked)."""
    from ..graph.external import initializer_array
    from ..graph.prepare import prepare_model

    try:
        prepared = prepare_model(model, require_static=False, weights_by_reference=True)
    except Exception:  # a model gone or unreadable since the check ran: nothing to look up
        return {}, {}, {}
    graph, folder = prepared.model.graph, prepared.folder
    inputs = {n.name: list(n.input) for n in graph.node}
    producers = {o: (n.name, k) for n in graph.node for k, o in enumerate(n.output) if o}
    weights = {t.name: (lambda t=t: initializer_array(t, folder)) for t in graph.initializer
               if t.data_type in _FLOAT_TYPES}
    return inputs, producers, weights


#: ONNX element types of float tensors (FLOAT, FLOAT16, DOUBLE, BFLOAT16)
_FLOAT_TYPES = (1, 10, 11, 16)


def _operands_in_graph(golden: DumpSet, op_name: str, graph) -> List[Tuple[str, Callable]]:
    """``(input:k, loader)`` for each float input of ``op_name`` that is a weight of the model
    or the output of another op the golden holds (the values the golden run fed it)."""
    inputs, producers, weights = graph
    out = []
    for k, tensor in enumerate(inputs.get(op_name, ())):
        if tensor in weights:
            out.append((f"input:{k}", weights[tensor]))
            continue
        made = producers.get(tensor)
        producer = golden.get(made[0]) if made else None
        for t in producer.outputs if producer is not None else ():
            if t.index == made[1] and value_dtype(t.dtype).kind == "f":
                out.append((f"input:{k}", t.load))
    return out

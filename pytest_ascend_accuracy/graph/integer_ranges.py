"""How large a seeded integer input may be (``make_inputs`` draws from [0, 10) by default):

* an input that indexes a constant table (a Gather's ``indices``, the ``token_type_ids`` of a
  BERT export into its 2-row table) takes values below that table's size on the gathered axis,
  else onnxruntime refuses the run ("indices element out of data bounds, idx=9 must be within
  the inclusive range [-2,1]") before anything is compared;
* an input named as a mask (``attention_mask``, ``input_mask``: its name holds ``mask``, as
  onnxruntime's own BERT test data finds it) takes 0 and 1: a BERT export turns it into
  ``(1 - mask) * -10000``, which a mask value of 9 makes 80000, past float16's 65504, and the
  check failed a model that passes on every real (0/1) mask;
* an input that is a recurrent op's ``sequence_lens`` (ONNX ``LSTM``, ``GRU``, ``RNN``: input
  4) takes values in [1, seq_length], seq_length being its ``X``'s axis 0 (axis 1 under
  ``layout=1``, the ONNX spec's batch-first layout): onnxruntime refuses any other ("Invalid
  value/s in sequence_lens. All values must be >= 0 and <= seq_length"), and a length of 0 runs
  no step at all. A trial's LSTM of 6 steps drew [5, 8] from [0, 10), and the golden failed.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, Iterator, Mapping, Optional, Tuple

#: ops that carry an integer input's values through unchanged (a Cast, a reshaping)
_PASS_THROUGH = frozenset({"Cast", "Identity", "Reshape", "Unsqueeze", "Squeeze", "Flatten",
                           "Transpose", "Expand"})
#: ops whose output has their first input's shape: a table reached through them from an
#: initializer keeps its size (a QDQ model's Gather reads ``DequantizeLinear(weight_quantized)``,
#: a float16 conversion's ``Cast(weight)``)
_SAME_SHAPE = frozenset({"DequantizeLinear", "QuantizeLinear", "Cast", "CastLike", "Identity"})
#: recurrent ops whose input 4 is ``sequence_lens`` (the ONNX spec, every opset)
_RECURRENT = frozenset({"LSTM", "GRU", "RNN"})
_SEQUENCE_LENS = 4
#: a shape (a dimension None where unknown), or None, of a tensor named so
ShapeOf = Callable[[str], Optional[Tuple[Optional[int], ...]]]


def integer_ranges(model, names: Iterable[str], shapes: Mapping[str, Tuple[int, ...]],
                   tensor_info: Optional[Callable[[object], Mapping[str, tuple]]] = None
                   ) -> Dict[str, Tuple[int, int]]:
    """``{input name: (low, high)}``: the seeded values of those of ``names`` (``model``'s
    integer graph inputs, of these ``shapes``) lie in [low, high); inputs not listed take
    [0, 10). [0, n) for ``integer_highs``'s ``n`` (at most 10); [1, seq_length + 1) for a
    recurrent op's ``sequence_lens`` (``sequence_lengths``), below a table it also indexes.
    An ``X`` that is no graph input is sized by ``tensor_info(model)`` (``onnx_graph``'s:
    ``{tensor: (element type, shape)}``, called once), else it is not sized."""
    names = list(names)
    highs = integer_highs(model, names)
    out = {n: (0, min(10, high)) for n, high in highs.items()}
    inferred: Dict[str, Mapping[str, tuple]] = {}

    def shape_of(tensor: str):
        if tensor in shapes:
            return shapes[tensor]
        if tensor_info is None:
            return None
        if "info" not in inferred:  # once, and only for an X inside the graph
            inferred["info"] = tensor_info(model)
        return (inferred["info"].get(tensor) or (0, None))[1]

    for name, steps in sequence_lengths(model, names, shape_of).items():
        high = min(steps + 1, highs.get(name, steps + 1))  # and below a table it indexes
        out[name] = (1, high) if high > 1 else (0, 1)
    return out


def sequence_lengths(model, names: Iterable[str], shape_of: ShapeOf) -> Dict[str, int]:
    """``{input name: seq_length}`` for those of ``names`` that a recurrent op (``_RECURRENT``)
    reads as its ``sequence_lens``, directly or through ``_PASS_THROUGH`` ops: the length of
    the op's ``X`` on its sequence axis (0, or 1 where ``layout`` is 1), ``shape_of(X)``; the
    shortest where several read it. An input whose ``X`` has no known length is not listed."""
    readers = _readers(model.graph)
    out: Dict[str, int] = {}
    for name in names:
        found = []
        for node, slot in _reached(name, readers, set()):
            if node.op_type not in _RECURRENT or slot != _SEQUENCE_LENS or not node.input[0]:
                continue
            layout = next((a.i for a in node.attribute if a.name == "layout"), 0)
            shape = shape_of(node.input[0])
            axis = 1 if layout == 1 else 0
            if shape and len(shape) > axis and shape[axis] is not None:
                found.append(int(shape[axis]))
        if found:
            out[name] = min(found)
    return out


def integer_highs(model, names: Iterable[str]) -> Dict[str, int]:
    """``{input name: n}``: the seeded values of those of ``names`` (integer graph inputs of
    ``model``, a ModelProto) lie in [0, n). A mask (its name holds ``mask``): 2, or less where
    it indexes a smaller table. Else one whose
    values index a constant table of ``n`` entries (``n >= 1``; the smallest where several): a
    Gather's ``indices`` whose ``data`` is an initializer or a Constant, or one of those through
    ops that keep its shape (``_SAME_SHAPE``: a QDQ model's ``DequantizeLinear``), reached
    directly or through ops that pass the values on unchanged (``_PASS_THROUGH``, as their
    first input)."""
    graph = model.graph
    dims = {t.name: tuple(t.dims) for t in graph.initializer}
    for node in graph.node:  # (in graph order: a producer before its readers)
        if node.op_type == "Constant" and node.output:
            for a in node.attribute:
                if a.name == "value":
                    dims[node.output[0]] = tuple(a.t.dims)
        elif node.op_type in _SAME_SHAPE and node.input and node.input[0] in dims:
            dims[node.output[0]] = dims[node.input[0]]
    readers = _readers(graph)
    out: Dict[str, int] = {}
    for name in names:
        bound = _bound(name, readers, dims, set())
        if "mask" in name.lower():  # 0 and 1, or less where it indexes a 1-row table
            bound = min(2, bound or 2)
        if bound is not None:
            out[name] = bound
    return out


def _readers(graph) -> Dict[str, list]:
    """``{tensor name: [(node, input slot), ...]}`` of the main graph."""
    readers: Dict[str, list] = {}
    for node in graph.node:
        for slot, name in enumerate(node.input):
            readers.setdefault(name, []).append((node, slot))
    return readers


def _reached(tensor: str, readers, seen) -> Iterator[tuple]:
    """``(node, slot)`` of every op reading ``tensor``'s values: directly, or through ops that
    pass them on unchanged (``_PASS_THROUGH``, as their first input)."""
    if tensor in seen:
        return
    seen.add(tensor)
    for node, slot in readers.get(tensor, ()):
        yield node, slot
        if node.op_type in _PASS_THROUGH and slot == 0:
            for out in node.output:
                yield from _reached(out, readers, seen)


def _bound(tensor: str, readers, dims, seen) -> Optional[int]:
    """The smallest table size ``tensor``'s values index, or None."""
    found = []
    for node, slot in _reached(tensor, readers, seen):
        if node.op_type == "Gather" and slot == 1 and node.input[0] in dims:
            shape = dims[node.input[0]]
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            if shape and -len(shape) <= axis < len(shape) and shape[axis] >= 1:
                found.append(int(shape[axis]))
    return min(found) if found else None

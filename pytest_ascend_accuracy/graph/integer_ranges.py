"""How large a seeded integer input may be (``make_inputs`` draws from [0, 10) by default):

* an input that indexes a constant table (a Gather's ``indices``, the ``token_type_ids`` of a
  BERT export into its 2-row table) takes values below that table's size on the gathered axis,
  else onnxruntime refuses the run ("indices element out of data bounds, idx=9 must be within
  the inclusive range [-2,1]") before anything is compared;
* an input named as a mask (``attention_mask``, ``input_mask``: its name holds ``mask``, as
  onnxruntime's own BERT test data finds it) takes 0 and 1: a BERT export turns it into
  ``(1 - mask) * -10000``, which a mask value of 9 makes 80000, past float16's 65504, and the
  check failed a model that passes on every real (0/1) mask.
"""
from __future__ import annotations

from typing import Dict, Iterable, Optional

#: ops that carry an integer input's values through unchanged (a Cast, a reshaping)
_PASS_THROUGH = frozenset({"Cast", "Identity", "Reshape", "Unsqueeze", "Squeeze", "Flatten",
                           "Transpose", "Expand"})


def integer_highs(model, names: Iterable[str]) -> Dict[str, int]:
    """``{input name: n}``: the seeded values of those of ``names`` (integer graph inputs of
    ``model``, a ModelProto) lie in [0, n). A mask (its name holds ``mask``): 2, or less where
    it indexes a smaller table. Else one whose
    values index a constant table of ``n`` entries (``n >= 1``; the smallest where several): a
    Gather's ``indices`` whose ``data`` is an initializer or a Constant, reached directly or
    through ops that pass the values on unchanged (``_PASS_THROUGH``, as their first input)."""
    graph = model.graph
    dims = {t.name: tuple(t.dims) for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.output:
            for a in node.attribute:
                if a.name == "value":
                    dims[node.output[0]] = tuple(a.t.dims)
    readers: Dict[str, list] = {}
    for node in graph.node:
        for slot, name in enumerate(node.input):
            readers.setdefault(name, []).append((node, slot))
    out: Dict[str, int] = {}
    for name in names:
        bound = _bound(name, readers, dims, set())
        if "mask" in name.lower():  # 0 and 1, or less where it indexes a 1-row table
            bound = min(2, bound or 2)
        if bound is not None:
            out[name] = bound
    return out


def _bound(tensor: str, readers, dims, seen) -> Optional[int]:
    """The smallest table size ``tensor``'s values index, or None."""
    if tensor in seen:
        return None
    seen.add(tensor)
    found = []
    for node, slot in readers.get(tensor, ()):
        if node.op_type == "Gather" and slot == 1 and node.input[0] in dims:
            shape = dims[node.input[0]]
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            if shape and -len(shape) <= axis < len(shape) and shape[axis] >= 1:
                found.append(int(shape[axis]))
        elif node.op_type in _PASS_THROUGH and slot == 0:
            for out in node.output:
                inner = _bound(out, readers, dims, seen)
                if inner is not None:
                    found.append(inner)
    return min(found) if found else None

"""Which ops of a model's main graph read a tensor's values: directly, or through ops that
pass them on. Seeded integer inputs are drawn by what reads them: ``integer_ranges`` follows
an input to the table it indexes, ``compared_inputs`` to the constant it is compared with and
to the If that comparison decides."""
from __future__ import annotations

from typing import AbstractSet, Dict, Iterator, Optional

#: ops that carry their first input's values through unchanged (a Cast, a reshaping)
PASS_THROUGH = frozenset({"Cast", "Identity", "Reshape", "Unsqueeze", "Squeeze", "Flatten",
                          "Transpose", "Expand"})


def readers_of(graph) -> Dict[str, list]:
    """``{tensor name: [(node, input slot), ...]}`` of ``graph``, in node order."""
    readers: Dict[str, list] = {}
    for node in graph.node:
        for slot, name in enumerate(node.input):
            readers.setdefault(name, []).append((node, slot))
    return readers


def reached(tensor: str, readers, carry: AbstractSet[str] = PASS_THROUGH,
            seen: Optional[set] = None) -> Iterator[tuple]:
    """``(node, slot)`` of every op reading ``tensor``'s values: directly, or through ``carry``
    ops (as their first input) and what reads their outputs in turn."""
    seen = set() if seen is None else seen
    if tensor in seen:
        return
    seen.add(tensor)
    for node, slot in readers.get(tensor, ()):
        yield node, slot
        if node.op_type in carry and slot == 0:
            for out in node.output:
                if out:
                    yield from reached(out, readers, carry, seen)


def integer_holds(elem_type: Optional[int], low: int, high: int) -> bool:
    """Whether an input of ONNX element type ``elem_type`` is of an integer type holding every
    value of ``low..high`` (a seeded draw of it: ``integer_ranges``' rules)."""
    import numpy as np
    from onnx import helper

    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except Exception:
        return False
    if dtype.kind not in "iu":
        return False
    info = np.iinfo(dtype)
    return info.min <= low and high <= info.max


__all__ = ["PASS_THROUGH", "integer_holds", "reached", "readers_of"]

"""Which ops of a model's main graph read a tensor's values: directly, or through ops that
pass them on. Seeded integer inputs are drawn by what reads them: ``integer_ranges`` follows
an input to the table it indexes, ``compared_inputs`` to the constant it is compared with and
to the If that comparison decides."""
from __future__ import annotations

from typing import AbstractSet, Any, Callable, Dict, Iterator, Optional

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


def constants_of(graph, limit: int, classify: Callable[[Any], Any],
                 carry: AbstractSet[str]) -> Dict[str, Any]:
    """``{tensor: classify(values)}`` for ``graph``'s initializers and ``Constant`` outputs of at
    most ``limit`` elements, and what ``carry`` ops make of them as their first input (a Cast
    of one); a tensor ``classify`` gives None for, or that cannot be read (external data), is
    left out. ``compared_inputs`` reads one-valued constants so, ``one_hot_tables`` row tables."""
    import numpy as np
    from onnx import numpy_helper

    out: Dict[str, Any] = {}

    def add(name: str, read) -> None:
        try:
            array = np.asarray(read())
        except Exception:  # (an external or odd tensor: nothing to read)
            return
        if 0 < array.size <= limit:
            kind = classify(array)
            if kind is not None:
                out[name] = kind
    for t in graph.initializer:
        if int(np.prod(t.dims, dtype=np.int64)) <= limit:
            add(t.name, lambda t=t: numpy_helper.to_array(t))
    for node in graph.node:
        if node.op_type == "Constant" and node.output:
            for a in node.attribute:
                if a.name == "value":
                    add(node.output[0], lambda a=a: numpy_helper.to_array(a.t))
                elif a.name in ("value_int", "value_float"):
                    add(node.output[0], lambda a=a: a.i if a.name == "value_int" else a.f)
                elif a.name in ("value_ints", "value_floats"):
                    add(node.output[0], lambda a=a: list(
                        a.ints if a.name == "value_ints" else a.floats))
        elif (node.op_type in carry and node.input and node.input[0] in out and node.output
              and node.output[0]):
            out[node.output[0]] = out[node.input[0]]
    return out


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


__all__ = ["PASS_THROUGH", "constants_of", "integer_holds", "reached", "readers_of"]

"""Integer inputs a model compares for equality with a constant: seeded, they take that value.

silero-vad's ``sr`` (a scalar int64) feeds only ``Equal(sr, 16000) -> If``: the 16 kHz path is
the ``then`` branch, every other value runs the 8 kHz ``else`` branch. Drawn from [0, 10) as
other seeded integers are, ``sr`` was 9 or 5, so every seeded check verified the branch the
model is not deployed with, and at the deployed shape (``input`` [1, 576]) the golden run
failed with onnxruntime's LSTM error, which named neither ``sr`` nor its value (an audit on the
real silero-vad 6.2.3 models). An integer input whose values reach an ``Equal`` with a constant
(an initializer or a ``Constant`` node, on either side, of one value: a scalar or every element
the same) is now drawn as that constant, a scalar or every element ``c``: a seeded run takes
the path the model singles out. The values are followed through ops that pass them on unchanged
(``_CARRY``: a Cast, a Reshape, a Squeeze... as their first input; ``Gather`` and ``Slice`` of
them, whose elements are the input's: op18's ``Gather(Reshape(sr, [-1]), 0)``). Where several
constants are compared, the first ``Equal`` in graph order gives the value. Only the main graph
is read (an ``Equal`` inside a branch does not count), and only inputs whose draw nothing else
bounds: a table index keeps its draw below the table (an ``input_ids`` compared with the pad
id would otherwise be all padding), a mask its 0 and 1, a ``sequence_lens`` its lengths
(``graph.integer_ranges``); a constant the input's dtype cannot hold is not drawn. And only
where the comparison picks a path: the ``Equal`` decides an ``If`` (its condition, through
``Not``/``And``/``Or``/a Cast...). Two reviews: a token input compared with the pad id as a
padding mask (``Equal(tokens, 0)``), its table not one this package traces, was seeded all
padding, and the check passed on nothing; a scalar ``k`` masking an output by
``Where(Equal(k, 3), 0, x)`` was seeded 3, and the check passed on zeros.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, NamedTuple, Optional, Tuple

import numpy as np

from .value_readers import PASS_THROUGH, constants_of, integer_holds, reached, readers_of

#: ops whose output holds their first input's values (``PASS_THROUGH``), and ops whose output
#: holds some of its elements (``Gather``/``Slice`` of the input, as ``data``)
_CARRY = PASS_THROUGH | {"Gather", "Slice"}
#: ops through which a comparison's result still decides an If's condition
_CONDITION = frozenset({"Not", "And", "Or", "Xor", "Cast", "Identity", "Reshape", "Squeeze",
                        "Unsqueeze"})


class Compared(NamedTuple):
    """What an input is compared with: the constant and the ``Equal`` node's name."""

    value: int
    node: str


def compared_constants(model, names: Iterable[str]) -> Dict[str, Compared]:
    """``{input name: Compared}`` for those of ``names`` (``model``'s integer graph inputs, a
    ModelProto) whose values reach an ``Equal`` with a one-valued integral constant on its
    other side, through ``_CARRY`` ops; the first such ``Equal`` in graph order where several
    are, and only a constant the input's dtype holds. Others are not listed."""
    graph = model.graph
    constants = _constants(graph)
    readers = readers_of(graph)
    position = {id(node): k for k, node in enumerate(graph.node)}
    dtypes = {vi.name: vi.type.tensor_type.elem_type for vi in graph.input}
    out: Dict[str, Compared] = {}
    for name in names:
        found: List[Tuple[int, Compared]] = []
        for node, slot in reached(name, readers, _CARRY):
            if node.op_type != "Equal" or len(node.input) != 2 or slot > 1:
                continue
            value = constants.get(node.input[1 - slot])
            if (value is not None and integer_holds(dtypes.get(name), value, value)
                    and _decides_if(node.output[0], readers)):
                found.append((position[id(node)], Compared(value, node.name or node.output[0])))
        if found:
            out[name] = min(found)[1]
    return out


def _decides_if(tensor: str, readers) -> bool:
    """Whether ``tensor`` (a comparison's result) is an ``If``'s condition, directly or through
    ``_CONDITION`` ops."""
    return any(node.op_type == "If" and slot == 0
               for node, slot in reached(tensor, readers, _CONDITION))


def _constants(graph) -> Dict[str, int]:
    """``{tensor: c}`` for the main graph's constants of at most 64 elements (a table is no
    compared value), and ``Cast``s of them, whose elements are all the integral value ``c``."""
    return constants_of(graph, 64, _one_value, frozenset({"Cast"}))


def _one_value(array) -> Optional[int]:
    if array.dtype.kind not in "iuf":
        return None
    first = array.reshape(-1)[0]
    if not np.all(array == first) or not np.isfinite(first) or float(first) != int(first):
        return None
    return int(first)


__all__ = ["Compared", "compared_constants"]

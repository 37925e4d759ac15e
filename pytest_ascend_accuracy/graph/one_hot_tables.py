"""Integer inputs a model one-hot encodes against a constant table: seeded, they span it.

Google Magika (magika 1.0.3, a jax2tf export) reads ``bytes`` int32 [N, 2048], byte values 0..255
and a padding token 256, and one-hot encodes them as ``Equal(Expand(Reshape(bytes)),
table)`` with ``table`` the constant ``0..256`` [1, 1, 257]. Drawn from [0, 10) as other seeded
integers are, the bytes used 10 of the table's 257 rows: a seeded check never ran the
embedding of printable text, of a binary's high bytes or of the padding token, and the keep
list its failure printed passed on seeded bytes and on a .py, but failed pasted on a real ELF,
whose bytes overflow a GELU the seeded ones never reached (audit 33). An integer input whose
values reach an ``Equal`` (through ops that pass them on: a Cast, a Reshape, an Expand...)
whose other side is a constant holding every integer of a range of two or more, as a
one-hot's row table does (an initializer or a ``Constant`` node, directly or through such
ops), is drawn from that range, [min, max + 1): a seeded run spans every row the model
encodes. A set of values that leaves gaps (special token ids ``[0, 101, 102]`` compared to
find them) is no row table, and only an Equal whose one-hot an embedding multiplies (through a
Cast, a MatMul, Gemm, Einsum or Conv) counts: special ids 0..2 compared to find them keep the
[0, 10) draw, which finds them here and there rather than everywhere (drawn from the set, a
review's check passed on nothing but special tokens). One-valued constants are
``graph.compared_inputs``' (a value a comparison singles out, drawn only where it decides an
``If``); only the main graph is read, and only inputs whose draw nothing else bounds
(``graph.integer_ranges``: a table index, a mask, a ``sequence_lens`` keep theirs).
"""
from __future__ import annotations

from typing import Dict, Iterable, Optional, Tuple

import numpy as np

from .value_readers import PASS_THROUGH, constants_of, integer_holds, reached, readers_of

#: the largest table read (elements): a one-hot's row table is small; a graph's big weights
#: compared with an input are no table to draw from
_MAX_TABLE = 1 << 20
#: ops that multiply a one-hot by an embedding
_EMBEDDING = frozenset({"MatMul", "Gemm", "Einsum", "Conv"})


def one_hot_ranges(model, names: Iterable[str]) -> Dict[str, Tuple[int, int]]:
    """``{input name: (low, high)}`` for those of ``names`` (``model``'s integer graph inputs,
    a ModelProto) one-hot encoded against a constant table (module doc): draw in [low, high).
    The first such ``Equal`` in graph order gives the table; a table the input's dtype cannot
    hold, whole, is not drawn from."""
    graph = model.graph
    readers = readers_of(graph)
    tables = _tables(graph)
    dtypes = {vi.name: vi.type.tensor_type.elem_type for vi in graph.input}
    position = {id(node): k for k, node in enumerate(graph.node)}
    out: Dict[str, Tuple[int, int]] = {}
    for name in names:
        found = []
        for node, slot in reached(name, readers):
            if node.op_type != "Equal" or len(node.input) != 2 or slot > 1:
                continue
            span = tables.get(node.input[1 - slot])
            if (span is not None and integer_holds(dtypes.get(name), *span)  # (uint8: 0..255)
                    and _embedded(node.output[0], readers)):
                found.append((position[id(node)], span))
        if found:
            low, high = min(found)[1]
            out[name] = (low, high + 1)
    return out


def _embedded(tensor: str, readers) -> bool:
    """Whether ``tensor`` (the Equal's result) is a one-hot an embedding multiplies: it reaches
    a ``MatMul``/``Gemm``/``Einsum``/``Conv`` through a Cast or reshaping ops. A review: T5's
    special ids 0..2, compared to find them (``ReduceMax``/``Not`` of the Equal), are a row
    table too, and drawn from it every token was a special one and the check passed on
    nothing."""
    carry = PASS_THROUGH | {"CastLike"}
    return any(node.op_type in _EMBEDDING for node, _ in reached(tensor, readers, carry))


def _tables(graph) -> Dict[str, Tuple[int, int]]:
    """``{tensor: (min, max)}`` for the main graph's integer constants holding every integer of
    min..max, two or more (initializers, ``Constant`` outputs, and what ``PASS_THROUGH`` ops
    make of them as their first input)."""
    return constants_of(graph, _MAX_TABLE, _row_table, PASS_THROUGH)


def _row_table(array) -> Optional[Tuple[int, int]]:
    """(min, max) where ``array`` holds every integer of min..max, two or more (a one-hot's
    range), else None."""
    if array.size < 2 or array.dtype.kind not in "iu":
        return None
    low, high = int(array.min()), int(array.max())
    if low != high and high - low < array.size and np.unique(array).size == high - low + 1:
        return low, high
    return None


__all__ = ["one_hot_ranges"]

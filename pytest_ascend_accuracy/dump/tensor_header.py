"""One tensor's message in a "2.0" dump header (``OpInput`` / ``OpOutput``), from what the
writer knows of it: written by ``ascend_bin`` for a tensor's values, planned by ``unwritten``
for a dump a run compares instead of writing, so the two headers cannot drift apart."""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

from . import dtypes as dt
from .proto import OpOutput, OriginalOp, Shape


def tensor_message(cls, enum: int, fmt: str, device_shape: Sequence[int], size: int,
                   shape: Sequence[int], origin: Optional[Tuple[str, int]] = None):
    """``cls`` (``OpInput`` or ``OpOutput``) of a tensor of dump type ``enum`` stored in
    ``fmt`` as ``device_shape`` (``size`` bytes) for a logical ``shape``; an output's ``origin``
    (framework op name, output index) goes in its ``original_op``."""
    fields = dict(data_type=enum, format=dt.format_id(fmt), shape=Shape(tuple(device_shape)),
                  size=size, original_shape=Shape(tuple(shape)))
    if cls is OpOutput and origin is not None and origin[0]:
        fields["original_op"] = OriginalOp(name=str(origin[0]), output_index=int(origin[1]))
    return cls(**fields)

"""The dump a run would write, known without writing it: its records, from headers alone.

A run compared while it runs (``backends.emulator.compared_run``) matches its operators with
the golden's before any value exists, and writes no file. Its records are built here the way
``loader.read_ascend_dir`` builds a written dump's: each op's "2.0" header as
``AscendDumpWriter.write_op`` would encode it (``header_message``: the fields ``ascend_bin``'s
encoder writes, from a tensor's shape, dtype, format and origin, no values), parsed by the
same ``_parsed_v2``, under the file name the writer would give it, assembled by
``loader.assemble_leaf``. Their ``TensorRef``s load through loaders of the caller's: the op's
values while they are alive, in the form the file would give back (``stored_values``: bf16
rounded, the logical layout of a device format).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from . import device_formats as df
from . import dtypes as dt
from .ascend_bin import VERSION, _parsed_v2, _varints_hold
from .layout import MAX_NAME_BYTES, build_file_name, parse_file_name
from .model import DumpSet, TensorRef
from .proto import MAX_DIMS, DumpData, OpOutput
from .tensor_header import tensor_message


@dataclass(frozen=True)
class PlannedTensor:
    """What a writer would be handed for one output: an array of ``shape`` and numpy dtype
    name ``dtype`` stored in ``format``, as dump type ``stored`` when given (``bfloat16``), for
    the framework output ``origin``."""

    shape: Tuple[int, ...]
    dtype: str
    format: str = "ND"
    origin: Optional[Tuple[str, int]] = None
    stored: Optional[str] = None


@dataclass(frozen=True)
class UnwrittenOp:
    """One op a writer would write: ``write_op(op_type, name, [], outputs, task_id=task_id,
    timestamp_us=timestamp)``."""

    op_type: str
    name: str
    outputs: Tuple[PlannedTensor, ...]
    task_id: int
    timestamp: int


def header_message(t: PlannedTensor) -> Tuple[OpOutput, int]:
    """The ``OpOutput`` message ``ascend_bin._encode`` writes for such a tensor, and its size
    in bytes (the stored shape from the shapes alone, ``device_formats.device_shape``)."""
    enum = dt.enum_for(t.stored or t.dtype)
    device = tuple(df.device_shape(t.format, t.shape, np.dtype(t.dtype)))
    count = 1
    for d in device:
        count *= int(d)
    size = count * dt.storage_dtype(enum).itemsize
    return tensor_message(OpOutput, enum, t.format, device, size, t.shape, t.origin), size


def stored_values(array: np.ndarray, t: PlannedTensor) -> np.ndarray:
    """``array`` as the file written from it loads (``ascend_bin._make_loader``): stored as
    its dump type and decoded (bf16 rounds float32), in its logical layout (a device format
    gives back the array it was made from)."""
    enum = dt.enum_for(t.stored or array.dtype)
    values = dt.decode_values(dt.to_storage(array, enum), enum)
    return values.reshape(array.shape)


#: ``TensorRef.source`` and ``OpRecord.source`` of a dump never written: no file holds it
NOT_WRITTEN = None


def unwritten_dump(ops: Sequence[UnwrittenOp],
                   loader: Callable[[int, str], Callable[[], np.ndarray]]) -> Optional[DumpSet]:
    """The DumpSet ``read_ascend_dir`` would give for the files written for ``ops``, each
    tensor's ``loader`` being ``loader(index of its op in ops, slot)``; None where a file of
    them would not be read back from its writer's header (a name too long for a file, a
    header past the decoder's limits), where the reader would join FFTS slices, or where an
    NC1HWC0 shape fits NCHW and NHWC alike (``loader`` reads its file again to decide)."""
    from .ffts_slices import slice_of
    from .loader import assemble_leaf

    files, index_of = [], {}
    for k, op in enumerate(ops):
        name = build_file_name(op.op_type, op.name, op.task_id, 0, op.timestamp)
        fields = parse_file_name(name)
        if (len(name.encode("utf-8")) > MAX_NAME_BYTES or fields is None
                or slice_of(fields.base_op_name) is not None):
            return None
        outs = [header_message(t) for t in op.outputs]
        if any(t.format in ("NC1HWC0", "NC1HWC0_C04")  # the om json's format decides, read
               and df.nc1hwc0_ambiguous(tuple(m.shape.dim), t.shape)  # from the file again
               for t, (m, _) in zip(op.outputs, outs)):
            return None
        header = DumpData(version=VERSION, dump_time=op.timestamp, op_name=op.name,
                          input=(), output=tuple(m for m, _ in outs), attr=())
        if (any(len(m.shape.dim) > MAX_DIMS or len(m.original_shape.dim) > MAX_DIMS
                for m, _ in outs) or not _varints_hold(header)):
            return None
        raw = header.encode()
        path = f"<not written>/{k}/{name}"  # distinct, never a file: replaced below
        parsed = _parsed_v2(path, header, len(raw), 8 + len(raw) + sum(s for _, s in outs))
        files.append((fields, parsed))
        index_of[path] = k
    dump = assemble_leaf(files, None)
    dump.ops[:] = [_unwritten(op, index_of[op.source], loader) for op in dump.ops]
    dump.__post_init__()  # (its index of names, over the records replaced)
    return dump


def _unwritten(op, k: int, loader):
    outputs: List[TensorRef] = []
    for t in op.outputs:
        outputs.append(dataclasses.replace(t, loader=loader(k, t.slot), source=NOT_WRITTEN))
    return dataclasses.replace(op, outputs=tuple(outputs), source=NOT_WRITTEN)

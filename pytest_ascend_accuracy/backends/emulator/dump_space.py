"""What the emulator says when its dump cannot be written (a full disk, a quota, an I/O error).

The writer's ``DumpWriteError`` names the file, the bytes that file needs and the bytes free.
A user needs one more figure to act on: how much the *whole* dump of this run takes. The plan
knows every dumped tensor's shape, dtype and layout, so ``dump_write_failed`` adds it, and
removes the partial step directory (a dump missing its later operators would otherwise be read
as a complete one by a later ``compare``).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np

from ...errors import DumpWriteError
from ..dump_modes import dumps_inputs, dumps_outputs


def slot_bytes(slot) -> Optional[int]:
    """Bytes a planned tensor takes in a dump file, None when its shape is not known."""
    from ...dump import device_formats as df

    if slot.shape is None:
        return None
    dtype = slot.dtype or slot.type or "float32"
    layout_dtype = "float16" if dtype == "bfloat16" else dtype
    try:
        itemsize = 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize
        shape = df.device_shape(slot.format or "ND", slot.shape, layout_dtype)
    except (TypeError, ValueError):
        return None
    n = 1
    for d in shape:
        n *= int(d)
    return n * itemsize


def planned_bytes(ops: Iterable, dump_mode: str = "all") -> "tuple[int, int]":
    """(bytes of the tensors of ``ops`` with a known size, count of tensors of unknown size);
    ``dump_mode`` ``output``/``input`` counts only the outputs/inputs, as they are dumped."""
    total, unknown = 0, 0
    for op in ops:
        slots = ((tuple(op.inputs) if dumps_inputs(dump_mode) else ())
                 + (tuple(op.outputs) if dumps_outputs(dump_mode) else ()))
        for slot in slots:
            n = slot_bytes(slot)
            if n is None:
                unknown += 1
            else:
                total += n
    return total, unknown


def dump_write_failed(exc: DumpWriteError, model_name: str, leaf: Path, remaining: Sequence,
                      *, written: Sequence[Path] = (), dump_mode: str = "all") -> DumpWriteError:
    """``exc`` (raised writing the first op of ``remaining``) as the emulator reports it: the
    file, the reason, the bytes this run's whole dump needs and the bytes free; the partial
    step directory ``leaf`` is removed."""
    done = 0
    for p in written:
        try:
            done += os.path.getsize(p)
        except OSError:
            pass
    todo, unknown = planned_bytes(remaining, dump_mode)
    needed = done + todo
    _remove_partial(leaf)
    op = remaining[0].name if remaining else "?"
    more = f" (plus {unknown} tensors of unknown size)" if unknown else ""
    text = (f"{exc.problem}. The emulator's dump of {model_name!r} stopped at operator {op!r}: "
            f"the whole dump of this run needs about {needed} bytes{more}; the partial dump "
            f"directory {leaf} was removed. Free space or pass another dump_dir.")
    return DumpWriteError(exc.path, text, errno=exc.errno, needed=needed, free=exc.free)


def _remove_partial(leaf: Path) -> None:
    """Remove the step directory and the parents it alone filled (model, device, timestamp)."""
    shutil.rmtree(leaf, ignore_errors=True)
    parent = Path(leaf).parent
    for _ in range(4):  # {stamp}/{device}/{model}/{model_id}
        try:
            parent.rmdir()
        except OSError:
            return
        parent = parent.parent

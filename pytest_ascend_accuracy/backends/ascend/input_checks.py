"""The one check of an array fed to an .om input, for both runtimes (``acl_driver``,
``ais_bench_driver``): the model's own dtype and size for that input (pyACL
``acl.mdl.get_input_data_type`` / ``get_input_dims`` / ``get_input_size_by_index``; ais_bench's
``session.get_inputs()`` descs). Byte counts alone took magika's ``bytes`` fed as float32
[1, 2048] where the .om takes int32 (same 8192 bytes, garbage on a device) and refused int64
[1, 2048] saying to convert with another input_shape, where the dtype was wrong (H114); a 0-d
input was printed ``[1]`` (``np.ascontiguousarray`` makes a 0-d array 1-d)."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ...errors import BackendError


def shape_text(shape: Sequence[int]) -> str:
    """``[1, 2048]``; ``[]`` for a 0-d (scalar) input."""
    return str([int(d) for d in shape])


def check_input(name: str, value, dtype: Optional[np.dtype], size: Optional[int],
                shape: Optional[Sequence[int]] = None) -> np.ndarray:
    """``value`` as the C-contiguous array the device copies in, or BackendError naming the
    input, what was given and what the converted model takes (``dtype``, ``size`` in bytes,
    ``shape`` as the model reports it; None: not reported, not checked)."""
    given = np.asarray(value)
    array = np.ascontiguousarray(given)
    takes = None if dtype is None else np.dtype(dtype).name
    if takes and shape is not None:
        takes += f" {shape_text(shape)}"
    what = f"input {name!r}: {given.dtype.name} {shape_text(given.shape)} given"
    if dtype is not None and given.dtype != np.dtype(dtype):
        wanted = np.dtype(dtype).name
        raise BackendError(f"{what}, but the converted model takes {takes}: pass it as "
                           f"{wanted}, e.g. numpy.asarray(x, dtype=\"{wanted}\")")
    if size is not None and array.nbytes != int(size):
        takes = takes or f"{int(size)} bytes"
        raise BackendError(f"{what} ({array.nbytes} bytes), but the converted model takes "
                           f"{takes} ({int(size)} bytes): convert with input_shape matching "
                           f"the data")
    return array


def ais_bench_dtype(desc) -> Optional[np.dtype]:
    """The numpy dtype of an ais_bench input desc's ``datatype`` (aclruntime's enum prints as
    ``dtype.float32``; a plain ``float32`` too), None where it names no numpy type."""
    text = str(getattr(desc, "datatype", "") or "").rsplit(".", 1)[-1].strip().lower()
    try:
        return np.dtype(text) if text else None
    except TypeError:
        return None

"""One stored baseline input as a ``.npy`` file, every dtype an input may have round-tripped.

numpy has no dtype of its own for ml_dtypes' types (bfloat16, float8_*, int4, ...): ``np.save``
writes such an array as raw bytes (``<V2``, ``|V1``; float8_e5m2 as ``<f1``), which
``dump.user_arrays.read_npy`` refuses, so a baseline storing a bfloat16 input could not be rerun
(``inputs_for_baseline(m, path)``: "dtype |V2 is not numeric or bool") and its copies could not
be checked. Such an array is stored as the unsigned integers of its bits (bfloat16 as
``uint16``, float8 and int4 as ``uint8``): exact for every value, NaN payloads included, and the
baseline file records its dtype (``TensorSpec.dtype``), which the reader views the bits as
again. A file an earlier version wrote as raw bytes of that size (``|V1``, ``<V2``) is read the
same way (its bytes are the bits; not ``<f1``, whose header numpy cannot parse:
``--accuracy-regen`` rewrites it). Every other dtype is stored and read as ``np.save`` writes it.
"""
from __future__ import annotations

import os
from typing import Optional

import numpy as np

from .file import TensorSpec
from ..dump.npy_writer import write_npy
from ..dump.user_arrays import read_npy
from ..errors import ConfigError, DumpFormatError


def ml_dtype(name: str) -> Optional[np.dtype]:
    """The ml_dtypes dtype called ``name`` (``bfloat16``...), None for numpy's own names.
    ``ConfigError`` when ``name`` is no dtype here (one ml_dtypes would provide, missing)."""
    try:
        import ml_dtypes  # noqa: F401  (registers bfloat16, float8_*, int4, ... with numpy)
    except ImportError:  # a dependency of onnx; without it, numpy's names only
        pass
    try:
        found = np.dtype(name)
    except TypeError:
        raise ConfigError("baseline inputs", f"dtype {name!r} is not known to numpy or "
                                             "ml_dtypes (pip install ml_dtypes)") from None
    return found if _is_ml(found) else None


def _is_ml(dtype: np.dtype) -> bool:
    # kind "V" but float8_e5m2's "f" ('<f1', which numpy cannot load either)
    return dtype.type.__module__.startswith("ml_dtypes")


def write_stored(f, array) -> None:
    """Write ``array`` to the open file ``f``: an ml_dtypes array as its bits (module doc)."""
    array = np.asarray(array)
    if _is_ml(array.dtype):
        # np.array, not np.ascontiguousarray, which makes a 0-d array of shape (1,)
        array = np.array(array, order="C").view(np.dtype(f"u{array.dtype.itemsize}"))
    write_npy(f, array)


def read_stored(path, tensor: TensorSpec) -> np.ndarray:
    """The array of ``tensor`` stored at ``path``: of the dtype the baseline records for an
    ml_dtypes one (its bits viewed as it), as ``read_npy`` reads it otherwise. A file that is
    not such bits is a ``DumpFormatError`` naming it, the input and the dtype."""
    wanted = ml_dtype(tensor.dtype)
    if wanted is None:
        return read_npy(path, f"a readable stored input {tensor.name!r}")
    bits = np.dtype(f"u{wanted.itemsize}")
    try:
        raw = read_npy(path, f"a readable stored input {tensor.name!r}")
    except DumpFormatError:
        raw = _raw_bytes(path, wanted.itemsize)  # written as raw bytes by an earlier version
        if raw is None:
            raise
    if raw.dtype.kind != "u" or raw.dtype.itemsize != bits.itemsize:
        raise DumpFormatError(path, f"holds {raw.dtype}, not the {bits} bits of the "
                                    f"{tensor.dtype} input {tensor.name!r} the baseline records")
    return np.array(raw, dtype=bits, order="C").view(wanted)  # a 0-d array stays 0-d


def _raw_bytes(path, itemsize: int) -> Optional[np.ndarray]:
    """A ``.npy`` file of raw bytes (``|V<itemsize>``, what ``np.save`` writes of an ml_dtypes
    array) as unsigned integers of that size, its header's shape checked against the file's
    size before anything is allocated; None when it is not such a file."""
    fmt = np.lib.format
    try:
        with open(path, "rb") as f:
            version = fmt.read_magic(f)
            read = fmt.read_array_header_1_0 if version == (1, 0) else \
                fmt.read_array_header_2_0
            shape, fortran, dtype = read(f)
            offset, size = f.tell(), os.fstat(f.fileno()).st_size
            if dtype.kind != "V" or dtype.names is not None or dtype.itemsize != itemsize \
                    or fortran or not all(isinstance(d, int) and d >= 0 for d in shape):
                return None
            count = int(np.prod(shape, dtype=object))
            if offset + count * itemsize > size:
                return None
            return np.fromfile(f, dtype=np.dtype(f"u{itemsize}"), count=count).reshape(shape)
    except (OSError, ValueError, SyntaxError, TypeError):
        return None


__all__ = ["ml_dtype", "read_stored", "write_stored"]

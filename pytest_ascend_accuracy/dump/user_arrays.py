"""Arrays a user hands us as files (``.npy``, ``.npz``: inputs, labels, images, samples), read
so that a hostile or damaged file is our error naming it, never a numpy traceback or a
multi-terabyte allocation: each header is checked against the bytes the file (or the archive
member) holds before numpy allocates the shape, and nothing is unpickled.
"""
from __future__ import annotations

import zipfile
import zlib
from pathlib import Path
from typing import Dict

import numpy as np

from ..errors import DumpFormatError
from .dtypes import shape_problem
from .npy_dir import read_npy_layout


def read_npy(path, what: str = "a readable .npy array") -> np.ndarray:
    """One ``.npy`` file, read fully (``allow_pickle=False``) after its header was checked."""
    read_npy_layout(path)  # the header against the file size, before numpy allocates the shape
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise DumpFormatError(path, f"not {what} ({type(exc).__name__}: {exc})") from None


#: what a damaged .npz raises from numpy, zipfile (truncated archive, bad CRC, unsupported
#: compression) and zlib (corrupt deflate data)
_NPZ_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError)


def read_npz(path, what: str = "a readable .npz file") -> Dict[str, np.ndarray]:
    """Every array of a ``.npz`` file, each checked against its archive member first."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            for member in data.zip.infolist():
                _check_member(path, data.zip, member)
            arrays = {name: data[name] for name in data.files}
    except DumpFormatError:
        raise
    except _NPZ_ERRORS as exc:
        raise DumpFormatError(path, f"not {what} "
                                    f"({type(exc).__name__}: {exc})") from exc
    if not arrays:
        raise DumpFormatError(path, "the .npz file holds no arrays")
    return arrays


def _check_member(path: Path, archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> None:
    """An array's declared shape must fit in the bytes its archive member holds, checked
    before numpy allocates it: a 100-byte member declaring 2**40 floats raised MemoryError."""
    from numpy.lib import format as npy_format


    if not member.filename.endswith(".npy"):
        return
    with archive.open(member) as fh:
        version = npy_format.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = npy_format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, _, dtype = npy_format.read_array_header_2_0(fh)
        else:  # numpy reads what it knows; its own errors are caught by the caller
            return
        room = member.file_size - fh.tell()
    name = member.filename[:-4]
    problem = shape_problem(shape, dtype.itemsize)
    if problem:
        raise DumpFormatError(path, f"array {name!r}: {problem}")
    need = dtype.itemsize
    for d in shape:
        need *= int(d)
    if need > room:
        raise DumpFormatError(path, f"array {name!r} declares shape {list(shape)} of {dtype} "
                                    f"({need:,} bytes) but its member holds {max(room, 0):,}")

""".npy headers: shape, dtype, memory order and where the values start, read without the values.

numpy's canonical header (what ``np.save`` writes) is parsed with one regex; anything else goes
through numpy's own parser. Corrupt headers, object arrays, non-numeric dtypes, impossible
shapes and files shorter than their shape are ``DumpFormatError`` naming the file
(``checked_layout`` applies the same checks to a layout known from elsewhere, e.g. an index).
"""
from __future__ import annotations

import dataclasses
import os
import re
import tokenize
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from ..errors import DumpFormatError
from .dtypes import element_count, shape_problem

_NUMERIC_KINDS = "biufc"
#: what numpy's .npy header parser raises on corrupt headers: a truncated header of a version
#: 1.0/2.0 file goes through ``tokenize`` (TokenError), a dict with bytes keys fails sorting
#: (TypeError); found by the reliability fuzz suite, all reported as DumpFormatError
_NPY_ERRORS = (ValueError, OSError, EOFError, SyntaxError, TypeError, OverflowError,
               tokenize.TokenError)


@dataclass(frozen=True)
class NpyLayout:
    """What a ``.npy`` header says: shape, dtype, memory order and where the values start."""

    shape: Tuple[int, ...]
    dtype: np.dtype
    fortran_order: bool
    offset: int

    @property
    def count(self) -> int:
        return element_count(self.shape)


#: the header numpy writes, byte for byte (``{'descr': '<f4', 'fortran_order': False,
#: 'shape': (2, 3), }`` padded with spaces): parsed with one regex; anything else goes
#: through numpy's own (slower, ``ast``-based) parser
_CANONICAL_HEADER = re.compile(
    rb"\{'descr': '([<>|=]?[biufc][0-9]+)', 'fortran_order': (True|False), "
    rb"'shape': \(((?:0|[1-9][0-9]*),|(?:0|[1-9][0-9]*)(?:, (?:0|[1-9][0-9]*))+,?|)\), \} *\n")
_HEAD_BYTES = 4096  # one read covers the header of every file numpy writes for a dump tensor


def _fast_layout(head: bytes) -> Optional[NpyLayout]:
    """The layout from the first bytes of a file in numpy's canonical header, else None."""
    if head[:6] != b"\x93NUMPY" or len(head) < 12:
        return None
    major = head[6]
    if major == 1:
        start, hlen = 10, int.from_bytes(head[8:10], "little")
    elif major in (2, 3):
        start, hlen = 12, int.from_bytes(head[8:12], "little")
    else:
        return None
    m = _CANONICAL_HEADER.fullmatch(head, start, start + hlen)
    if m is None:
        return None
    try:
        dtype = np.dtype(m.group(1).decode("ascii"))
    except TypeError:
        return None
    shape = tuple(int(d) for d in m.group(3).split(b",") if d.strip())
    return NpyLayout(shape, dtype, m.group(2) == b"True", start + hlen)


def read_npy_layout(path) -> NpyLayout:
    """The header of a ``.npy`` file (no values are read); refuses object arrays and
    non-numeric dtypes, and reports a corrupt header as ``DumpFormatError``."""
    fmt = np.lib.format
    try:
        with open(path, "rb") as f:
            file_size = os.fstat(f.fileno()).st_size
            layout = _fast_layout(f.read(_HEAD_BYTES))
            if layout is None:
                f.seek(0)
                version = fmt.read_magic(f)
                if version == (1, 0):
                    shape, fortran, dtype = fmt.read_array_header_1_0(f)
                else:
                    shape, fortran, dtype = fmt.read_array_header_2_0(f)
                layout = NpyLayout(shape, dtype, bool(fortran), f.tell())
    except _NPY_ERRORS as exc:
        raise DumpFormatError(path, f"not a valid .npy file ({type(exc).__name__}: {exc})") from None
    return checked_layout(path, layout, file_size)


def checked_layout(path, layout: NpyLayout, file_size: int) -> NpyLayout:
    """``layout`` (a header of the file at ``path``, ``file_size`` bytes) if this package reads
    such a tensor, else the ``DumpFormatError`` ``read_npy_layout`` raises for it."""
    shape, dtype = layout.shape, layout.dtype
    if not isinstance(shape, tuple) or any(isinstance(d, bool) for d in shape):
        raise DumpFormatError(path, f"not a valid .npy file (shape is not valid: {shape!r})")
    if dtype.hasobject:
        raise DumpFormatError(path, "holds Python objects (a pickled object array); refused, "
                                    ".npy files are only read with allow_pickle=False")
    if dtype.kind not in _NUMERIC_KINDS:
        hint = ""
        if dtype.kind == "V" and dtype.names is None and dtype.itemsize in (1, 2):
            # numpy saves ml_dtypes' bfloat16 / float8 arrays as raw bytes (|V2, |V1)
            kind = "bfloat16" if dtype.itemsize == 2 else "float8"
            hint = (f"; it looks like an ml_dtypes {kind} array numpy saved as raw bytes: save "
                    "it as float32 (np.save(path, array.astype(np.float32)))")
        raise DumpFormatError(path, f"dtype {dtype} is not numeric or bool{hint}")
    problem = shape_problem(shape, dtype.itemsize)
    if problem:
        raise DumpFormatError(path, f"not a valid .npy file (shape: {problem})")
    if any(type(d) is not int for d in shape):
        layout = dataclasses.replace(layout, shape=tuple(int(d) for d in shape))
    need = layout.offset + layout.count * dtype.itemsize
    if need > file_size:
        raise DumpFormatError(path, f"truncated .npy file: header and shape {list(layout.shape)} x "
                                    f"{dtype} need {need} bytes, file has {file_size}")
    return layout


def read_npy_header(path) -> Tuple[Tuple[int, ...], np.dtype]:
    """Shape and dtype from a ``.npy`` header (nothing else is read); refuses object arrays."""
    layout = read_npy_layout(path)
    return layout.shape, layout.dtype


__all__ = ["NpyLayout", "checked_layout", "read_npy_header", "read_npy_layout"]

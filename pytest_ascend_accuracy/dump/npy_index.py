"""An index of an npy dump directory, so that reading it back lists no directory and parses no
``.npy`` header.

``NpyDumpWriter.index()`` describes what one writer wrote into a directory it started empty:
every stored file with its golden name and header (shape, dtype, memory order, where the values
start, its size), the ``input_refs.csv`` rows and the ``op_names.csv`` rows -- and, for a
writer that packed every tensor into one file (``NpyDumpWriter(pack=...)``), that file's name:
the listed names then only name the tensors, and the offsets are the pack's. ``write_index``
saves that as JSON; ``read_indexed_dir`` turns it into the DumpSet ``read_npy_dir`` gives for the
directory, through the same listing and DumpSet code (``classify_npy_files``,
``dumpset_of_files``, and each header through ``checked_layout``): only where the facts come
from differs. Nothing checks the index against the files: whoever keeps one must keep it with
them (the golden cache's manifest covers the index like every other file of its entry, so a
changed index is a corrupt entry and is rebuilt).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

from ..errors import DumpFormatError
from .model import DumpSet
from .npy_dir import classify_npy_files, dumpset_of_files
from .npy_header import NpyLayout, checked_layout

#: bump when the index's JSON changes
INDEX_VERSION = 1
#: where a cache entry keeps the index of its npy directory: next to it, under this name
INDEX_NAME = "npy_index.json"
#: the name of a golden cache entry's npy directory (``golden.onnxruntime_golden.DUMP_DIR``):
#: ``load_dump`` reads the entry (``.ascend-accuracy/golden/<k>/<key>/``) as that directory
ENTRY_NPY_DIR = "npy"


def write_index(path, index: dict) -> None:
    """Save ``NpyDumpWriter.index()`` as JSON at ``path`` (a private directory's file: written
    in place)."""
    text = json.dumps({"version": INDEX_VERSION, **index}, separators=(",", ":"))  # C encoder
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def read_indexed_dir(directory, index_path) -> DumpSet:
    """The DumpSet of the npy ``directory`` that the index at ``index_path`` describes."""
    directory = Path(directory)
    try:
        with open(index_path, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("version") != INDEX_VERSION:
            raise ValueError(f"index version {data.get('version')!r}, expected {INDEX_VERSION}")
        files: Dict[str, list] = data["files"]
        refs: List[Tuple[str, str]] = [(str(a), str(b)) for a, b in data["refs"]]
        names: Dict[str, str] = {str(k): str(v) for k, v in data["names"].items()}
        pack = _pack_of(directory, data.get("pack"))
        pack_size = pack.stat().st_size if pack is not None and files else 0
        layouts: Dict[str, Tuple[NpyLayout, int]] = {}  # by stored name
        dtypes: Dict[str, np.dtype] = {}
        resolved = []
        for stored in sorted(files):  # the order read_npy_dir lists them in
            if "/" in stored or "\\" in stored or stored in (".", ".."):  # as listing finds
                raise ValueError(f"file {stored!r} is not a file name of the directory itself")
            real, shape, descr, fortran, offset, size = files[stored]
            dtype = dtypes.get(descr)
            if dtype is None:
                dtype = dtypes[descr] = np.dtype(descr)
            layouts[stored] = (NpyLayout(tuple(int(d) for d in shape), dtype, bool(fortran),
                                       int(offset)), int(size))
            if stored.endswith(".npy") and not stored.startswith("."):
                resolved.append((stored, real))
        for name, producer in refs:
            if producer not in layouts:
                raise ValueError(f"input {name!r} refers to {producer!r}, not an indexed file")
            resolved.append((producer, name))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DumpFormatError(index_path, f"not a valid npy dump index "
                                          f"({type(exc).__name__}: {exc})") from None

    checked: Dict[str, NpyLayout] = {}  # a stored tensor that inputs refer to is checked once

    def layout_of(name: str) -> NpyLayout:
        if name not in checked:
            layout, size = layouts[name]
            # a pack's tensors must lie within the pack (errors name the pack and the tensor)
            checked[name] = (checked_layout(f"{pack}#{name}", layout, pack_size) if pack is not None
                             else checked_layout(directory / name, layout, size))
        return checked[name]

    kind, listed, skipped = classify_npy_files(resolved, lambda: names)
    return dumpset_of_files(directory, kind, listed, skipped, layout_of, pack)


def packed_dir_index(directory) -> Optional[Path]:
    """The index (``INDEX_NAME`` next to ``directory``) when ``directory`` is the npy directory
    of a packed entry (it holds the pack that index names and no ``.npy`` file), else None: such
    a directory is readable only through its index."""
    directory = Path(directory)
    index = directory.parent / INDEX_NAME
    try:
        if not index.is_file() or any(directory.glob("*.npy")):
            return None
        with open(index, encoding="utf-8") as f:
            pack = json.load(f).get("pack")
    except (OSError, ValueError, AttributeError):
        return None
    return index if isinstance(pack, str) and (directory / pack).is_file() else None


def pack_name_problem(name) -> Optional[str]:
    """Why ``name`` cannot name a pack (None if it can): it must be a plain file name in the
    directory itself, not hidden and not a ``.npy`` file (a directory holding ``.npy`` files is
    read by listing them). The writer and the index reader both hold to this."""
    if not isinstance(name, str) or not name or "/" in name or "\\" in name:  # either os.sep
        return "not a plain file name"
    if name.startswith(".") or name.endswith(".npy"):
        return "a hidden or .npy file name"
    return None


def _pack_of(directory: Path, name) -> Optional[Path]:
    if name is None:
        return None
    problem = pack_name_problem(name)
    if problem is not None:
        raise ValueError(f"pack {name!r}: {problem}")
    return directory / name


__all__ = ["ENTRY_NPY_DIR", "INDEX_NAME", "INDEX_VERSION", "pack_name_problem", "packed_dir_index",
           "read_indexed_dir", "write_index"]

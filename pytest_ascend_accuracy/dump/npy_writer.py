"""Writing directories of ``.npy`` files in ONNX golden naming (``npy_dir`` reads them; the
naming, ``input_refs.csv`` and the pack are described there and in docs/formats.md §7).

``write_npy`` is ``np.save`` whose write errors carry their errno; ``NpyDumpWriter`` writes a
dump op by op, a file per tensor or, in a private directory, every tensor into one pack.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import DumpFormatError
from .dtypes import npy_values
from .golden_names import StemAllocator, read_names
from .layout import MAX_NAME_BYTES, _Clock, append_mapping
from .npy_dir import INPUT_REFS_FILE
from .npy_index import pack_name_problem


class _FileWrites:
    """Forwards ``write`` to a real file object, so that numpy's ``write_array`` takes its
    chunked ``write`` path (16 MiB at a time) instead of ``ndarray.tofile``: on a full disk
    ``tofile`` raises an OSError without errno ("262144 requested and 130544 written"),
    while ``file.write`` raises ENOSPC (or EDQUOT, EIO) like every other write."""

    def __init__(self, f):
        self._f = f

    def write(self, data):
        return self._f.write(data)


_WRITE_CHUNK = 16 << 20
#: a pack record starts at a multiple of this (numpy's .npy header pads to the same: values align)
PACK_ALIGN = 64


def write_npy(f, array) -> int:
    """``np.save(f, array, allow_pickle=False)`` whose write errors carry their errno; returns
    the header's length in bytes (where the values start).

    A C-contiguous array (every tensor a run returns) is written from its own memory in 16 MiB
    slices, without the copy per chunk that ``write_array``'s buffered path makes."""
    fmt = np.lib.format
    arr = np.asanyarray(array)
    if not arr.flags.c_contiguous or arr.dtype.hasobject or type(arr) is not np.ndarray:
        counted = _Tally(f)
        fmt.write_array(_FileWrites(counted), arr, allow_pickle=False)
        return counted.n - arr.nbytes
    header = fmt.header_data_from_array_1_0(arr)
    counted = _Tally(f)
    try:
        fmt.write_array_header_1_0(counted, header)
    except ValueError:  # a header over 64 KiB (a very long shape) needs format 2.0
        fmt.write_array_header_2_0(counted, header)
    offset = counted.n
    data = memoryview(arr.reshape(-1).view(np.uint8))
    for start in range(0, len(data), _WRITE_CHUNK):
        f.write(data[start:start + _WRITE_CHUNK])
    return offset


class _Tally:
    """Forwards ``write`` to ``f``, counting the bytes and feeding them to ``hasher`` if any."""

    __slots__ = ("_f", "n", "hasher")

    def __init__(self, f, hasher=None):
        self._f, self.n, self.hasher = f, 0, hasher

    def write(self, data):
        out = self._f.write(data)
        self.n += memoryview(data).nbytes
        if self.hasher is not None:
            self.hasher.update(data)
        return out


class NpyDumpWriter:
    """Writes an npy dump directory in ONNX golden naming, op by op (graph order = write order).

    Op names become file-name stems injectively (``golden_names``: msit's sanitised form where
    it is unambiguous, escaped otherwise), so every op reads back under its own name; one op
    written twice raises ``DumpFormatError`` instead of silently mixing files.

    In a directory others can see, each file appears whole (written to a hidden temp file and
    renamed) and ``input_refs.csv`` gets each row as it occurs. ``private=True`` is for a
    directory no one reads until the writer is done and the directory is renamed into place as
    a whole (a cache build's temp dir): files are written in place, and ``input_refs.csv`` is
    written once by ``close()`` (not after a failed write: the directory is dropped then). A
    file whose write fails is removed in both modes. ``hasher`` (``core.cache.new_hasher``)
    hashes each file's bytes as they are written: ``digests`` then holds {file name: (size,
    digest)}. ``index()`` describes what was written for ``npy_index``.

    ``pack="name"`` (private directories only) appends every tensor, as the ``.npy`` record it
    would have been, to the one file ``name`` instead of a file each: creating a file costs
    about as much as writing 100 KB, and a golden holds hundreds of tensors, half of them
    small constants. Each record starts at a multiple of ``PACK_ALIGN`` bytes (zeros between),
    so the values, after numpy's padded header, are aligned as ``np.load`` would give them.
    Such a directory is read through its index only (``npy_index``), which says where each
    tensor's values lie in the pack; ``digests`` then holds the pack's. After a failed append
    or ``close()`` the pack takes nothing more, and after a failed append ``index()`` is None.
    """

    def __init__(self, directory, *, private: bool = False, hasher: Optional[Callable] = None,
                 pack: Optional[str] = None):
        if pack is not None:
            problem = pack_name_problem(pack) or (None if private else "needs a private directory")
            if problem is not None:
                raise ValueError(f"pack {pack!r}: {problem}")
        self.pack = pack
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.private = private
        self._hasher = hasher
        self._pack_out: Optional[_Tally] = None  # the open pack (created even if nothing comes)
        if pack is not None:
            self._pack_out = _Tally(open(self.directory / pack, "wb"),
                                    hasher() if hasher is not None else None)
        self._clock = _Clock()
        self._names: Dict[str, str] = {}  # op name -> file-name stem
        self._stems = StemAllocator(self.directory)
        self._long = 0
        self.written: List[Path] = []
        self.digests: Dict[str, Tuple[int, str]] = {}
        #: stored file name -> [golden name, shape, descr, fortran order, values offset, size]
        self._files: Dict[str, list] = {}
        self._refs: List[Tuple[str, str]] = []  # (input file name, producer's stored name)
        self._pending_refs: List[Tuple[str, str]] = []
        self._indexable = True

    def write_op(self, op_name: str, inputs: Sequence[Union[np.ndarray, Path]] = (),
                 outputs: Sequence[np.ndarray] = (), *, timestamp_us: Optional[int] = None
                 ) -> List[Path]:
        """Write the op's outputs (and inputs, if given); returns the written paths (outputs
        first, in order). An input given as a ``Path`` (a file this writer wrote, e.g. another
        op's output) is not written again: a row in ``input_refs.csv`` points at that file. A
        ``None`` holds the place of a slot with no tensor (an omitted optional input or output:
        ``LSTM`` outputs ``["", "Y_h", "Y_c"]``), so every tensor keeps its slot's index, as
        ATC and msit number them."""
        if op_name in self._names:
            raise DumpFormatError(self.directory, f"op {op_name!r} written twice")
        key = self._names[op_name] = self._stems.stem(op_name)
        ts = self._clock.next(timestamp_us)
        paths = []
        for j, arr in enumerate(outputs):
            if arr is not None:
                paths.append(self._save(f"{key}.{j}.{ts}.npy", arr, ts))
        for i, arr in enumerate(inputs):
            name = f"input_{key}.{i}.{ts}.npy"
            if arr is None:
                continue
            if isinstance(arr, Path):
                self._refer(name, arr)
            else:
                paths.append(self._save(name, arr, ts))
        self.written += paths
        return paths

    def _save(self, name: str, array, ts: int) -> Path:
        arr = npy_values(np.asarray(array))  # bfloat16, float8: as float32, the values they hold
        if arr.dtype.hasobject:
            raise DumpFormatError(self.directory / name, "object arrays cannot be dumped")
        if self.pack is not None:
            return self._append(name, arr)
        stored = name
        if len(name.encode("utf-8")) > MAX_NAME_BYTES:
            self._long += 1
            stored = f"{ts}{self._long}.npy"
        path = self.directory / stored
        target = path if self.private else self.directory / f".{stored[:200]}.{os.getpid()}.tmp"
        hasher = self._hasher() if self._hasher is not None else None
        try:
            with open(target, "wb") as f:
                counted = _Tally(f, hasher)
                offset = write_npy(counted, arr)
            if not self.private:
                os.replace(target, path)
        except BaseException:
            try:
                target.unlink()
            except OSError:
                pass
            raise
        if stored != name:
            append_mapping(self.directory, stored, name)
        if hasher is not None:
            self.digests[stored] = (counted.n, hasher.hexdigest())
        # what write_npy's header says (numpy's header_data_from_array_1_0)
        descr = np.lib.format.dtype_to_descr(arr.dtype)
        if not isinstance(descr, str):
            self._indexable = False  # structured dtypes: listed by reading the directory
        fortran = not arr.flags.c_contiguous and arr.flags.f_contiguous
        self._files[stored] = [name, list(arr.shape), descr, fortran, offset, counted.n]
        return path

    def _append(self, name: str, arr: np.ndarray) -> Path:
        """Pack mode: the tensor's ``.npy`` record appended to the pack; returns the path that
        names it (no such file exists)."""
        descr = np.lib.format.dtype_to_descr(arr.dtype)
        if not isinstance(descr, str):
            raise DumpFormatError(self.directory / name, f"dtype {arr.dtype} cannot be packed "
                                                         f"(a structured dtype)")
        out = self._pack_out
        if out is None:
            raise DumpFormatError(self.directory / self.pack, f"cannot append {name!r}: the pack "
                                  "is closed, or an earlier write to it failed")
        try:
            out.write(bytes(-out.n % PACK_ALIGN))
            start = out.n
            offset = start + write_npy(out, arr)
        except BaseException:  # the pack's end is unknown now: nothing more, and no index
            self._indexable = False
            self._close_pack(complete=False)
            raise
        fortran = not arr.flags.c_contiguous and arr.flags.f_contiguous
        self._files[name] = [name, list(arr.shape), descr, fortran, offset, out.n - start]
        return self.directory / name

    def _refer(self, name: str, target: Path) -> None:
        if target.parent != self.directory or not (
                target.name in self._files or target.is_file()):
            raise DumpFormatError(self.directory / name, f"input refers to {str(target)!r}, "
                                                         f"which is not a file of this directory")
        self._refs.append((name, target.name))
        if self.private:
            self._pending_refs.append((name, target.name))
            return
        with open(self.directory / INPUT_REFS_FILE, "a", newline="", encoding="utf-8") as f:
            csv.writer(f).writerow([name, target.name])

    def index(self) -> Optional[dict]:
        """What this writer wrote into a directory it started empty, for ``npy_index`` (None
        when something it wrote can only be described by reading the directory)."""
        if not self._indexable:
            return None
        index = {"files": self._files, "refs": self._refs, "names": read_names(self.directory)}
        if self.pack is not None:
            index["pack"] = self.pack
        return index

    def close(self) -> None:
        """Writes a private directory's ``input_refs.csv`` (the only thing buffered) and
        closes the pack, if any."""
        self._close_pack(complete=True)
        rows, self._pending_refs = self._pending_refs, []
        if self.pack is not None:  # the index holds them: a row naming no file would be wrong
            return
        if not rows:
            return
        with open(self.directory / INPUT_REFS_FILE, "a", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerows([list(r) for r in rows])

    def __enter__(self) -> "NpyDumpWriter":
        return self

    def _close_pack(self, complete: bool) -> None:
        out, self._pack_out = self._pack_out, None
        if out is None:
            return
        out._f.close()
        if complete and out.hasher is not None:
            self.digests[self.pack] = (out.n, out.hasher.hexdigest())

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is None:
            self.close()
        else:  # the private directory is dropped: only the file handle needs closing
            self._close_pack(complete=False)


__all__ = ["NpyDumpWriter", "PACK_ALIGN", "write_npy"]

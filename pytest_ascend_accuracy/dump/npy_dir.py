"""Directories of ``.npy`` files: ONNX golden naming (docs/formats.md §7) and msaccucmp's converted
NPU naming (docs/formats.md §8).

* Golden: output ``j`` of node ``N`` -> ``{N'}.{j}.{ts}.npy``; input ``i`` -> ``input_{N'}.{i}.{ts}.npy``,
  ``N'`` = ``sanitize(N)`` as msit writes it, or an escaped form where that would be ambiguous
  (``golden_names``), ``ts`` a 16-digit microsecond timestamp; a file name over 255 bytes is
  stored as ``{ts}{k}.npy`` with a ``new,old`` row in ``mapping.csv``. Graph order = timestamp order.
* Converted: ``{op_type}.{op_name}.{task}.{stream}.{ts}.{output|input}.{idx}.npy`` (arrays still
  in the dump's device shape).

An input that is another op's output in the same directory may be stored once, as that op's
output file, with a row ``input_name,producer_file`` in ``input_refs.csv`` (``input_name`` the
golden name the input file would have had, ``producer_file`` the stored file it reads); the reader
lists such a row as if the input file were there, so the DumpSet is the same either way.

A file ``input_X.{i}.{ts}.npy`` is read as input ``i`` of op ``X`` when ``X`` has output files,
and as an output of an op named ``input_X`` otherwise (msit's naming itself cannot tell; our
writer escapes such names, ``golden_names``, so its directories are never ambiguous).
Every file is opened with ``allow_pickle=False``; object arrays are refused with an error naming
the file. Only ``.npy`` headers are read (``npy_header``) when the directory is loaded, or none
when an index describes it (``npy_index``); values are memory-mapped
on ``TensorRef.load()``.
"""
from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import DumpFormatError
from .file_span import FileSpan, SpanLoader
from .golden_names import INPUT_PREFIX, StemAllocator, op_of_stem, read_names
from .layout import MAPPING_FILE, MAX_NAME_BYTES, _Clock, append_mapping, csv_rows, \
    parse_file_name, read_mapping
from .model import DumpSet, OpRecord, TensorRef
from .npy_header import _NPY_ERRORS, NpyLayout, read_npy_header, read_npy_layout

GOLDEN_PATTERN = re.compile(r"^(.+)\.([0-9]+)\.([0-9]{1,255})\.npy$")
CONVERTED_PATTERN = re.compile(r"^(.+)\.(output|input)\.([0-9]+)\.npy$")
INPUT_REFS_FILE = "input_refs.csv"


def load_npy(path) -> np.ndarray:
    """Memory-map one ``.npy`` file read-only (``allow_pickle=False``)."""
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except _NPY_ERRORS as exc:
        raise DumpFormatError(path, f"cannot load .npy: {exc}") from None


_DTYPE_NAMES: Dict[np.dtype, str] = {}


def map_packed(path: str, layout: NpyLayout, name: str = "") -> np.ndarray:
    """Memory-map, read-only, the tensor ``name`` whose values ``layout`` places in the pack
    file at ``path`` (``NpyDumpWriter(pack=...)``)."""
    if layout.count == 0:  # nothing to map (mmap refuses a zero length)
        empty = np.empty(layout.shape, layout.dtype)
        empty.flags.writeable = False
        return empty
    try:
        return np.memmap(path, dtype=layout.dtype, mode="r", offset=layout.offset,
                         shape=layout.shape, order="F" if layout.fortran_order else "C")
    except (OSError, ValueError) as exc:
        raise DumpFormatError(f"{path}#{name}" if name else path,
                              f"cannot map the tensor's values at byte {layout.offset}: {exc}") from None


def _ref(path: Path, kind: str, index: int, layout: NpyLayout, pack: Optional[Path] = None
         ) -> TensorRef:
    """``pack``: the file that holds the values when ``path`` names a tensor of a pack."""
    if pack is None:
        p = source = str(path)
        load = lambda: load_npy(p)  # noqa: E731
    else:
        p = str(pack)
        source = f"{p}#{path.name}"
        load = lambda: map_packed(p, layout, path.name)  # noqa: E731
    name = _DTYPE_NAMES.get(layout.dtype)
    if name is None:
        name = _DTYPE_NAMES[layout.dtype] = layout.dtype.name
    # C-order values are the tensor as stored: the compare engine may read them straight into
    # its own buffer (file_span); ``load()`` memory-maps as always
    plain = not layout.fortran_order or len(layout.shape) <= 1
    span = FileSpan(p, layout.offset, layout.dtype, layout.count) if plain else None
    return TensorRef(kind=kind, index=index, dtype=name, shape=layout.shape,
                     loader=SpanLoader(load, span), source=source)


# --------------------------------------------------------------------------- listing
@dataclass(frozen=True)
class NpyFile:
    path: Path
    op: str  # sanitised op name (golden) or op_name part (converted)
    kind: str
    index: int
    timestamp: int
    op_type: str = ""


def _resolve(directory: Path) -> List[Tuple[Path, str]]:
    names = sorted(e.name for e in os.scandir(directory) if e.is_file() and e.name.endswith(".npy")
                   and not e.name.startswith("."))
    mapping = read_mapping(directory) if any(n[:-4].isdigit() for n in names) else {}
    out = []
    for name in names:
        real = mapping.get(name) or mapping.get(name[:-4]) or name
        out.append((directory / name, real))
    return out + read_input_refs(directory)


def read_input_refs(directory) -> List[Tuple[Path, str]]:
    """``input_refs.csv`` of ``directory`` as (producer file path, input file name) pairs; [] when
    absent. A row naming a producer file that is not in the directory is a ``DumpFormatError``."""
    directory = Path(directory)
    path = directory / INPUT_REFS_FILE
    if not path.is_file():
        return []
    out = []
    for line, row in csv_rows(path):
        if not row or not "".join(row).strip():
            continue
        if len(row) != 2 or not GOLDEN_PATTERN.match(row[0]) or not row[0].startswith(INPUT_PREFIX):
            raise DumpFormatError(path, f"line {line}: expected 'input_<op>.<i>.<ts>.npy,"
                                        f"<producer file>', got {row!r}")
        producer = row[1]
        if os.sep in producer or "/" in producer or producer.startswith(".") \
                or not (directory / producer).is_file():
            raise DumpFormatError(path, f"line {line}: input {row[0]!r} refers to "
                                        f"{producer!r}, which is not a file of this directory")
        out.append((directory / producer, row[0]))
    return out


def list_npy_files(directory) -> Tuple[str, List[NpyFile], List[Tuple[str, str]]]:
    """(naming kind ``golden``/``converted``, files, skipped (name, reason))."""
    directory = Path(directory)
    return classify_npy_files(_resolve(directory), lambda: read_names(directory))


def classify_npy_files(resolved: List[Tuple[Path, str]], names: Callable[[], Dict[str, str]]
                       ) -> Tuple[str, List[NpyFile], List[Tuple[str, str]]]:
    """``list_npy_files`` of a listing already resolved to (path, real file name) pairs;
    ``names()`` gives ``op_names.csv`` (only asked for golden naming)."""
    converted, golden, skipped = [], [], []
    for path, real in resolved:
        m = CONVERTED_PATTERN.match(real)
        fields = parse_file_name(m.group(1)) if m else None
        if fields is not None:
            converted.append(NpyFile(path, fields.base_op_name, m.group(2),
                                     int(m.group(3)), fields.timestamp, fields.op_type))
            continue
        g = GOLDEN_PATTERN.match(real)
        if g:
            golden.append((path, g.group(1), int(g.group(2)), int(g.group(3))))
        else:
            skipped.append((path.name, "not a golden or converted dump .npy name"))
    if converted and not golden:
        return "converted", converted, skipped
    out_stems = {stem for _, stem, _, _ in golden if not stem.startswith(INPUT_PREFIX)}
    names = names() if golden else {}
    files = []
    for path, stem, idx, ts in golden:
        op, kind = op_of_stem(stem, out_stems, names)
        files.append(NpyFile(path, op, kind, idx, ts))
    skipped += [(f.path.name, "converted NPU name among golden files") for f in converted]
    return "golden", files, skipped


def has_npy_dump(directory) -> bool:
    """Whether ``directory`` directly holds ``.npy`` files in a dump naming."""
    try:
        return bool(list_npy_files(directory)[1])
    except OSError:
        return False


def read_npy_dir(directory) -> DumpSet:
    """An npy dump directory as a ``DumpSet`` in timestamp (graph) order. When one tensor slot has
    several files (repeated dumps), the latest timestamp wins and ``meta['repeated']`` says so."""
    directory = Path(directory)
    kind, files, skipped = list_npy_files(directory)
    return dumpset_of_files(directory, kind, files, skipped, read_npy_layout)


def dumpset_of_files(directory: Path, kind: str, files: List[NpyFile],
                     skipped: List[Tuple[str, str]], layout_of: Callable[[Path], NpyLayout],
                     pack: Optional[Path] = None) -> DumpSet:
    """``read_npy_dir`` of listed files whose headers ``layout_of(path)`` gives; ``pack``: the
    one file that holds every listed tensor (the listed paths then only name them)."""
    if not files:
        raise DumpFormatError(directory, "empty dump directory: no .npy dump files in it")
    slots: Dict[str, Dict[Tuple[str, int], NpyFile]] = {}
    first_ts: Dict[str, int] = {}
    types: Dict[str, str] = {}
    repeated: Dict[str, int] = {}
    for f in sorted(files, key=lambda f: (f.timestamp, f.path.name)):
        op = slots.setdefault(f.op, {})
        if (f.kind, f.index) in op:
            repeated[f.op] = repeated.get(f.op, 1) + 1
        op[(f.kind, f.index)] = f
        first_ts.setdefault(f.op, f.timestamp)
        types.setdefault(f.op, f.op_type)
    ops = []
    last_ts = {name: max(f.timestamp for f in s.values()) for name, s in slots.items()}
    key = (lambda n: (last_ts[n], n)) if repeated else (lambda n: (first_ts[n], n))
    for order, name in enumerate(sorted(slots, key=key)):
        s = slots[name]
        ins = tuple(_ref(s[k].path, "input", k[1], layout_of(s[k].path), pack)
                    for k in sorted(s) if k[0] == "input")
        outs = tuple(_ref(s[k].path, "output", k[1], layout_of(s[k].path), pack)
                     for k in sorted(s) if k[0] == "output")
        ops.append(OpRecord(name=name, op_type=types[name], inputs=ins, outputs=outs, order=order,
                            timestamp=first_ts[name], source=str(directory)))
    meta = {"naming": kind}
    if repeated:
        meta["repeated"] = repeated
    if skipped:
        meta["skipped_files"] = skipped
    return DumpSet(ops, kind="npy", root=str(directory), meta=meta)


# --------------------------------------------------------------------------- writing
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
        if pack is not None and (not private or not pack or "/" in pack or os.sep in pack
                                 or pack.startswith(".") or pack.endswith(".npy")):
            raise ValueError(f"pack {pack!r}: a plain file name (not .npy), in a private directory")
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
        op's output) is not written again: a row in ``input_refs.csv`` points at that file."""
        if op_name in self._names:
            raise DumpFormatError(self.directory, f"op {op_name!r} written twice")
        key = self._names[op_name] = self._stems.stem(op_name)
        ts = self._clock.next(timestamp_us)
        paths = []
        for j, arr in enumerate(outputs):
            paths.append(self._save(f"{key}.{j}.{ts}.npy", arr, ts))
        for i, arr in enumerate(inputs):
            name = f"input_{key}.{i}.{ts}.npy"
            if isinstance(arr, Path):
                self._refer(name, arr)
            else:
                paths.append(self._save(name, arr, ts))
        self.written += paths
        return paths

    def _save(self, name: str, array, ts: int) -> Path:
        arr = np.asarray(array)
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


__all__ = ["NpyDumpWriter", "read_npy_dir", "list_npy_files", "has_npy_dump", "read_npy_header",
           "read_npy_layout", "NpyLayout",
           "load_npy", "map_packed", "write_npy", "PACK_ALIGN", "GOLDEN_PATTERN", "CONVERTED_PATTERN", "MAPPING_FILE",
           "INPUT_REFS_FILE", "read_input_refs"]

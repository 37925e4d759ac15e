"""Directories of ``.npy`` files: ONNX golden naming (docs/formats.md §7) and msaccucmp's converted
NPU naming (docs/formats.md §8).

* Golden: output ``j`` of node ``N`` -> ``{N'}.{j}.{ts}.npy``; input ``i`` -> ``input_{N'}.{i}.{ts}.npy``,
  ``N'`` = ``sanitize(N)`` as msit writes it, or an escaped form where that would be ambiguous
  (``golden_names``), ``ts`` a 16-digit microsecond timestamp; a file name over 255 bytes is
  stored as ``{ts}{k}.npy`` with a ``new,old`` row in ``mapping.csv``. Graph order = timestamp order.
* Converted: ``{op_type}.{op_name}.{task}.{stream}.{ts}.{output|input}.{idx}.npy`` (arrays still
  in the dump's device shape), or with ``convert -f FORMAT`` ``...{idx}.{AxBxC}.npy`` (converted
  to that format; the shape suffix is only read past). Files of one op name but of several op
  types or tasks are several ops (``split_converted``).

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

import os
import re
from pathlib import Path
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from ..errors import DumpFormatError
from .file_span import FileSpan, SpanLoader
from .golden_names import INPUT_PREFIX, op_of_stem, output_stems, read_names
from .layout import MAPPING_FILE, name_table_rows, parse_file_name, read_mapping
from .model import DumpSet, OpRecord, TensorRef
from .npy_header import _NPY_ERRORS, NpyLayout, read_npy_header, read_npy_layout

GOLDEN_PATTERN = re.compile(r"^(.+)\.([0-9]+)\.([0-9]{1,255})\.npy$")
CONVERTED_PATTERN = re.compile(r"^(.+)\.(output|input)\.([0-9]+)\.npy$")
#: ``msaccucmp convert -f FORMAT``: the array's shape joined by ``x`` before ``.npy`` (empty for
#: a scalar: ``...output.0..npy``; ``conversion/shape_format_conversion.py _save_to_file``)
CONVERTED_SHAPE_PATTERN = re.compile(
    r"^(.+)\.(output|input)\.([0-9]+)\.((?:[0-9]+(?:x[0-9]+)*)?)\.npy$")
INPUT_REFS_FILE = "input_refs.csv"
#: what this package's stored golden records beside its files (``golden/stored_record.py``): a
#: directory holding it names unnamed ONNX nodes as ATC does (``compare.matching``)
GOLDEN_RECORD = "golden.json"


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


def _ref(directory: str, name: str, kind: str, index: int, layout: NpyLayout,
         pack: Optional[str] = None) -> TensorRef:
    """The tensor stored as ``name`` in ``directory``; ``pack``: the file that holds the values
    when ``name`` names a tensor of a pack."""
    if pack is None:
        p = source = str(Path(directory) / name)
        load = lambda: load_npy(p)  # noqa: E731
    else:
        p = pack
        source = f"{p}#{name}"
        load = lambda: map_packed(p, layout, name)  # noqa: E731
    dtype_name = _DTYPE_NAMES.get(layout.dtype)
    if dtype_name is None:
        dtype_name = _DTYPE_NAMES[layout.dtype] = layout.dtype.name
    # C-order values are the tensor as stored: the compare engine may read them straight into
    # its own buffer (file_span); ``load()`` memory-maps as always
    plain = not layout.fortran_order or len(layout.shape) <= 1
    span = FileSpan(p, layout.offset, layout.dtype, layout.count) if plain else None
    return TensorRef(kind=kind, index=index, dtype=dtype_name, shape=layout.shape,
                     loader=SpanLoader(load, span), source=source)


# --------------------------------------------------------------------------- listing
class NpyFile(NamedTuple):
    """One listed tensor file of a directory (a tuple: a golden has thousands)."""

    name: str  # the stored file's name in the directory (an input ref: its producer's file)
    op: str  # sanitised op name (golden) or op_name part (converted)
    kind: str
    index: int
    timestamp: int
    op_type: str = ""
    task: Tuple[int, int] = (0, 0)  # converted: (task id, stream id) of the dump file


def _resolve(directory: Path) -> List[Tuple[str, str]]:
    names = sorted(e.name for e in os.scandir(directory) if e.is_file() and e.name.endswith(".npy")
                   and not e.name.startswith("."))
    mapping = read_mapping(directory) if any(n[:-4].isdigit() for n in names) else {}
    out = []
    for name in names:
        real = mapping.get(name) or mapping.get(name[:-4]) or name
        out.append((name, real))
    return out + read_input_refs(directory)


def read_input_refs(directory) -> List[Tuple[str, str]]:
    """``input_refs.csv`` of ``directory`` as (producer file name, input file name) pairs; []
    when absent. A row naming a producer file that is not in the directory is a
    ``DumpFormatError``."""
    directory = Path(directory)
    path = directory / INPUT_REFS_FILE
    if not path.is_file():
        return []
    out = []
    for line, row in name_table_rows(path):
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
        out.append((producer, row[0]))
    return out


def list_npy_files(directory) -> Tuple[str, List[NpyFile], List[Tuple[str, str]]]:
    """(naming kind ``golden``/``converted``, files, skipped (name, reason))."""
    directory = Path(directory)
    return classify_npy_files(_resolve(directory), lambda: read_names(directory))


def classify_npy_files(resolved: List[Tuple[str, str]], names: Callable[[], Dict[str, str]]
                       ) -> Tuple[str, List[NpyFile], List[Tuple[str, str]]]:
    """``list_npy_files`` of a listing already resolved to (stored file name, real file name)
    pairs; ``names()`` gives ``op_names.csv`` (only asked for golden naming)."""
    converted, golden, skipped = [], [], []
    for stored, real in resolved:
        m = CONVERTED_PATTERN.match(real)
        fields = parse_file_name(m.group(1)) if m else None
        if fields is None:  # convert -f: the shape suffix is only part of the name
            m = CONVERTED_SHAPE_PATTERN.match(real)
            fields = parse_file_name(m.group(1)) if m else None
        if fields is not None:
            converted.append(NpyFile(stored, fields.base_op_name, m.group(2),
                                     int(m.group(3)), fields.timestamp, fields.op_type,
                                     (fields.task_id, fields.stream_id)))
            continue
        g = GOLDEN_PATTERN.match(real)
        if g:
            golden.append((stored, g.group(1), int(g.group(2)), int(g.group(3))))
        else:
            skipped.append((stored, _unread_why(stored, real)))
    if converted and not golden:
        return "converted", converted, skipped
    out_stems = output_stems({stem for _, stem, _, _ in golden})
    names = names() if golden else {}
    files = []
    for stored, stem, idx, ts in golden:
        op, kind = op_of_stem(stem, out_stems, names)
        files.append(NpyFile(stored, op, kind, idx, ts))
    skipped += [(f.name, "converted NPU name among golden files") for f in converted]
    return "golden", files, skipped


_NO_TIMESTAMP = re.compile(r"^(.+)\.([0-9]+)\.npy$")


def _unread_why(stored: str, real: str) -> str:
    """Why a listed ``.npy`` file is not read as a tensor (msaccucmp skips such files with a
    warning too: ``dump_parse/dump.py _handle_one_file``)."""
    if stored[:-4].isdigit() and real == stored:
        return (f"an all-digit name stands for the name {MAPPING_FILE} gives it, and "
                f"{MAPPING_FILE} is missing or does not list it")
    if _NO_TIMESTAMP.match(real):
        return "no timestamp: golden names are {op}.{output}.{timestamp}.npy"
    return ("not a golden ({op}.{output}.{timestamp}.npy) or converted "
            "({dump file}.{output|input}.{i}.npy) name")


def has_npy_dump(directory) -> bool:
    """Whether ``directory`` directly holds ``.npy`` files in a dump naming."""
    try:
        return bool(list_npy_files(directory)[1])
    except OSError:
        return False


def read_npy_dir(directory) -> DumpSet:
    """An npy dump directory as a ``DumpSet`` in timestamp (graph) order. When one tensor slot has
    several files (repeated dumps), the latest timestamp wins and ``meta['repeated']`` says so
    (``meta['repeated_files']``: {op: the stored names of its repeated slots' files, in
    timestamp order})."""
    directory = Path(directory)
    kind, files, skipped = list_npy_files(directory)
    dump = dumpset_of_files(directory, kind, files, skipped,
                            lambda name: read_npy_layout(directory / name))
    if kind == "golden" and (directory / GOLDEN_RECORD).is_file():
        dump.meta["golden_record"] = str(directory / GOLDEN_RECORD)  # this package wrote it
    return dump


def dumpset_of_files(directory: Path, kind: str, files: List[NpyFile],
                     skipped: List[Tuple[str, str]], layout_of: Callable[[str], NpyLayout],
                     pack: Optional[Path] = None) -> DumpSet:
    """``read_npy_dir`` of the files listed in ``directory``, whose headers ``layout_of(stored
    file name)`` gives; ``pack``: the one file that holds every listed tensor (the listed names
    then only name them)."""
    if not files:
        raise DumpFormatError(directory, "empty dump directory: no .npy dump files in it")
    unpaired: Dict[str, str] = {}
    if kind == "converted":
        files, unpaired = split_converted(files)
    slots: Dict[str, Dict[Tuple[str, int], NpyFile]] = {}
    first_ts: Dict[str, int] = {}
    types: Dict[str, str] = {}
    repeated: Dict[str, int] = {}
    repeated_files: Dict[str, Dict[str, None]] = {}  # op -> its repeated slots' files, in order
    for f in sorted(files, key=lambda f: (f.timestamp, f.name)):
        op = slots.setdefault(f.op, {})
        if (f.kind, f.index) in op:
            repeated[f.op] = repeated.get(f.op, 1) + 1
            seen = repeated_files.setdefault(f.op, {})
            seen[op[(f.kind, f.index)].name] = None
            seen[f.name] = None
        op[(f.kind, f.index)] = f
        first_ts.setdefault(f.op, f.timestamp)
        types.setdefault(f.op, f.op_type)
    ops = []
    last_ts = {name: max(f.timestamp for f in s.values()) for name, s in slots.items()}
    key = (lambda n: (last_ts[n], n)) if repeated else (lambda n: (first_ts[n], n))
    where = str(directory)
    packed = None if pack is None else str(pack)
    for order, name in enumerate(sorted(slots, key=key)):
        s = slots[name]
        ins = tuple(_ref(where, s[k].name, "input", k[1], layout_of(s[k].name), packed)
                    for k in sorted(s) if k[0] == "input")
        outs = tuple(_ref(where, s[k].name, "output", k[1], layout_of(s[k].name), packed)
                     for k in sorted(s) if k[0] == "output")
        ops.append(OpRecord(name=name, op_type=types[name], inputs=ins, outputs=outs, order=order,
                            timestamp=first_ts[name], source=where))
    meta = {"naming": kind}
    if repeated:
        meta["repeated"] = repeated
        # a golden of msit's naming writes ops whose names sanitise alike under one name:
        # ``compare.matching`` names these files when it cannot tell whose each is
        meta["repeated_files"] = {op: list(names) for op, names in repeated_files.items()}
    if skipped:
        meta["skipped_files"] = skipped
    if unpaired:
        meta["unpaired_ops"] = unpaired
    return DumpSet(ops, kind="npy", root=str(directory), meta=meta)


#: ``{op_type}.{sanitised name}.{task}.{stream}``: the names ``split_converted`` gives ops whose
#: converted file names spell alike (the groups: op type, sanitised name)
CONVERTED_OP_NAME = re.compile(r"([^.]+)\.([^.]+)\.[0-9]+\.[0-9]+")


def split_converted(files: List[NpyFile]) -> Tuple[List[NpyFile], Dict[str, str]]:
    """Converted files of one op name but another (op type, task, stream) are other ops: the
    file names spell ``a/b``, ``a.b`` and ``a_b`` all ``a_b`` (an op dumped twice keeps its type
    and task). Such ops are named ``{op_type}.{name}.{task}.{stream}`` (their dump file's
    name without the timestamp), and {that name: why no golden is paired with it} says what
    ``compare.matching`` reports for them: which of the real names each stands for the files
    do not say. (Before, they read as one op with the first one's type and the last one's data.)"""
    keys: Dict[str, Dict[Tuple[str, Tuple[int, int]], None]] = {}
    for f in files:
        keys.setdefault(f.op, {})[(f.op_type, f.task)] = None
    shared = {op: list(k) for op, k in keys.items() if len(k) > 1}
    if not shared:
        return files, {}
    out, why = [], {}
    for f in files:
        if f.op not in shared:
            out.append(f)
            continue
        name = f"{f.op_type}.{f.op}.{f.task[0]}.{f.task[1]}"
        out.append(f._replace(op=name))
        if name not in why:
            ops = ", ".join(f"{t} (task {task})" for t, (task, _) in shared[f.op])
            why[name] = (f"the converted dump's file names spell {len(shared[f.op])} ops "
                         f"{f.op!r} ({ops}): msaccucmp's file names write '/', '.' and ' ' of "
                         "an op name as '_', so which real op each is, and which golden it "
                         "matches, cannot be told; compare the binary dump itself (its headers "
                         "hold the real names, with --om-json), or pair them with a mapping")
    return out, why


__all__ = ["read_npy_dir", "list_npy_files", "has_npy_dump", "read_npy_header", "read_npy_layout",
           "NpyLayout", "load_npy", "map_packed", "GOLDEN_PATTERN", "CONVERTED_PATTERN",
           "CONVERTED_SHAPE_PATTERN", "MAPPING_FILE", "INPUT_REFS_FILE", "read_input_refs",
           "split_converted"]

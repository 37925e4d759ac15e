"""Ascend dump directory layout and file names (docs/formats.md §1), and the streaming dump writer.

Directory: ``{dump_path}/{YYYYMMDDHHMMSS}/{device_id}/{model_name}/{model_id}/{step}/``.
File name: ``{op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}`` (FFTS+ adds
``.{task_type}.{context_id}.{thread_id}.{device_id}``) with ``.``, ``/``, ``\\`` and space in the
names replaced by ``_``; a name longer than 255 bytes is stored under an all-digit name and
listed in ``mapping.csv`` (rows ``digits,realname``, no header) in the same directory.

Names taken from dump headers are never joined into paths: the writer only ever builds file
names from ``sanitize``d parts, and readers look names up only for files they listed.
"""
from __future__ import annotations

import csv
import errno
import re
import shutil
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import DumpFormatError, DumpWriteError

MAPPING_FILE = "mapping.csv"
MAX_NAME_BYTES = 255
#: msaccucmp's pattern for NPU dump file names (group 1 = op name), docs/formats.md §1.
MSACCUCMP_PATTERN = re.compile(
    r"^[A-Za-z0-9_-]+\.([A-Za-z0-9_-]+)\.[0-9]+(\.[0-9]+)?\.[0-9]{1,255}"
    r"(\.[0-9]+\.[0-9]+\.[0-9]+)?(\.[0-9]+)?")
_SGT = re.compile(r"_sgt_graph_[0-9]+")
#: an FFTS+ manual-split slice's name suffix (group 1: the slice number; ``ffts_slices``)
LXSLICE = re.compile(r"_lxslice([0-9]+)$")
_UNSAFE = str.maketrans({".": "_", "/": "_", "\\": "_", " ": "_"})


def sanitize(name: str) -> str:
    """Ascend/golden file-name form of an op name: ``.``, ``/``, ``\\`` and space -> ``_``."""
    return str(name).translate(_UNSAFE)


def op_by_model_name(dump, name: str):
    """``dump``'s op ``name`` (a DumpSet), else its op of the file spelling ``sanitize(name)``
    named ``name`` (a copy): a golden respelled to the model's names keeps an inlined If
    branch's ops as its files spell them (silero_vad_16k_op15's ``_model_decoder_rnn_LSTM``
    for ``/model/decoder/rnn/LSTM``, whose float16-range read found no golden op: a review);
    None where it holds neither."""
    op = dump.get(name)
    if op is None:
        op = dump.get(sanitize(name))
        if op is not None:
            from dataclasses import replace

            op = replace(op, name=name)
    return op


def _component(name: str) -> str:
    """A sanitised name part safe inside one file name (also no NUL, never empty)."""
    return sanitize(name).replace("\0", "_") or "_"


def strip_partition(op_name: str, *, slices: bool = True) -> str:
    """msaccucmp's ``handle_op_name``: drop everything up to a ``_sgt_graph_N_`` prefix (FFTS+
    sub-graph partition names) and, with ``slices``, a trailing ``_lxsliceN``."""
    m = LXSLICE.search(op_name) if slices else None
    if m:
        op_name = op_name[:m.start()]
    matches = list(_SGT.finditer(op_name))
    if matches and matches[-1].end() < len(op_name):
        op_name = op_name[matches[-1].end() + 1:]
    return op_name


@dataclass(frozen=True)
class DumpFileName:
    """The fields of one dump file name."""

    op_type: str
    op_name: str
    task_id: int
    stream_id: int
    timestamp: int
    task_type: Optional[int] = None
    context_id: Optional[int] = None
    thread_id: Optional[int] = None
    device_id: Optional[int] = None

    def build(self) -> str:
        parts = [_component(self.op_type), _component(self.op_name), str(self.task_id),
                 str(self.stream_id), f"{self.timestamp:016d}"]
        if self.task_type is not None:
            parts += [str(self.task_type), str(self.context_id or 0), str(self.thread_id or 0)]
        if self.device_id is not None:
            parts.append(str(self.device_id))
        return ".".join(parts)

    @property
    def base_op_name(self) -> str:
        """The op name with the FFTS+ partition prefix stripped. A manual-split slice keeps its
        ``_lxsliceN`` suffix: slices are parts of one tensor, joined by ``ffts_slices``, and
        stripping it here would make one slice stand in for the whole op."""
        return strip_partition(self.op_name, slices=False)


def build_file_name(op_type: str, op_name: str, task_id: int, stream_id: int, timestamp: int,
                    *, task_type=None, context_id=None, thread_id=None, device_id=None) -> str:
    """``{op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}`` with sanitised names."""
    return DumpFileName(op_type, op_name, task_id, stream_id, timestamp, task_type, context_id,
                        thread_id, device_id).build()


def parse_file_name(name: str) -> Optional[DumpFileName]:
    """Fields of a dump file name, or None when ``name`` is not one (npy, csv, mapping...)."""
    parts = name.split(".")
    if len(parts) < 4 or not parts[0] or not parts[1]:
        return None
    nums = parts[2:]
    if not all(p.isdigit() and p.isascii() for p in nums) or len(nums) > 7:
        return None
    n = len(nums)
    # task (stream)? ts (task_type ctx thread)? (device)?: 3 and 6 numbers are ambiguous; the
    # timestamp is the long number (16 digits), so decide by which of nums[1], nums[2] is longer.
    has_stream = n in (4, 7) or (n in (3, 6) and len(nums[2]) >= len(nums[1]))
    if n in (2, 5):
        has_stream = False
    vals = [int(p) for p in nums]
    task = vals[0]
    stream = vals[1] if has_stream else 0
    rest = vals[2:] if has_stream else vals[1:]
    ts, extra = rest[0], rest[1:]
    ffts = extra[:3] if len(extra) >= 3 else []
    device = extra[3] if len(extra) == 4 else (extra[0] if len(extra) == 1 else None)
    if len(extra) not in (0, 1, 3, 4):
        return None
    return DumpFileName(parts[0], parts[1], task, stream, ts,
                        *(ffts if ffts else (None, None, None)), device_id=device)


# --------------------------------------------------------------------------- mapping.csv
def name_table_rows(path) -> Iterator[Tuple[int, List[str]]]:
    """``(line number, row)`` of a name-table CSV (``mapping.csv``, ``op_names.csv``); every
    parser error (not UTF-8, a field over 131,072 chars, a NUL byte, an unterminated quote, an
    unreadable file) is a ``DumpFormatError`` naming the file and the line."""
    reader = None
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f, strict=True)
            for row in reader:
                yield reader.line_num, row
    except UnicodeDecodeError as exc:
        raise DumpFormatError(path, f"not UTF-8 text ({exc.reason})") from None
    except csv.Error as exc:
        line = reader.line_num if reader is not None else 0
        raise DumpFormatError(path, f"line {line}: not a valid CSV row ({exc})") from None
    except OSError as exc:
        raise DumpFormatError(path, f"cannot read: {exc.strerror or exc}") from None


def read_mapping(directory) -> Dict[str, str]:
    """``mapping.csv`` of ``directory`` as {stored name: real name}; {} when absent."""
    path = Path(directory) / MAPPING_FILE
    if not path.is_file():
        return {}
    mapping: Dict[str, str] = {}
    for line, row in name_table_rows(path):
        if not row or not "".join(row).strip():
            continue
        if len(row) < 2:
            raise DumpFormatError(path, f"line {line}: expected 'stored_name,real_name', "
                                        f"got {row!r}")
        mapping[row[0].strip()] = ",".join(row[1:]).strip()
    return mapping


def append_mapping(directory, stored: str, real: str) -> None:
    """Add one ``stored,real`` row to ``mapping.csv`` (written at once, so a crash loses none)."""
    with open(Path(directory) / MAPPING_FILE, "a", newline="", encoding="utf-8") as f:
        csv.writer(f).writerow([stored, real])


# --------------------------------------------------------------------------- directories
def run_dir(dump_path, *, device_id: int = 0, model_name: str, model_id: int = 1, step: int = 0,
            when: Optional[datetime] = None) -> Path:
    """``{dump_path}/{YYYYMMDDHHMMSS}/{device_id}/{model_name}/{model_id}/{step}`` (not created)."""
    stamp = (when or datetime.now()).strftime("%Y%m%d%H%M%S")
    return (Path(dump_path) / stamp / str(int(device_id)) / _component(model_name)
            / str(int(model_id)) / str(int(step)))


class _Clock:
    """Strictly increasing 16-digit microsecond timestamps."""

    def __init__(self):
        self.last = 0

    def next(self, requested: Optional[int] = None) -> int:
        ts = int(requested) if requested is not None else max(time.time_ns() // 1000, self.last + 1)
        self.last = max(self.last, ts)
        return ts


class AscendDumpWriter:
    """Streams one binary dump file per operator into a leaf (step) directory, as a device does.

    ``write_op`` takes arrays in their logical layout; a format such as ``"NC1HWC0"`` in
    ``input_formats``/``output_formats`` stores that tensor in device layout (the reader converts
    it back). ``output_origins`` gives per output the (original op name, output index) it stands
    for, stored in ``OpOutput.original_op``. ``input_dtypes``/``output_dtypes`` store a tensor
    as another dump type (``"bfloat16"``). Task ids and timestamps increase op by op.

    Files are written atomically (a temp file renamed into place). ``private=True`` says the
    directory is this writer's alone until it is done (a run's fresh step directory, made by an
    exclusive mkdir): files are then created in place, one directory operation per file instead
    of two; a failed write still removes its partial file.
    """

    def __init__(self, directory, *, private: bool = False):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.private = bool(private)
        self._clock = _Clock()
        self._task = 0
        self._long = 0
        self.written: List[Path] = []
        #: the headers written (``ascend_bin.WrittenDump``), by stored file name
        #: (``loader.load_dump(..., written=...)``)
        self.parsed: Dict[str, object] = {}
        self._ahead = None  # ``created_ahead.CreatedAhead`` (``create_ahead``)

    def create_ahead(self, ops: Iterable[Tuple[str, str, int, int, int]]) -> None:
        """The ops this writer will write, as (op type, op name, task id, stream id, timestamp
        in us), in order: a private writer's files are created ahead of their writes in a
        thread (``created_ahead``; a name too long for one file name is left to ``write_op``).
        ``close`` removes those never written."""
        from .created_ahead import CreatedAhead

        if not self.private or self._ahead is not None:
            return
        names = (build_file_name(op_type, op_name, task, stream, ts)
                 for op_type, op_name, task, stream, ts in ops)
        self._ahead = CreatedAhead(self.directory,
                                   [n for n in names if len(n.encode("utf-8")) <= MAX_NAME_BYTES])

    def write_op(self, op_type: str, op_name: str, inputs: Sequence[np.ndarray] = (),
                 outputs: Sequence[np.ndarray] = (), *, output_origins=None, input_formats=None,
                 output_formats=None, task_id: Optional[int] = None, stream_id: int = 0,
                 timestamp_us: Optional[int] = None, input_dtypes=None, output_dtypes=None
                 ) -> Path:
        """Write one operator's dump file; returns its path."""
        from .ascend_bin import DumpTensor, write_parsed_dump_file

        ts = self._clock.next(timestamp_us)
        self._task = int(task_id) if task_id is not None else self._task + 1
        ins = [DumpTensor(np.asarray(a), _pick(input_formats, i, "ND"),
                          dtype=_pick(input_dtypes, i, None)) for i, a in enumerate(inputs)]
        outs = [DumpTensor(np.asarray(a), _pick(output_formats, i, "ND"),
                           origin=_origin(_pick(output_origins, i, None)),
                           dtype=_pick(output_dtypes, i, None)) for i, a in enumerate(outputs)]
        name = build_file_name(op_type, op_name, self._task, stream_id, ts)
        stored = name
        if len(name.encode("utf-8")) > MAX_NAME_BYTES:
            self._long += 1
            stored = f"{ts}{self._long}"
        try:  # (``_write`` owns the descriptor taken from its first line)
            fd = self._ahead.take(stored) if self._ahead is not None and stored == name else None
            written = write_parsed_dump_file(self.directory / stored, op_name, ins, outs,
                                             dump_time=ts, atomic=not self.private, fd=fd)
            path = self.directory / stored
            self.parsed.pop(stored, None)  # (a name written again: never its earlier header)
            if written is not None:
                self.parsed[stored] = written
            if stored != name:
                append_mapping(self.directory, stored, name)
        except OSError as exc:
            if isinstance(exc, DumpWriteError) or exc.errno is None:
                raise
            raise write_error(self.directory / stored, exc, tensor_bytes(ins + outs)) from exc
        self.written.append(path)
        return path

    def close(self) -> None:
        """Stop creating files ahead and remove those never written (nothing is buffered:
        mapping.csv rows are written as names occur)."""
        if self._ahead is not None:
            self._ahead.close()
            self._ahead = None

    def __del__(self):  # a writer dropped unclosed: its files created ahead go too
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> "AscendDumpWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def tensor_bytes(tensors) -> int:
    """Bytes the values of ``DumpTensor``s take in a dump file (device layout, stored dtype)."""
    from . import device_formats as df
    from . import dtypes as dt

    total = 0
    for t in tensors:
        arr = np.asarray(t.array)
        n = 1
        for d in df.device_shape(t.format, arr.shape, arr.dtype):
            n *= int(d)
        total += n * dt.storage_dtype(dt.enum_for(t.dtype or arr.dtype)).itemsize + int(t.padding)
    return total


def write_error(path, exc: OSError, needed: int) -> DumpWriteError:
    """``exc`` from writing dump file ``path`` as a ``DumpWriteError`` naming the path and, for
    a full disk or quota, the bytes the file needs and the bytes free there."""
    reason = exc.strerror or str(exc)
    if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
        return DumpWriteError(path, f"cannot write dump file: {reason}", errno=exc.errno)
    try:
        free = shutil.disk_usage(Path(path).parent).free
    except OSError:
        free = None
    where = f"{free} bytes free" if free is not None else "free space unknown"
    return DumpWriteError(path, f"cannot write dump file: {reason}: it needs {needed} bytes of "
                                f"tensor data (plus its header), {where} in {Path(path).parent}",
                          errno=exc.errno, needed=needed, free=free)


def _origin(value):
    if value is None:
        return None
    if isinstance(value, str) or len(value) != 2:
        raise TypeError(f"output origin must be (op name, output index) or None, got {value!r}")
    return (str(value[0]), int(value[1]))


def _pick(values, index: int, default):
    if values is None:
        return default
    if isinstance(values, (str, bytes)):
        return values  # one format/dtype for every tensor
    values = list(values)
    return values[index] if index < len(values) and values[index] is not None else default


__all__ = ["sanitize", "strip_partition", "DumpFileName", "build_file_name", "parse_file_name",
           "read_mapping", "append_mapping", "run_dir", "AscendDumpWriter", "MSACCUCMP_PATTERN",
           "MAPPING_FILE", "MAX_NAME_BYTES"]

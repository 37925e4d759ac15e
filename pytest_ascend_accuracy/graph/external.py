"""Models whose weights live in ONNX external data, loaded without their weights.

``onnx.load`` copies every weight into the ModelProto (2.4 GB of weights, a 2.4 GB proto), and
every copy of that proto (``CopyFrom``, a segment serialised for onnxruntime, onnxruntime
parsing it) copies them again: a 2.4 GB model peaked at 6.6 GB in the golden run.
``load_model_refs`` keeps each big external initializer of the main graph as a reference (the
proto stays small) and returns the folder the references are relative to: onnxruntime reads a
segment's weights itself when its session is built (``EXTERNAL_FOLDER_KEY``), once, and
``initializer_array`` reads one weight when a dump needs it. External tensors up to
``LOAD_BELOW`` bytes (shape constants: shape inference and folding need their values) and any
elsewhere (subgraphs, attributes) are loaded as ``onnx.load`` would.

The emulator's conversion reads weights through ``WeightValues`` (a mapping whose external
entries are memory-mapped at each access, so the pages go when the array does) and writes the
converted model's big weights to its data file as they are made (``WeightSink``), copying there,
tensor by tensor, the ones it keeps unchanged: at no point are the weights in memory at once
(bench_big_model.py: 2.4 GB of weights converted at 261 MB peak RSS, 14.7 GB before).
"""
from __future__ import annotations

import os
from collections.abc import MutableMapping
from typing import Optional, Tuple

import numpy as np

from ..errors import ConfigError

#: onnxruntime session config: the folder external data of a model given as bytes is read from
EXTERNAL_FOLDER_KEY = "session.model_external_initializers_file_folder_path"
#: external initializers up to this many bytes are loaded into the proto
LOAD_BELOW = 1 << 20
#: ONNX element types read straight into a numpy array of the same itemsize
_PLAIN = {1: "<f4", 2: "u1", 3: "i1", 4: "<u2", 5: "<i2", 6: "<i4", 7: "<i8", 9: "?", 10: "<f2",
          11: "<f8", 12: "<u4", 13: "<u8"}


def is_external(tensor) -> bool:
    return tensor.data_location == 1  # onnx.TensorProto.EXTERNAL


def _entry(tensor):
    info = {e.key: e.value for e in tensor.external_data}
    length = info.get("length")
    return info.get("location", ""), int(info.get("offset") or 0), (int(length) if length else None)


def load_model_refs(model) -> Tuple[object, Optional[str]]:
    """``(ModelProto, folder)``: a model file with external data loaded with its big main-graph
    initializers left as references to files in ``folder`` (a big file's own big weights too:
    references into the file itself, ``wire``); anything else is ``load_model``'s private copy
    with folder None."""
    import onnx
    from onnx.external_data_helper import _get_all_tensors, load_external_data_for_tensor

    from .data_links import data_folder
    from .onnx_graph import data_files, load_model

    if isinstance(model, (onnx.ModelProto, bytes, bytearray)):
        return load_model(model), None
    path = os.fspath(model)
    if not os.path.isfile(path):
        raise ConfigError(path, "ONNX model file not found")
    proto = load_model(path, weights=False)  # a big file's own weights: references into it
    refs = [t for t in _get_all_tensors(proto) if is_external(t)]
    if not refs:
        return proto, None
    data_files(proto, path)  # each one there, or an error naming it
    base = data_folder(proto, path)  # (a link's data: the locations rewritten to its target)
    kept = set()
    for t in proto.graph.initializer:
        if is_external(t) and _nbytes(t) > LOAD_BELOW:
            kept.add(t.name)
            _check_span(t, base)
    try:
        for t in _get_all_tensors(proto):
            if is_external(t) and t.name not in kept:
                load_external_data_for_tensor(t, base)
                del t.external_data[:]
                t.data_location = onnx.TensorProto.DEFAULT
    except Exception as exc:
        raise ConfigError(path, f"cannot read its external data ({type(exc).__name__}: {exc})") from exc
    return proto, (base if kept else None)


def _check_span(tensor, folder: str) -> None:
    """A ``ConfigError`` naming the data file when ``tensor``'s bytes are not all in it."""
    location, offset, _ = _entry(tensor)
    path = os.path.join(folder, location)
    end = offset + _nbytes(tensor)
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise ConfigError(path, f"cannot read external data of initializer {tensor.name!r} "
                                f"({exc.strerror or exc})") from exc
    if size < end:
        raise ConfigError(path, f"external data of initializer {tensor.name!r} ends early: it "
                                f"needs bytes {offset}..{end}, the file has {size}")


def _nbytes(tensor) -> int:
    _, _, length = _entry(tensor)
    if length is not None:
        return length
    itemsize = np.dtype(_PLAIN.get(tensor.data_type, "<f4")).itemsize
    return int(np.prod(list(tensor.dims), dtype=np.int64)) * itemsize


def initializer_array(tensor, folder: Optional[str] = None) -> np.ndarray:
    """The value of an initializer, read from its external data file (relative to ``folder``)
    when it is a reference; the same array ``numpy_helper.to_array`` gives for the loaded tensor."""
    import onnx
    from onnx import numpy_helper

    if not is_external(tensor):
        return numpy_helper.to_array(tensor)
    location, offset, length = _entry(tensor)
    path = os.path.join(folder or "", location)
    dims = [int(d) for d in tensor.dims]
    count = int(np.prod(dims, dtype=np.int64))
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            dtype = _PLAIN.get(tensor.data_type)
            if dtype is not None and (length is None or length == count * np.dtype(dtype).itemsize):
                arr = np.fromfile(fh, dtype=dtype, count=count)
                if arr.size != count:
                    raise ConfigError(path, f"external data of initializer {tensor.name!r} ends "
                                            f"early ({arr.nbytes} of {count * arr.itemsize} bytes)")
                return arr.reshape(dims).astype(np.dtype(dtype).newbyteorder("="), copy=False)
            data = fh.read(-1 if length is None else length)
    except OSError as exc:
        raise ConfigError(path, f"cannot read external data of initializer {tensor.name!r} "
                                f"({exc.strerror or exc})") from exc
    if length is not None and len(data) != length:
        raise ConfigError(path, f"external data of initializer {tensor.name!r} ends early "
                                f"({len(data)} of {length} bytes)")
    loaded = onnx.TensorProto()
    loaded.CopyFrom(tensor)
    del loaded.external_data[:]
    loaded.data_location = onnx.TensorProto.DEFAULT
    loaded.raw_data = data
    del data
    return numpy_helper.to_array(loaded)


def mapped_array(tensor, folder: Optional[str] = None) -> np.ndarray:
    """Like ``initializer_array``, but a big external tensor of a plain numpy type comes as a
    read-only memory map of its file: its dtype and shape cost nothing, its values are read
    when used, and the pages go when the array does."""
    location, offset, length = _entry(tensor) if is_external(tensor) else ("", 0, None)
    dtype = _PLAIN.get(tensor.data_type)
    dims = tuple(int(d) for d in tensor.dims)
    count = int(np.prod(dims, dtype=np.int64))
    if not is_external(tensor) or dtype is None or not dims or count == 0 or (
            length is not None and length != count * np.dtype(dtype).itemsize):
        return initializer_array(tensor, folder)
    path = os.path.join(folder or "", location)
    try:
        if os.path.getsize(path) < offset + count * np.dtype(dtype).itemsize:
            return initializer_array(tensor, folder)  # raises, naming the file
        return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=dims)
    except OSError as exc:
        raise ConfigError(path, f"cannot read external data of initializer {tensor.name!r} "
                                f"({exc.strerror or exc})") from exc


class WeightValues(MutableMapping):
    """``{initializer name: array}`` of ``proto``'s initializers (those in ``names``, default
    all) where an external-data initializer (``refer``) is mapped from its file at each access
    (``mapped_array``) instead of held; the others are converted on first access and then held
    (a run that dumps no op inputs never converts its weights: 336 of them, ~5 ms, for an
    emulated PP-OCRv4 det)."""

    def __init__(self, proto=None, folder: Optional[str] = None, names=None):
        self._held = {}
        self._refs = {}
        self._pending = {}  # name -> the initializer, converted when first asked for
        for t in (proto.graph.initializer if proto is not None else ()):
            if names is not None and t.name not in names:
                continue
            if folder and is_external(t):
                self.refer(t, folder)
            else:
                self._pending[t.name] = t

    def refer(self, tensor, folder: Optional[str]) -> None:
        self._held.pop(tensor.name, None)
        self._pending.pop(tensor.name, None)
        self._refs[tensor.name] = (tensor, folder)

    def __getitem__(self, name):
        if name in self._refs:
            tensor, folder = self._refs[name]
            return mapped_array(tensor, folder)
        tensor = self._pending.get(name)
        if tensor is not None:  # converted, then held, then no longer pending: a conversion
            self._held[name] = initializer_array(tensor)  # that fails leaves it pending
            self._pending.pop(name, None)
        return self._held[name]

    def __setitem__(self, name, value) -> None:
        self._refs.pop(name, None)
        self._pending.pop(name, None)
        self._held[name] = value

    def __delitem__(self, name) -> None:
        if name in self._refs:
            del self._refs[name]
        elif name in self._pending:
            del self._pending[name]
        else:
            del self._held[name]

    def __contains__(self, name) -> bool:
        return name in self._refs or name in self._held or name in self._pending

    def __iter__(self):
        return iter(list(self._held) + list(self._pending) + list(self._refs))

    def __len__(self) -> int:
        return len(self._held) + len(self._pending) + len(self._refs)


class WeightSink:
    """The external data file of a model being built: big initializers are written to it as they
    are made (``add`` returns the reference), and ``finish`` moves there the external weights the
    model still reads from its source's files, so the model never holds its weights."""

    def __init__(self, folder, filename: str):
        self.folder = os.fspath(folder)
        self.filename = filename
        self.names = set()
        self._fh = None
        self._offset = 0

    def _write(self, chunks) -> Tuple[int, int]:
        if self._fh is None:
            self._fh = open(os.path.join(self.folder, self.filename), "wb")
        start = self._offset
        for chunk in chunks:
            self._fh.write(chunk)
            self._offset += len(chunk)
        self._fh.flush()
        return start, self._offset - start

    def _refer(self, tensor, start: int, length: int) -> None:
        del tensor.external_data[:]
        tensor.ClearField("raw_data")
        tensor.data_location = 1  # EXTERNAL
        for key, value in (("location", self.filename), ("offset", str(start)), ("length", str(length))):
            tensor.external_data.add(key=key, value=value)
        self.names.add(tensor.name)

    def add(self, name: str, value: np.ndarray):
        """A TensorProto for ``value``: a reference into the sink when it is big and of a plain
        type, else the value itself."""
        from onnx import numpy_helper

        arr = np.asarray(value)
        code = next((k for k, v in _PLAIN.items() if np.dtype(v) == arr.dtype.newbyteorder("<")), None)
        if code is None or arr.nbytes <= LOAD_BELOW or arr.dtype.byteorder == ">":
            return numpy_helper.from_array(arr, name)
        import onnx

        tensor = onnx.TensorProto(name=name, data_type=code, dims=list(arr.shape))
        flat = np.ascontiguousarray(arr).reshape(-1)
        step = max(1, (16 << 20) // max(1, arr.itemsize))
        start, length = self._write(memoryview(flat[k:k + step]).cast("B")
                                    for k in range(0, flat.size, step))
        self._refer(tensor, start, length)
        return tensor

    def finish(self, proto, source_folder: Optional[str]) -> None:
        """Copy into the sink every external initializer of ``proto`` not yet in it (read from
        ``source_folder``), rewrite their references, and close the file."""
        for t in proto.graph.initializer:
            if not is_external(t) or t.name in self.names:
                continue
            location, offset, length = _entry(t)
            path = os.path.join(source_folder or "", location)
            if length is None:
                length = _nbytes(t)

            def chunks(path=path, offset=offset, length=length, name=t.name):
                with open(path, "rb") as fh:
                    fh.seek(offset)
                    left = length
                    while left:
                        block = fh.read(min(left, 16 << 20))
                        if not block:
                            raise ConfigError(path, f"external data of initializer {name!r} ends early")
                        left -= len(block)
                        yield block

            try:
                start, written = self._write(chunks())
            except OSError as exc:
                raise ConfigError(path, f"cannot read external data of initializer {t.name!r} "
                                        f"({exc.strerror or exc})") from exc
            self._refer(t, start, written)
        if self._fh is not None:
            self._fh.close()
            self._fh = None

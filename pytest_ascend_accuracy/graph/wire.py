"""Reading a ``.onnx`` file of more than a few MB without its weights: each big initializer
becomes an external-data reference to its own bytes inside the model file.

``onnx.load`` of a 1.6 GB model holds the file's bytes and the parsed proto at once (3.2 GB),
where onnxruntime's plain inference of the same file peaks at 1.8 GB. ``model_with_weight_refs``
walks the protobuf wire format of the file through a memory map instead: the main graph's
initializers whose ``raw_data`` is over ``REF_ABOVE`` bytes are parsed without it and marked
external, with ``location`` the model file itself (by the name it was opened under: a link's
name, which ``data_links`` resolves as any data file's) and ``offset``/``length`` where their
``raw_data`` lies in it; everything else is parsed as protobuf would. onnxruntime (and
``graph.external``) then read those weights from the file like any external data.

Until 2026-12-07 only files over 64 MB were read so, and most CNNs are smaller: a torchvision
ResNet-18 (47 MB) at 224x224 was checked at 629 MB peak RSS against issue 17's budget of
310 MB, 1.10 s against 0.26 s for its bare run (``benchmarks/bench_check.py --model-file``);
read by reference, 221 MB and 0.38 s, the same metrics for every op.
"""
from __future__ import annotations

import mmap
import os
from typing import Iterator, List, Optional, Tuple

#: files up to this size are parsed whole (``onnx.load``): below it, weights cost little
SCAN_ABOVE = 4 << 20
#: initializers whose raw_data is bigger than this become references into the file
REF_ABOVE = 1 << 20

_MODEL_GRAPH = 7        # ModelProto.graph
_GRAPH_INITIALIZER = 5  # GraphProto.initializer
_TENSOR_RAW_DATA = 9    # TensorProto.raw_data


def _varint(buf, pos: int) -> Tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _fields(buf, start: int, end: int) -> Iterator[Tuple[int, int, int, int, int]]:
    """``(field number, wire type, field start, value start, value end)`` of a message."""
    pos = start
    while pos < end:
        first = pos
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, after = _varint(buf, pos)
        elif wire == 1:
            after = pos + 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            after = pos + length
        elif wire == 5:
            after = pos + 4
        else:  # groups: not in ONNX
            raise ValueError(f"unexpected wire type {wire}")
        if after > end:
            raise ValueError("field runs past its message")
        yield number, wire, first, pos, after
        pos = after


def model_with_weight_refs(path, ref_above: Optional[int] = None):
    """The ModelProto of the file at ``path`` with its big raw_data initializers as references
    into the file (see module doc); None when the file has none."""
    import onnx

    ref_above = REF_ABOVE if ref_above is None else ref_above
    path = os.fspath(path)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        model_parts: List[bytes] = []
        graph_parts: List[bytes] = []
        inits: List[object] = []
        refs = 0
        for number, wire, first, start, end in _fields(buf, 0, len(buf)):
            if number != _MODEL_GRAPH or wire != 2:
                model_parts.append(buf[first:end])
                continue
            for g_number, g_wire, g_first, g_start, g_end in _fields(buf, start, end):
                if g_number != _GRAPH_INITIALIZER or g_wire != 2:
                    graph_parts.append(buf[g_first:g_end])
                    continue
                tensor_parts: List[bytes] = []
                raw: Optional[Tuple[int, int]] = None
                for t_number, t_wire, t_first, t_start, t_end in _fields(buf, g_start, g_end):
                    if t_number == _TENSOR_RAW_DATA and t_wire == 2 and t_end - t_start > ref_above:
                        raw = (t_start, t_end - t_start)
                    else:
                        tensor_parts.append(buf[t_first:t_end])
                tensor = onnx.TensorProto()
                tensor.ParseFromString(b"".join(tensor_parts) if raw else buf[g_start:g_end])
                if raw:
                    if tensor.external_data or tensor.data_location == onnx.TensorProto.EXTERNAL:
                        raise ValueError(f"initializer {tensor.name!r} has raw_data and external data")
                    tensor.data_location = onnx.TensorProto.EXTERNAL
                    for key, value in (("location", os.path.basename(path)), ("offset", str(raw[0])),
                                       ("length", str(raw[1]))):
                        tensor.external_data.add(key=key, value=value)
                    refs += 1
                inits.append(tensor)
        if not refs:
            return None
        model = onnx.ModelProto()
        model.ParseFromString(b"".join(model_parts))
        graph = onnx.GraphProto()
        graph.ParseFromString(b"".join(graph_parts))
        graph.initializer.extend(inits)
        model.graph.CopyFrom(graph)
        return model

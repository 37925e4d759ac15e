"""A corpus of malformed dumps, each built in the test (no committed binaries), each expected to
fail with ``DumpFormatError`` naming the right file and saying what is wrong.

Every case is ``(name, build, kind, problem)``: ``build(tmp)`` returns what ``load_dump`` is given
and the file the error must name; ``kind`` groups the cases (leaf binary file, npy, om json,
mapping.csv, directory tree).
"""
import struct

import numpy as np
import pytest

from pytest_ascend_accuracy.dump.ascend_bin import DumpTensor, write_dump_file
from pytest_ascend_accuracy.dump.layout import run_dir
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter
from pytest_ascend_accuracy.dump.proto import DumpData, OpInput, OpOutput, Shape
from pytest_ascend_accuracy.errors import DumpFormatError

pytestmark = pytest.mark.reliability
NAME = "Conv2D.conv1.3.0.1700000000000000"


def _leaf(tmp):
    leaf = run_dir(tmp / "dump", model_name="net")
    leaf.mkdir(parents=True)
    return leaf


def _valid(tmp) -> bytes:
    return write_dump_file(tmp / "valid", "conv1", [DumpTensor(np.ones((2, 2), np.float16))],
                           [DumpTensor(np.arange(6, dtype=np.float32).reshape(2, 3))]).read_bytes()


def _header_only(header: DumpData, payload: bytes = b"") -> bytes:
    raw = header.encode()
    return struct.pack("<Q", len(raw)) + raw + payload


def _bin(data_fn):
    def build(tmp):
        leaf = _leaf(tmp)
        p = leaf / NAME
        p.write_bytes(data_fn(tmp))
        return leaf, p
    return build


def _npy(mutate):
    def build(tmp):
        d = tmp / "golden"
        with NpyDumpWriter(d) as w:
            w.write_op("conv1", [], [np.ones((2, 3), np.float32)], timestamp_us=1)
        p = next(d.glob("*.npy"))
        mutate(p)
        return d, p
    return build


def _om(doc):
    def build(tmp):
        leaf = _leaf(tmp)
        (leaf / NAME).write_bytes(_valid(tmp))
        p = tmp / "net.json"
        p.write_text(doc, encoding="utf-8")
        return (leaf, p), p
    return build


def _mapping(rows: bytes):
    def build(tmp):
        leaf = _leaf(tmp)
        (leaf / "17000000000000001").write_bytes(_valid(tmp))
        (leaf / "mapping.csv").write_bytes(rows)
        return leaf, leaf / "mapping.csv"
    return build


def _tree(make):
    def build(tmp):
        root = tmp / "dump"
        make(root, _valid(tmp))
        return root, root
    return build


def _two_models(root, data):
    for model in ("a", "b"):
        leaf = run_dir(root, model_name=model)
        leaf.mkdir(parents=True)
        (leaf / NAME).write_bytes(data)


def _stats_only(root, data):
    leaf = run_dir(root, model_name="net")
    leaf.mkdir(parents=True)
    (leaf / (NAME + ".csv")).write_text("Input/Output,Index,Max\n", encoding="utf-8")


CORPUS = [
    ("empty file", _bin(lambda t: b""), "leaf", "truncated file: 0 bytes"),
    ("7 bytes", _bin(lambda t: b"\x10\0\0\0\0\0\0"), "leaf", "truncated file: 7 bytes"),
    ("header length past the end", _bin(lambda t: struct.pack("<Q", 1 << 40) + b"\0" * 16),
     "leaf", "header length 1099511627776 runs past the end of the file"),
    ("garbage header", _bin(lambda t: struct.pack("<Q", 4) + b"\xff\xff\xff\xff"),
     "leaf", "garbage header: not a DumpData protobuf"),
    ("tensor bytes cut short", _bin(lambda t: _valid(t)[:-5]), "leaf", "truncated file"),
    ("trailing bytes", _bin(lambda t: _valid(t) + b"\0\0\0"), "leaf",
     "file has 3 bytes after the last tensor"),
    ("unknown dtype enum", _bin(lambda t: _header_only(
        DumpData(version="2.0", output=(OpOutput(data_type=99, format=2, shape=Shape((2,)), size=8),)),
        b"\0" * 8)), "leaf", "output 0: dtype unknown(99) cannot be decoded"),
    ("dtype without numpy equivalent", _bin(lambda t: _header_only(
        DumpData(version="2.0", output=(OpOutput(data_type=13, format=2, shape=Shape((2,)), size=8),)),
        b"\0" * 8)), "leaf", "DT_STRING"),
    ("size smaller than shape x dtype", _bin(lambda t: _header_only(
        DumpData(version="2.0", output=(OpOutput(data_type=1, format=2, shape=Shape((4, 4)), size=8),)),
        b"\0" * 8)), "leaf", "buffer size 8 bytes does not match shape [4, 4] x DT_FLOAT (64 bytes needed)"),
    ("device shape against original shape", _bin(lambda t: _header_only(
        DumpData(version="2.0", output=(OpOutput(data_type=2, format=3, shape=Shape((1, 1, 2, 2, 16)),
                                                 original_shape=Shape((1, 40, 2, 2)), size=256),)),
        b"\0" * 256)), "leaf", "output 0: NC1HWC0 shape [1, 1, 2, 2, 16] does not fit original shape"),
    ("65 dims", _bin(lambda t: _header_only(
        DumpData(version="2.0", output=(OpOutput(data_type=1, format=2, shape=Shape((1,) * 65),
                                                 size=4),)), b"\0" * 4)),
     "leaf", "Shape.dim has more than 64 entries"),
    ("0 dim next to a dim past 2**63", _bin(lambda t: _header_only(
        DumpData(version="2.0", output=(OpOutput(data_type=1, format=2,
                                                 shape=Shape((0, 1 << 63)), size=0),)))),
     "leaf", "output 0: shape: dim 9223372036854775808 is past numpy's limit"),
    ("10,001 tensors in one header", _bin(lambda t: _header_only(
        DumpData(version="2.0", input=(OpInput(data_type=1, shape=Shape((0,))),) * 10_001))),
     "leaf", "more than 10,000 tensor entries"),
    ("nested groups 1000 deep", _bin(lambda t: struct.pack("<Q", 1000) + b"\xa3\x01" * 500),
     "leaf", "groups nested deeper than 100"),
    ("npy truncated data", _npy(lambda p: p.write_bytes(p.read_bytes()[:-4])), "npy",
     "truncated .npy file: header and shape [2, 3] x float32 need 152 bytes, file has 148"),
    ("npy bad magic", _npy(lambda p: p.write_bytes(b"NOTNUMPY" + p.read_bytes()[8:])), "npy",
     "not a valid .npy file"),
    ("npy object array", _npy(lambda p: p.write_bytes(p.read_bytes().replace(b"'<f4'", b"'|O' "))),
     "npy", "holds Python objects"),
    ("npy string dtype", _npy(lambda p: p.write_bytes(p.read_bytes().replace(b"'<f4'", b"'<U1'"))),
     "npy", "dtype <U1 is not numeric or bool"),
    ("npy truncated header", _npy(lambda p: p.write_bytes(p.read_bytes()[:40])), "npy",
     "not a valid .npy file"),
    ("om json not JSON", _om("{"), "om", "not valid JSON"),
    ("om json without graph", _om('{"name": "net"}'), "om", "no 'graph' list"),
    ("om json op without name", _om('{"graph": [{"op": [{"id": 1}]}]}'), "om",
     "graph[0].op[0]: op without a name"),
    ("om json id not an integer", _om('{"graph": [{"op": [{"name": "a", "id": "x"}]}]}'), "om",
     "id 'x' is not an integer"),
    ("om json attr without key", _om('{"graph": [{"op": [{"name": "a", "attr": [{}]}]}]}'), "om",
     "attr entry without 'key'"),
    ("om json wrong kinds", _om('{"graph": [{"op": [{"name": "a", "output_desc": [1]}]}]}'), "om",
     "malformed op entry"),
    ("mapping.csv one column", _mapping(b"17000000000000001\n"), "mapping",
     "line 1: expected 'stored_name,real_name'"),
    ("mapping.csv field over 131,072 chars", _mapping(b'17000000000000001,"' + b"a" * 140_000 + b'"\n'),
     "mapping", "line 1: not a valid CSV row (field larger than field limit (131072))"),
    ("mapping.csv unterminated quote", _mapping(b'17000000000000001,"abc\n'), "mapping",
     "not a valid CSV row (unexpected end of data)"),
    ("mapping.csv not UTF-8", _mapping(b"17000000000000001,\xff\xfe\n"), "mapping", "not UTF-8 text"),
    ("no dump files", _tree(lambda root, data: (root / "x").mkdir(parents=True)), "root",
     "empty dump directory"),
    ("stats CSVs only", _tree(_stats_only), "root", "holds only statistics CSV files"),
    ("two models, no model_name", _tree(_two_models), "root", "cannot choose"),
]


@pytest.mark.parametrize("name, build, kind, problem", CORPUS, ids=[c[0] for c in CORPUS])
def test_malformed_corpus(tmp_path, name, build, kind, problem):
    target, culprit = build(tmp_path)
    with pytest.raises(DumpFormatError) as info:
        if isinstance(target, tuple):
            load_dump(target[0], om_json=target[1])
        else:
            dump = load_dump(target)
            for op in dump:  # tensor problems only show when the bytes are read
                for t in op.inputs + op.outputs:
                    t.load()
    err = info.value
    assert problem in err.problem, err.problem
    assert err.path == str(culprit), (err.path, culprit)


def test_corpus_size():
    """docs/reliability.md quotes this count."""
    assert len(CORPUS) == 32 and len({c[0] for c in CORPUS}) == 32

"""Fuzzing the dump readers: on any bytes, the only error is ``DumpFormatError``.

Valid files of every shape the writers make (v2 binary with device formats, bf16, padding,
origins; legacy v1; scalars and empty tensors; fp8/hifloat8 and undecodable float4 tensors;
nano TLV files; npy golden dirs) are mutated by hypothesis
(truncation, bit flips, header-length changes, inserted/deleted/overwritten ranges) or replaced
by random bytes and by random but well-formed headers. Whatever parses must then load every
tensor with exactly the shape it declared, or fail with ``DumpFormatError`` naming the file.
"""
import json
from uuid import uuid4
import os
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_ascend_accuracy.dump.ascend_bin import read_dump_file
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.npy_dir import read_npy_dir
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter
from pytest_ascend_accuracy.dump.om_json import read_om_json
from pytest_ascend_accuracy.dump.proto import DumpData, OpInput, OpOutput, OriginalOp, Shape
from pytest_ascend_accuracy.errors import DumpFormatError

from .fuzz_census import seed_dumps

pytestmark = pytest.mark.reliability
FUZZ = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return seed_dumps(tmp_path_factory.mktemp("seeds"))


def _check_file(path):
    """The property: DumpFormatError, or every tensor loads with its declared shape."""
    try:
        op = read_dump_file(path)
        for t in op.inputs + op.outputs:
            arr = np.asarray(t.load())
            assert arr.shape == tuple(t.shape), (t.slot, arr.shape, t.shape)
            assert arr.size == t.size
    except DumpFormatError as exc:
        assert exc.path == os.fspath(path) and exc.problem
        return "error"
    return "ok"


_mutation = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("flip"), st.lists(st.tuples(st.floats(0, 1), st.integers(0, 7)),
                                        min_size=1, max_size=8)),
    st.tuples(st.just("header_len"), st.integers(-40, 40) | st.integers(0, 2**64 - 1)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.binary(min_size=1, max_size=16)),
    st.tuples(st.just("delete"), st.floats(0, 1), st.integers(1, 16)),
    st.tuples(st.just("overwrite"), st.floats(0, 1), st.binary(min_size=1, max_size=8)),
)


def _apply(data: bytes, mutation) -> bytes:
    b = bytearray(data)
    kind = mutation[0]
    at = (lambda f: min(int(f * len(b)), max(len(b) - 1, 0)))
    if kind == "truncate":
        return bytes(b[:at(mutation[1])])
    if kind == "flip":
        for f, bit in mutation[1]:
            if b:
                b[at(f)] ^= 1 << bit
    elif kind == "header_len" and len(b) >= 8:
        value = mutation[1]
        if value < 2**63 and -40 <= value <= 40:
            value = min(2**64 - 1, max(0, struct.unpack("<Q", bytes(b[:8]))[0] + value))
        b[:8] = struct.pack("<Q", value)
    elif kind == "insert":
        i = at(mutation[1])
        b[i:i] = mutation[2]
    elif kind == "delete" and b:
        i = at(mutation[1])
        del b[i:i + mutation[2]]
    elif kind == "overwrite" and b:
        i = at(mutation[1])
        b[i:i + len(mutation[2])] = mutation[2]
    return bytes(b)


@FUZZ
@given(which=st.integers(0, 5), mutations=st.lists(_mutation, min_size=1, max_size=3))
def test_mutated_dump_files(tmp_path, seeds, which, mutations):
    data = seeds[which]
    for m in mutations:
        data = _apply(data, m)
    p = tmp_path / "Conv.op.1.0.1700000000000000"
    p.write_bytes(data)
    _check_file(p)


@FUZZ
@given(data=st.binary(max_size=600), header_len=st.none() | st.integers(0, 700))
def test_random_bytes(tmp_path, data, header_len):
    if header_len is not None:
        data = struct.pack("<Q", header_len) + data
    p = tmp_path / "Add.add_1.2.0.1700000000000001"
    p.write_bytes(data)
    _check_file(p)


_dims = (st.lists(st.sampled_from([0, 1, 2, 3, 4, 5, 16, 17, 32, 2**40, 2**62, 2**63, 2**64 - 1]),
                  max_size=6)
         | st.tuples(st.integers(64, 66), st.sampled_from([0, 1])).map(
             lambda nd: [nd[1]] * nd[0]))  # around numpy's 64-dim limit
_shape = st.none() | _dims.map(lambda d: Shape(tuple(d)))


def _tensor(cls):
    kw = dict(data_type=st.integers(-2, 45), format=st.sampled_from([0, 1, 2, 3, 4, 29, 12, 255, 999]),
              shape=_shape, original_shape=_shape, size=st.integers(0, 5000))
    if cls is OpOutput:
        kw["original_op"] = st.none() | st.builds(OriginalOp, name=st.text(max_size=5),
                                                   output_index=st.integers(0, 3))
    return st.builds(cls, **kw)


@FUZZ
@given(version=st.sampled_from(["2.0", "", "1.0", "3"]), name=st.text(max_size=10),
       inputs=st.lists(_tensor(OpInput), max_size=3), outputs=st.lists(_tensor(OpOutput), max_size=3),
       slack=st.integers(-3, 3), fill=st.integers(0, 255))
def test_wellformed_headers_with_random_fields(tmp_path, version, name, inputs, outputs, slack, fill):
    header = DumpData(version=version, op_name=name, input=tuple(inputs), output=tuple(outputs)).encode()
    payload = max(0, sum(t.size for t in inputs + outputs) + slack)
    p = tmp_path / "Mul.mul_1.3.0.1700000000000002"
    p.write_bytes(struct.pack("<Q", len(header)) + header + bytes([fill]) * payload)
    _check_file(p)


# --------------------------------------------------------------------------- npy directories
@pytest.fixture(scope="module")
def npy_seed(tmp_path_factory):
    d = tmp_path_factory.mktemp("npy") / "golden"
    with NpyDumpWriter(d) as w:
        w.write_op("a", [np.ones((2, 3), np.float32)], [np.arange(6, dtype=np.float16).reshape(2, 3)])
        w.write_op("b", [], [np.array(3.0), np.zeros((0, 4), np.int64), np.ones((2, 2), bool)])
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


_header_chars = st.sampled_from(list("(){}[],:'\"0123456789 <>|fFiubOVUS\nTrue"))


@FUZZ
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@given(which=st.integers(0, 4), mutations=st.lists(_mutation, min_size=1, max_size=2),
       header_edit=st.none() | st.tuples(st.integers(10, 120), _header_chars))
def test_mutated_npy_golden_dirs(tmp_path, npy_seed, which, mutations, header_edit):
    names = sorted(npy_seed)
    target = names[which % len(names)]
    d = tmp_path / "g"
    d.mkdir(exist_ok=True)
    for name, data in npy_seed.items():
        if name == target:
            for m in mutations:
                data = _apply(data, m)
            if header_edit and header_edit[0] < len(data):
                b = bytearray(data)
                b[header_edit[0]] = ord(header_edit[1][0])
                data = bytes(b)
        (d / name).write_bytes(data)
    try:
        dump = load_dump(d)
        for op in dump:
            for t in op.inputs + op.outputs:
                arr = np.asarray(t.load())
                assert arr.shape == tuple(t.shape)
    except DumpFormatError as exc:
        assert exc.path and str(d) in exc.path


_op_name = st.text(st.sampled_from(list("ab_x.-/\\ \n\r,\"%:\0ü")), max_size=6) | st.sampled_from(
    ["input_x", "x", "input_", "input_input_x", "a.b", "a_b", ""])


@settings(FUZZ, max_examples=100)
@given(names=st.lists(_op_name, min_size=1, max_size=8, unique=True))
def test_golden_names_of_any_text_read_back_as_themselves(tmp_path, names):
    """Issue 13 D3: golden naming is injective, so every op keeps its own golden tensors."""
    from pytest_ascend_accuracy.dump.layout import sanitize

    d = tmp_path / f"g{uuid4().hex[:8]}"
    with NpyDumpWriter(d) as w:
        for i, n in enumerate(names):
            w.write_op(n, [np.full(1, -i - 1.0)], [np.full(2, float(i))], timestamp_us=1 + i)
    dump = read_npy_dir(d)
    assert len(dump) == len(names)
    for i, n in enumerate(names):
        op = dump.get(n) or dump.get(sanitize(n))  # msit's form stays where unambiguous
        assert op.outputs[0].load().tolist() == [float(i)] * 2
        assert op.inputs[0].load().tolist() == [-i - 1.0]


# --------------------------------------------------------------------------- om json, mapping.csv
_KEYS = ["name", "type", "id", "input", "attr", "output_desc", "key", "value", "s", "i", "list",
         "val_type", "_datadump_original_op_names", "_datadump_origin_name",
         "_datadump_origin_output_index", "op", "graph"]
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=True) | st.sampled_from(_KEYS),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4),
    max_leaves=12)
_attr = st.lists(st.fixed_dictionaries({"key": st.sampled_from(_KEYS[-5:-2]) | _json},
                                       optional={"value": _json | st.fixed_dictionaries(
                                           {}, optional={"s": _json, "i": _json, "list": _json})}),
                 max_size=3) | _json
_op = st.fixed_dictionaries({}, optional={
    "name": st.text(max_size=4) | _json, "type": _json, "id": st.integers(-2, 5) | _json,
    "input": st.lists(st.text(max_size=4), max_size=2) | _json, "attr": _attr,
    "output_desc": st.lists(st.fixed_dictionaries({}, optional={"attr": _attr}) | _json,
                            max_size=2) | _json})
_doc = st.fixed_dictionaries({}, optional={
    "name": _json, "attr": _attr,
    "graph": st.lists(st.fixed_dictionaries({}, optional={"name": _json, "op": st.lists(_op, max_size=3) | _json})
                      | _json, max_size=2) | _json})


@FUZZ
@given(doc=_doc)
def test_om_json_of_any_shape(tmp_path, doc):
    p = tmp_path / "model.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    try:
        graph = read_om_json(p)
    except DumpFormatError as exc:
        assert exc.path == str(p)
        return
    assert [op.id for op in graph.ops] == sorted(op.id for op in graph.ops)
    for op in graph.ops:
        assert isinstance(op.name, str) and all(isinstance(n, str) for n in op.original_names)


_long_field = st.integers(131_000, 131_200).map(
    lambda n: b'1700000000000000001,"' + b"a" * n + b'"\n')


@FUZZ
@given(mapping=st.binary(max_size=200) | _long_field,
       stored=st.sampled_from(["1700000000000000001", "12"]))
def test_mapping_csv_of_any_bytes(tmp_path, seeds, mapping, stored):
    d = tmp_path / "leaf"
    d.mkdir(exist_ok=True)
    for old in d.iterdir():
        old.unlink()
    (d / stored).write_bytes(seeds[0])
    (d / "mapping.csv").write_bytes(mapping)
    try:
        dump = load_dump(d)
    except DumpFormatError as exc:
        assert exc.path.startswith(str(d))
        return
    assert len(dump) == 1


# --------------------------------------------------------------------------- the whole compare
@pytest.fixture(scope="module")
def dump_pair(tmp_path_factory):
    """{relative path: bytes} of a 3-op Ascend leaf dir and its npy golden dir."""
    from pytest_ascend_accuracy.dump.layout import AscendDumpWriter

    root = tmp_path_factory.mktemp("pair")
    values = {"conv": np.linspace(-1, 1, 48, dtype=np.float32).reshape(1, 3, 4, 4),
              "mm": np.arange(20, dtype=np.float32).reshape(4, 5), "add": np.ones(7, np.float32)}
    with AscendDumpWriter(root / "npu") as npu, NpyDumpWriter(root / "golden") as gold:
        for i, (name, v) in enumerate(values.items()):
            npu.write_op("Op", name, [v.astype(np.float16)], [v.astype(np.float16)],
                         output_formats=["NC1HWC0" if v.ndim == 4 else "ND"], timestamp_us=10 + i)
            gold.write_op(name, [v], [v], timestamp_us=10 + i)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@FUZZ
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@given(which=st.integers(0, 11), mutations=st.lists(_mutation, min_size=1, max_size=2),
       after_listing=st.booleans())
def test_compare_over_corrupt_dumps_never_aborts(tmp_path, dump_pair, which, mutations, after_listing):
    """Corrupting one file before listing, or after it (a dump changing under a running
    compare): listing fails with DumpFormatError, or compare_dumps returns a row per tensor,
    the unreadable ones failing with a reason -- never another exception."""
    from pytest_ascend_accuracy.compare.engine import compare_dumps

    base = tmp_path / f"run{uuid4().hex[:8]}"
    for rel, data in dump_pair.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_bytes(data)
    victim = base / sorted(dump_pair)[which % len(dump_pair)]

    def corrupt():
        data = victim.read_bytes()
        for m in mutations:
            data = _apply(data, m)
        victim.write_bytes(data)
    if not after_listing:
        corrupt()
    try:
        actual, golden = load_dump(base / "npu"), load_dump(base / "golden")
    except DumpFormatError:
        return
    if after_listing:
        corrupt()
    result = compare_dumps(actual, golden)
    for row in result.rows:
        assert row.metrics is not None or row.reason
    assert result.judge(0.0).passed in (True, False)

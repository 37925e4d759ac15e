"""A dump writer hands its reader the headers it wrote (``write_parsed_dump_file``,
``AscendDumpWriter.parsed``, ``load_dump(..., written=...)``): what the reader gets must be what
parsing the files gives, and anything the writer does not vouch for is read from the file."""
import os

import numpy as np
import pytest

from pytest_ascend_accuracy.dump import ascend_bin, loader
from pytest_ascend_accuracy.dump.ascend_bin import (DumpTensor, parse_dump_file,
                                                    write_parsed_dump_file)
from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
from pytest_ascend_accuracy.dump.loader import load_dump

CASES = {
    "nd float32 with origin": ([], [DumpTensor(np.arange(6, dtype=np.float32).reshape(2, 3),
                                               origin=("conv.1", 0))]),
    "5HD float16 input and output": ([DumpTensor(np.ones((1, 3, 4, 5), np.float16), "NC1HWC0")],
                                     [DumpTensor(np.full((1, 20, 2, 2), 2, np.float16), "NC1HWC0")]),
    "fractal_z filter": ([DumpTensor(np.ones((8, 3, 3, 3), np.float16), "FRACTAL_Z")], []),
    "bf16 storage, padding, int64": ([DumpTensor(np.linspace(-1, 1, 7, dtype=np.float32),
                                                 dtype="bfloat16", padding=16)],
                                     [DumpTensor(np.arange(3, dtype=np.int64)),
                                      DumpTensor(np.float32(4.5))]),
    "empty tensor": ([], [DumpTensor(np.zeros((0, 4), np.float32))]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_header_handed_back_is_the_one_parsed_from_the_file(tmp_path, case):
    ins, outs = CASES[case]
    path = tmp_path / "Add.op_a.1.0.100"
    written = write_parsed_dump_file(path, "scope/op_a", ins, outs, dump_time=100)
    assert written.parsed == parse_dump_file(path)
    st = path.stat()
    assert written.stamp == (st.st_ino, st.st_size, st.st_mtime_ns) and written.describes(path)


def test_more_tensors_than_the_writer_vouches_for_are_left_to_the_parser(tmp_path, monkeypatch):
    monkeypatch.setattr(ascend_bin, "_KNOWN_TENSORS", 2)
    outs = [DumpTensor(np.ones(2, np.float32)) for _ in range(3)]
    assert write_parsed_dump_file(tmp_path / "Add.a.1.0.1", "a", [], outs) is None
    assert len(parse_dump_file(tmp_path / "Add.a.1.0.1").outputs) == 3


def _facts(dump):
    """Everything a DumpSet says, its tensors' values included (loaders are closures)."""
    out = []
    for op in dump.ops:
        tensors = [(t.kind, t.index, t.dtype, t.shape, t.format, t.device_shape, t.origin,
                    t.source, t.load().tobytes()) for t in op.inputs + op.outputs]
        out.append((op.name, op.op_type, op.order, op.timestamp, op.original_names, op.source,
                    tensors))
    return out, dump.kind, dump.root, dump.model_name, dump.meta


def _write_leaf(leaf, long_name=False):
    writer = AscendDumpWriter(leaf, private=True)
    for k, (ins, outs) in enumerate(CASES.values()):
        name = ("n" * 300 if long_name and k == 1 else f"scope/op_{k}")  # > 255 bytes: mapping.csv
        writer.write_op("Conv2D", name, [t.array for t in ins], [t.array for t in outs],
                        input_formats=[t.format for t in ins],
                        output_formats=[t.format for t in outs],
                        input_dtypes=[t.dtype for t in ins], output_dtypes=[t.dtype for t in outs],
                        output_origins=[t.origin for t in outs], task_id=k, timestamp_us=1000 + k)
    return writer


@pytest.mark.parametrize("long_name", [False, True], ids=["plain", "mapping.csv"])
def test_a_directory_read_with_its_writers_headers_reads_as_from_the_files(tmp_path, monkeypatch,
                                                                            long_name):
    leaf = tmp_path / "leaf"
    writer = _write_leaf(leaf, long_name)
    assert len(writer.parsed) == len(CASES)
    from_files = load_dump(leaf)
    parses = []
    real_parse = ascend_bin.parse_dump_file
    monkeypatch.setattr(loader, "parse_dump_file", lambda p: parses.append(p) or real_parse(p))
    from_writer = load_dump(leaf, written=writer.parsed)
    assert parses == []  # no header read back
    assert _facts(from_writer) == _facts(from_files)


def test_files_the_writer_did_not_vouch_for_are_read(tmp_path, monkeypatch):
    """A header for another path of the same name (the same directory spelled relatively),
    and a file written by someone else meanwhile, are read from the files."""
    leaf = tmp_path / "leaf"
    writer = _write_leaf(leaf)
    other = AscendDumpWriter(leaf, private=True)
    other.write_op("Relu", "late", [], [np.ones(4, np.float32)], task_id=99, timestamp_us=2000)
    expected = _facts(load_dump(leaf))
    parses = []
    real_parse = ascend_bin.parse_dump_file
    monkeypatch.setattr(loader, "parse_dump_file", lambda p: parses.append(p) or real_parse(p))
    assert _facts(load_dump(leaf, written=writer.parsed)) == expected
    assert [os.path.basename(p) for p in map(os.fspath, parses)] == list(other.parsed)
    monkeypatch.chdir(tmp_path)
    relative = AscendDumpWriter("leaf2", private=True)
    relative.write_op("Relu", "r", [], [np.ones(2, np.float32)], task_id=1, timestamp_us=5)
    parses.clear()
    moved = {name: p for name, p in relative.parsed.items()}  # headers naming "leaf2/..."
    load_dump(tmp_path / "leaf2", written=moved)
    assert len(parses) == 1  # its path differs from the one listed: read from the file


def test_a_header_a_varint_cannot_hold_is_left_to_the_parser(tmp_path):
    """A negative origin index or dump time is read back as 2**64 minus it: such a header is
    not handed back, so what the reader gets is still what the file says."""
    outs = [DumpTensor(np.ones(2, np.float32), origin=("x", -1))]
    assert write_parsed_dump_file(tmp_path / "Add.a.1.0.1", "a", [], outs) is None
    assert write_parsed_dump_file(tmp_path / "Add.b.1.0.1", "b", [], [], dump_time=-1) is None
    assert parse_dump_file(tmp_path / "Add.a.1.0.1").outputs[0].origin == ("x", 2 ** 64 - 1)


def test_a_file_changed_after_its_write_is_read_again(tmp_path, monkeypatch):
    """Written again under its name (unvouched the second time), or replaced by someone else:
    the file's header is read, never the one first written."""
    leaf = tmp_path / "leaf"
    writer = AscendDumpWriter(leaf)  # not private: files are replaced atomically
    first = writer.write_op("Add", "a", [], [np.ones(3, np.float32)], task_id=1, timestamp_us=7)
    monkeypatch.setattr(ascend_bin, "_KNOWN_TENSORS", 1)
    writer.write_op("Add", "a", [], [np.ones(5, np.float32)] * 2, task_id=1, timestamp_us=7)
    assert first.name not in writer.parsed  # the earlier header is forgotten
    monkeypatch.undo()
    assert [t.shape for t in load_dump(leaf, written=writer.parsed).ops[0].outputs] == [(5,), (5,)]
    writer.write_op("Add", "a", [], [np.ones(3, np.float32)], task_id=1, timestamp_us=7)
    kept = dict(writer.parsed)
    AscendDumpWriter(leaf).write_op("Add", "a", [], [np.ones(4, np.float32)], task_id=1,
                                    timestamp_us=7)  # someone else replaces the file
    assert load_dump(leaf, written=kept).ops[0].outputs[0].shape == (4,)


@pytest.mark.parametrize("value", [0, 1, 127, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 63, 2 ** 64 - 1,
                                   -1, -(2 ** 31), -(2 ** 31) - 1])
def test_the_varint_rule_is_the_codec_s_round_trip(value):
    """``_varints_hold`` says yes exactly where encoding then decoding gives the message back,
    for each integer kind: uint (dump_time, size, dims, output_index: 64 bits) and int32/enum
    (data_type, format, sub_format: the low 32 bits, sign-extended)."""
    from pytest_ascend_accuracy.dump.proto import DumpData, OpInput, OpOutput, OriginalOp, Shape

    messages = [DumpData(version="2.0", dump_time=value),
                DumpData(output=(OpOutput(size=value),)),
                DumpData(output=(OpOutput(shape=Shape((1, value, 3))),)),
                DumpData(output=(OpOutput(original_op=OriginalOp(name="x", output_index=value)),)),
                DumpData(output=(OpOutput(data_type=value),)),
                DumpData(output=(OpOutput(format=1, sub_format=value),)),
                DumpData(output=(OpOutput(),), input=(OpInput(sub_format=value),))]
    for message in messages:
        try:
            back = DumpData.decode(message.encode())
        except ValueError:  # a varint longer than 10 bytes: never given back either
            back = None
        assert ascend_bin._varints_hold(message) == (back == message), message

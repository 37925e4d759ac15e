"""npy directories: golden naming, converted NPU naming, long names, pickles, duplicates."""
import csv
import os

import numpy as np
import pytest

from pytest_ascend_accuracy.dump import npy_dir
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.npy_dir import read_npy_dir
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter
from pytest_ascend_accuracy.errors import DumpFormatError


def test_golden_naming_and_graph_order(tmp_path):
    with NpyDumpWriter(tmp_path) as w:
        w.write_op("conv/1.a", [np.ones((1, 2))], [np.zeros((1, 3)), np.ones(4, np.int64)])
        w.write_op("relu", [], [np.arange(3, dtype=np.float16)], timestamp_us=9_000_000_000_000_000)
        w.write_op("add", [], [np.arange(2.0)])
    names = sorted(os.listdir(tmp_path))
    ts = [n.split(".")[-2] for n in names]
    assert all(len(t) == 16 for t in ts)
    assert [n.rsplit(".", 2)[0] for n in names] == [
        "add.0", "conv_1_a.0", "conv_1_a.1", "input_conv_1_a.0", "relu.0"]
    dump = load_dump(tmp_path)
    assert dump.kind == "npy" and dump.meta["naming"] == "golden"
    assert dump.names == ["conv_1_a", "relu", "add"]  # write (timestamp) order
    conv = dump["conv_1_a"]
    assert [(t.kind, t.index, t.dtype, t.shape) for t in conv.inputs + conv.outputs] == [
        ("input", 0, "float64", (1, 2)), ("output", 0, "float64", (1, 3)),
        ("output", 1, "int64", (4,))]
    assert np.array_equal(dump["relu"].output().load(), np.arange(3, dtype=np.float16))


def test_golden_npy_files_written_by_other_tools_are_read(tmp_path):
    np.save(tmp_path / "Conv_0.0.1682067845380164.npy", np.ones(2, np.float32))
    np.save(tmp_path / "input_Conv_0.0.1682067845380164.npy", np.zeros(2, np.float32))
    np.save(tmp_path / "Relu_1.0.1682067845380165.npy", np.ones(2, np.float32))
    dump = read_npy_dir(tmp_path)
    assert dump.names == ["Conv_0", "Relu_1"]
    assert len(dump["Conv_0"].inputs) == 1


def test_op_whose_name_starts_with_input_is_an_op_when_nothing_else_claims_it(tmp_path):
    with NpyDumpWriter(tmp_path) as w:
        w.write_op("input_proj", [], [np.ones(2)])
    assert read_npy_dir(tmp_path).names == ["input_proj"]


def test_dtypes_nan_inf_and_zero_size_round_trip(tmp_path):
    arrays = [np.array([np.nan, np.inf, -np.inf], np.float32), np.zeros((0, 4), np.float16),
              np.array(True), np.arange(3, dtype=np.uint8), np.array([1 + 2j], np.complex64)]
    NpyDumpWriter(tmp_path).write_op("op", [], arrays)
    outs = read_npy_dir(tmp_path)["op"].outputs
    for a, t in zip(arrays, outs):
        got = t.load()
        assert t.shape == a.shape and t.dtype == a.dtype.name
        assert got.tobytes() == a.tobytes() and got.shape == a.shape


def test_loading_is_memory_mapped_and_read_only(tmp_path):
    NpyDumpWriter(tmp_path).write_op("op", [], [np.arange(10.0)])
    arr = read_npy_dir(tmp_path)["op"].output().load()
    assert isinstance(arr, np.memmap) and not arr.flags.writeable


def test_long_names_use_mapping_csv(tmp_path):
    name = "encoder/" * 40 + "matmul"
    paths = NpyDumpWriter(tmp_path).write_op(name, [np.ones(1)], [np.ones(2)])
    assert all(p.name[:-4].isdigit() for p in paths)
    rows = list(csv.reader(open(tmp_path / "mapping.csv", newline="")))
    assert [r[0] for r in rows] == [p.name for p in paths]
    assert rows[0][1].startswith("encoder_encoder_") and rows[0][1].endswith(".npy")
    dump = read_npy_dir(tmp_path)
    assert dump.names == ["encoder_" * 40 + "matmul"]
    assert dump.ops[0].output().shape == (2,) and dump.ops[0].inputs[0].shape == (1,)


def test_pickled_object_npy_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "evil.0.1682067845380164.npy"
    np.save(path, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    with pytest.raises(DumpFormatError) as info:
        load_dump(tmp_path)
    assert str(info.value) == (f"{path}: holds Python objects (a pickled object array); refused, "
                               ".npy files are only read with allow_pickle=False")


def test_corrupt_npy_names_the_file(tmp_path):
    path = tmp_path / "op.0.1682067845380164.npy"
    path.write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(DumpFormatError, match=f"^{path}: not a valid .npy file"):
        read_npy_dir(tmp_path)


def test_writer_refuses_an_op_written_twice(tmp_path):
    w = NpyDumpWriter(tmp_path)
    w.write_op("a/b", [], [np.ones(1)])
    with pytest.raises(DumpFormatError, match="op 'a/b' written twice"):
        w.write_op("a/b", [], [np.ones(1)])
    assert len(os.listdir(tmp_path)) == 1


HOSTILE = ["x", "input_x", "input_input_x", "a.b", "a_b", "a/b", "line\nbreak", "%41", "",
           "input_", "ü b", "c,d", "e\"f", "\0", "%", "input_%41", "_" * 300]


@pytest.mark.parametrize("order", [1, -1])
def test_golden_naming_is_injective_every_op_reads_back_under_its_own_name(tmp_path, order):
    """D3: ops named input_<another op>, with a newline, or sanitising alike each keep their
    own golden tensors (they used to read back as another op's inputs, or not at all)."""
    names = HOSTILE[::order]
    with NpyDumpWriter(tmp_path) as w:
        for k, name in enumerate(names):
            w.write_op(name, [np.full(2, -k, np.float32)], [np.full(3, k, np.float32)],
                       timestamp_us=1_700_000_000_000_000 + k)
    dump = read_npy_dir(tmp_path)
    plain = {"x": "x", "a/b": "a_b", "a.b": "a_b", "a_b": "a_b"}
    got = set(dump.names)
    for k, name in enumerate(names):
        op = dump.get(name) or dump.get(plain.get(name, name))
        assert op is not None, (name, dump.names)
        assert op.outputs[0].load().tolist() == [k] * 3, name
        assert op.inputs[0].load().tolist() == [-k] * 2, name
    assert len(got) == len(names)


def test_plain_names_keep_msits_form(tmp_path):
    with NpyDumpWriter(tmp_path) as w:
        w.write_op("/model/conv.1", [np.ones(1)], [np.ones(1)], timestamp_us=1)
        w.write_op("input_x", [], [np.ones(1)], timestamp_us=2)
        w.write_op("a\nb", [], [np.ones(1)], timestamp_us=3)
    assert sorted(os.listdir(tmp_path)) == [
        "%a%0Ab.0.3.npy", "_model_conv_1.0.1.npy", "input__model_conv_1.0.1.npy",
        "input_x.0.2.npy"]  # no op x: input_x is unambiguous
    assert read_npy_dir(tmp_path).names == ["_model_conv_1", "input_x", "a\nb"]


def test_a_collision_records_the_earlier_real_name(tmp_path):
    with NpyDumpWriter(tmp_path) as w:
        w.write_op("a.b", [], [np.ones(1)], timestamp_us=1)
        w.write_op("a_b", [], [np.zeros(1)], timestamp_us=2)
    assert (tmp_path / "op_names.csv").read_text() == "a_b,a.b\n"
    dump = read_npy_dir(tmp_path)
    assert dump.names == ["a.b", "a_b"]
    assert dump["a.b"].outputs[0].load().tolist() == [1.0]


def test_escape_round_trips_and_refuses_what_it_did_not_write():
    from pytest_ascend_accuracy.dump.golden_names import escape, unescape
    for name in HOSTILE:
        assert unescape(escape(name)) == name
    assert unescape("%zz%") is None and unescape("plain") is None and unescape("%%4") is None


def test_op_names_csv_parser_errors_name_file_and_line(tmp_path):
    with NpyDumpWriter(tmp_path) as w:
        w.write_op("a", [], [np.ones(1)], timestamp_us=1)
    (tmp_path / "op_names.csv").write_text('a,"b\n')
    with pytest.raises(DumpFormatError, match=r"op_names.csv: line 1: not a valid CSV row"):
        read_npy_dir(tmp_path)


def test_unsafe_names_stay_inside_the_directory(tmp_path):
    d = tmp_path / "golden"
    NpyDumpWriter(d).write_op("../../outside", [], [np.ones(1)])
    assert os.listdir(tmp_path) == ["golden"]
    assert read_npy_dir(d).names == ["______outside"]


def test_repeated_dumps_of_a_slot_keep_the_last(tmp_path):
    np.save(tmp_path / "op.0.1000000000000001.npy", np.zeros(2))
    np.save(tmp_path / "op.0.1000000000000003.npy", np.ones(2))
    np.save(tmp_path / "other.0.1000000000000002.npy", np.ones(2))
    dump = read_npy_dir(tmp_path)
    assert dump["op"].output().load().tolist() == [1.0, 1.0]
    assert dump.meta["repeated"] == {"op": 2}
    assert dump.names == ["other", "op"]


def test_converted_npu_naming(tmp_path):
    base = "Conv2D.conv1.5.1.1682067845380164"
    np.save(tmp_path / f"{base}.output.0.npy", np.ones((1, 1, 2, 2, 16), np.float16))
    np.save(tmp_path / f"{base}.input.0.npy", np.ones((1, 3, 4, 4), np.float16))
    np.save(tmp_path / "Relu.relu1.6.1.1682067845380170.output.0.npy", np.ones(3, np.float16))
    dump = load_dump(tmp_path)
    assert dump.meta["naming"] == "converted"
    assert dump.names == ["conv1", "relu1"]
    assert dump["conv1"].op_type == "Conv2D"
    assert dump["conv1"].output().shape == (1, 1, 2, 2, 16)
    assert dump["conv1"].inputs[0].shape == (1, 3, 4, 4)


def test_empty_npy_directory(tmp_path):
    with pytest.raises(DumpFormatError, match=f"^{tmp_path}: empty dump directory: no .npy"):
        read_npy_dir(tmp_path)


def test_headers_only_at_load_time(tmp_path, monkeypatch):
    NpyDumpWriter(tmp_path).write_op("op", [], [np.arange(5.0)])
    calls = []
    real = npy_dir.load_npy
    monkeypatch.setattr(npy_dir, "load_npy", lambda p: calls.append(p) or real(p))
    dump = load_dump(tmp_path)
    assert calls == [] and dump["op"].output().shape == (5,)
    dump["op"].output().load()
    assert len(calls) == 1

"""The golden writes each activation once: an input that is another node's output is a row of
``input_refs.csv`` (in a packed golden, of the index's ``refs``) pointing at the producer's
output, and reads back with the same value."""
import json
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.dump.npy_dir import INPUT_REFS_FILE, read_npy_dir  # noqa: E402
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter  # noqa: E402
from pytest_ascend_accuracy.errors import DumpFormatError  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402


def test_golden_dir_holds_each_activation_once_and_inputs_read_the_producers_file(tmp_path):
    from onnx import numpy_helper

    model = models.transformer_block()
    feeds = make_inputs(model)
    dump = golden_dump(model, feeds, cache=Cache(tmp_path / "cache"))
    graph = model.graph
    produced = {o for n in graph.node for o in n.output if o}
    slots = [i for n in graph.node for i in n.input if i and i not in produced]
    not_produced = set(slots)
    assert len(slots) > len(not_produced)  # the model reads a weight twice: this test means it
    index = json.loads((Path(dump.meta["cache_entry"]) / "npy_index.json").read_text())
    files = list(index["files"])  # the pack's records, by the names their files would have
    # one record per node output, plus one per graph input or weight however many nodes read it
    assert len(files) == len(produced) + len(not_produced)
    assert sum(1 for name in files if name.startswith("input_")) == len(not_produced)
    producer = {o: op for n, op in zip(graph.node, dump.ops) for o in n.output if o}
    weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    first_read = {}  # weight or graph input -> the file its first reader stored
    checked = 0
    for node, op in zip(graph.node, dump.ops):
        assert len(op.inputs) == len([i for i in node.input if i])
        for name, ref in zip((i for i in node.input if i), op.inputs):
            if name in producer:
                out = producer[name].output(0)
                assert ref.source == out.source  # the producer's file, not a copy
                np.testing.assert_array_equal(ref.load(), out.load())
                checked += 1
                continue
            expected = weights[name] if name in weights else feeds[name]
            np.testing.assert_array_equal(ref.load(), expected)
            if name in first_read:
                assert ref.source == first_read[name]  # the first reader's record, not a copy
                checked += 1
            first_read.setdefault(name, ref.source)
    assert checked == len(index["refs"]) > 10


def test_writer_refers_to_a_written_output_and_reader_gives_the_same_dumpset(tmp_path):
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(3, np.float32)
    with NpyDumpWriter(tmp_path / "refs") as w:
        pa = w.write_op("first", [a], [a * 2], timestamp_us=1)[0]  # outputs come first
        w.write_op("second", [pa, b], [a * 2 + b], timestamp_us=2)
    with NpyDumpWriter(tmp_path / "full") as w:
        w.write_op("first", [a], [a * 2], timestamp_us=1)
        w.write_op("second", [a * 2, b], [a * 2 + b], timestamp_us=2)
    refs, full = read_npy_dir(tmp_path / "refs"), read_npy_dir(tmp_path / "full")
    assert len(list((tmp_path / "refs").glob("*.npy"))) == 4  # a*2 stored once
    assert refs.names == full.names == ["first", "second"]
    for x, y in zip(refs.ops, full.ops):
        assert [(t.kind, t.index, t.shape) for t in x.inputs + x.outputs] == \
               [(t.kind, t.index, t.shape) for t in y.inputs + y.outputs]
        for t, u in zip(x.inputs + x.outputs, y.inputs + y.outputs):
            np.testing.assert_array_equal(t.load(), u.load())


def test_writer_refuses_a_reference_to_a_file_of_another_directory(tmp_path):
    other = tmp_path / "x.npy"
    np.save(other, np.zeros(2, np.float32))
    with NpyDumpWriter(tmp_path / "d") as w, \
            pytest.raises(DumpFormatError, match="not a file of this directory"):
        w.write_op("op", [other], [np.zeros(2, np.float32)])


@pytest.mark.parametrize("row, problem", [
    ("input_second.0.2.npy,missing.0.1.npy",
     "line 1: input 'input_second.0.2.npy' refers to 'missing.0.1.npy'"),
    ("input_second.0.2.npy,../first.0.1.npy", "which is not a file of this directory"),
    ("second.0.2.npy,first.0.1.npy",
     "line 1: expected 'input_<op>.<i>.<ts>.npy,<producer file>'"),
    ("input_second.0.2.npy", "line 1: expected"),
])
def test_bad_input_refs_rows_are_errors_naming_the_file_and_line(tmp_path, row, problem):
    with NpyDumpWriter(tmp_path) as w:
        w.write_op("first", [], [np.zeros(2, np.float32)], timestamp_us=1)
        w.write_op("second", [], [np.zeros(2, np.float32)], timestamp_us=2)
    (tmp_path / INPUT_REFS_FILE).write_text(row + "\n", encoding="utf-8")
    with pytest.raises(DumpFormatError, match=INPUT_REFS_FILE) as info:
        read_npy_dir(tmp_path)
    assert problem in str(info.value)


@pytest.mark.parametrize("array", [
    np.arange(12, dtype=np.float32).reshape(3, 4), np.array(3.5, np.float16),
    np.zeros((0, 3), np.int64), np.array([True, False]), np.arange(4, dtype=">f4"),
    np.asfortranarray(np.arange(6.0).reshape(2, 3)), np.arange(10.0)[::2],
    np.arange((16 << 20) + 5, dtype=np.uint8),  # more than one 16 MiB slice
], ids=["f32", "f16-scalar", "empty", "bool", "big-endian", "fortran", "strided", "two-slices"])
def test_write_npy_writes_the_bytes_np_save_writes(tmp_path, array):
    from pytest_ascend_accuracy.dump.npy_writer import write_npy

    with open(tmp_path / "ours.npy", "wb") as f:
        write_npy(f, array)
    np.save(tmp_path / "numpy.npy", array, allow_pickle=False)
    assert (tmp_path / "ours.npy").read_bytes() == (tmp_path / "numpy.npy").read_bytes()

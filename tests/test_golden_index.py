"""A golden cache entry holds its tensors in one pack file and is read from its index (no
directory listing, no header parsing) into the very DumpSet ``load_dump`` gives for a directory
of ``.npy`` files of the same golden; every pack record is the ``.npy`` file it stands for; the
manifest takes the digest the writer computed (xxh3_128) instead of reading the pack back; it
stays a verified entry."""
import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.core import cache as cache_mod  # noqa: E402
from pytest_ascend_accuracy.core.cache import HASH, MANIFEST, Cache  # noqa: E402
from pytest_ascend_accuracy.dump import npy_writer  # noqa: E402
from pytest_ascend_accuracy.dump.loader import load_dump  # noqa: E402
from pytest_ascend_accuracy.errors import DumpFormatError  # noqa: E402
from pytest_ascend_accuracy.golden import onnxruntime_golden  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import (  # noqa: E402
    DUMP_DIR, INDEX_FILE, PACK_FILE, golden_dump, golden_key, read_entry_dump)
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.graph.op_catalogue import model_ops, with_real_names  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402


def odd_names_model():
    """A node name over 255 bytes (mapping.csv), names msit's naming mixes up (op_names.csv,
    escapes), and a node whose output is a sequence (not a tensor: not dumped)."""
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="a.b"),
        helper.make_node("Neg", ["r"], ["n"], name="a_b"),
        helper.make_node("Abs", ["n"], ["ab"], name="input_x"),
        helper.make_node("Sigmoid", ["ab"], ["s"], name="L" * 300),
        helper.make_node("SequenceConstruct", ["s", "r"], ["seq"], name="to\nsequence"),
        helper.make_node("SequenceAt", ["seq", "zero"], ["y"], name="pick"),
    ]
    zero = onnx.numpy_helper.from_array(np.array(0, np.int64), "zero")
    graph = helper.make_graph(nodes, "odd_names", [x], [y], [zero])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


MODELS = [models.passing_mlp, models.conv_bn_relu, models.transformer_block, models.if_model,
          models.unnamed_model, odd_names_model]


def _layout(dump, model=None):
    """Everything of a DumpSet but where its bytes lie and when it was written; with ``model``,
    under the model's op names, as ``golden_dump`` gives them (files hold sanitised names)."""
    if model is not None:
        dump = with_real_names(dump, model_ops(model))
    return [(op.name, op.op_type, op.order,
             [(t.kind, t.index, t.dtype, t.shape) for t in op.inputs + op.outputs])
            for op in dump.ops]


@pytest.mark.parametrize("make", MODELS, ids=lambda m: m.__name__)
def test_the_packed_entry_is_the_dumpset_of_a_directory_of_npy_files(tmp_path, make, monkeypatch):
    model = make()
    dynamic = make in (models.if_model, models.unnamed_model)
    x = {"x": np.full((2, 4), -1.0, np.float32)} if dynamic else make_inputs(model)
    dump = golden_dump(model, x, cache=Cache(tmp_path / "cache"))
    entry = Cache(tmp_path / "cache").entry_path("golden", golden_key(model, x))
    assert (entry / INDEX_FILE).is_file() and (entry / DUMP_DIR / PACK_FILE).is_file()
    assert not list((entry / DUMP_DIR).glob("*.npy"))  # one file holds every tensor
    # the same golden written the other way, a file per tensor, and listed as a directory
    monkeypatch.setattr(onnxruntime_golden, "PACK_FILE", None)
    golden_dump(model, x, cache=Cache(tmp_path / "plain"))
    plain = Cache(tmp_path / "plain").entry_path("golden", golden_key(model, x))
    listed = load_dump(plain / DUMP_DIR)
    assert len(list((plain / DUMP_DIR).glob("*.npy"))) > 1
    packed = read_entry_dump(entry)
    assert _layout(packed, model) == _layout(listed, model) == _layout(dump) and len(dump)
    # the directory the reports show as the golden reads the same, through its index
    assert _layout(load_dump(entry / DUMP_DIR), model) == _layout(dump)
    assert dump.root == str(entry / DUMP_DIR)
    # and the entry's own folder (a YAML trial passed it to ascend-accuracy compare: refused as
    # "JSON, not a dump")
    assert _layout(load_dump(entry), model) == _layout(dump)
    for a, b in zip(listed.ops, packed.ops):
        for t, u in zip(a.inputs + a.outputs, b.inputs + b.outputs):
            np.testing.assert_array_equal(t.load(), u.load())
            assert u.source.startswith(str(entry / DUMP_DIR / PACK_FILE) + "#")


def test_every_pack_record_is_the_npy_file_it_stands_for(tmp_path):
    """Cut out of the pack at the index's offsets, each record is a ``.npy`` file numpy reads
    back to the tensor's values."""
    model = models.conv_bn_relu()
    dump = golden_dump(model, make_inputs(model), cache=Cache(tmp_path / "cache"))
    entry = next((tmp_path / "cache" / "golden").glob("*/*"))
    index = json.loads((entry / INDEX_FILE).read_text())
    data = (entry / DUMP_DIR / PACK_FILE).read_bytes()
    assert index["pack"] == PACK_FILE
    ends = []
    for stored, (real, shape, descr, fortran, offset, size) in index["files"].items():
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(descr).itemsize
        start = offset + nbytes - size
        ends.append((start, offset + nbytes))
        (tmp_path / "cut.npy").write_bytes(data[start:offset + nbytes])
        values = np.load(tmp_path / "cut.npy", allow_pickle=False)
        assert list(values.shape) == shape and values.dtype == np.dtype(descr)
        # the tensor it stands for, and every input that refers to it (stored once)
        slots = [t for o in dump.ops for t in o.inputs + o.outputs if t.source.endswith("#" + stored)]
        assert slots, stored
        for t in slots:
            np.testing.assert_array_equal(values, t.load())
    ends.sort()
    # records in order, each at a multiple of 64 bytes (zeros between): values 64-byte aligned
    assert ends[0][0] == 0 and ends[-1][1] == len(data)
    for (_, end), (start, _) in zip(ends, ends[1:]):
        assert start % 64 == 0 and 0 <= start - end < 64 and not any(data[end:start])
    for op in dump.ops:
        for t in op.outputs:
            assert t.load().flags.aligned and t.loader.span.offset % 64 == 0


def test_a_pack_shorter_than_its_index_says_is_refused_naming_the_pack(tmp_path):
    model = models.passing_mlp()
    x = make_inputs(model)
    golden_dump(model, x, cache=Cache(tmp_path / "cache"))
    entry = Cache(tmp_path / "cache").entry_path("golden", golden_key(model, x))
    pack = entry / DUMP_DIR / PACK_FILE
    with open(pack, "r+b") as f:
        f.truncate(pack.stat().st_size - 4)
    with pytest.raises(DumpFormatError, match="truncated") as err:
        read_entry_dump(entry)
    assert str(pack) in str(err.value)
    fresh = Cache(tmp_path / "cache")  # through the cache: a changed size, rebuilt
    assert len(golden_dump(model, x, cache=fresh)) == len(model.graph.node)
    assert fresh.stats.rebuilt == 1


def test_odd_names_survive_and_the_sequence_is_not_dumped(tmp_path):
    model = odd_names_model()
    dump = golden_dump(model, make_inputs(model), cache=Cache(tmp_path / "cache"))
    root = tmp_path / "cache"
    assert {"a.b", "a_b", "input_x", "L" * 300} <= set(dump.names)
    # no file bears the 300-byte name: no mapping.csv; op_names.csv still says who is who
    assert not any(root.rglob("mapping.csv")) and any(root.rglob("op_names.csv"))
    assert dump.meta["not_dumped"] == ["to\nsequence:seq"]


def test_the_manifest_takes_the_written_digests_without_reading_the_files(tmp_path, monkeypatch):
    hashed = []
    real = cache_mod.file_digest
    monkeypatch.setattr(cache_mod, "file_digest", lambda p, *a: hashed.append(p.name) or real(p, *a))
    model = models.transformer_block()
    dump = golden_dump(model, make_inputs(model), cache=Cache(tmp_path / "cache"))
    entry = next((tmp_path / "cache" / "golden").glob("*/*"))
    manifest = json.loads((entry / MANIFEST).read_text())
    assert manifest["hash"] == HASH
    assert len(dump) > 40 and PACK_FILE not in hashed
    rel = f"{DUMP_DIR}/{PACK_FILE}"
    size, digest = manifest["files"][rel]  # the vouched digest is the pack's own
    assert (entry / rel).stat().st_size == size and real(entry / rel, HASH) == digest
    assert set(hashed) <= {"golden.json", INDEX_FILE, "op_names.csv"}
    assert len(manifest["files"]) <= 4  # the pack, its index, golden.json, op_names.csv
    assert len(dump) == 49


def test_a_changed_index_is_a_corrupt_entry_and_is_rebuilt(tmp_path):
    model = models.passing_mlp()
    x = make_inputs(model)
    golden_dump(model, x, cache=Cache(tmp_path / "cache"))
    entry = Cache(tmp_path / "cache").entry_path("golden", golden_key(model, x))
    index = json.loads((entry / INDEX_FILE).read_text())
    index["files"] = {}  # still JSON, same size would not matter: the digest differs
    (entry / INDEX_FILE).write_text(json.dumps(index))
    fresh = Cache(tmp_path / "cache")
    dump = golden_dump(model, x, cache=fresh)
    assert fresh.stats.rebuilt == 1 and len(dump) == len(model.graph.node)
    assert _layout(read_entry_dump(entry), model) == _layout(dump)


def test_a_packed_entry_without_its_index_is_an_error_and_the_cache_rebuilds_it(tmp_path):
    model = models.passing_mlp()
    x = make_inputs(model)
    golden_dump(model, x, cache=Cache(tmp_path / "cache"))
    entry = Cache(tmp_path / "cache").entry_path("golden", golden_key(model, x))
    listed = read_entry_dump(entry)
    (entry / INDEX_FILE).unlink()
    with pytest.raises(DumpFormatError, match="only this index describes") as err:
        read_entry_dump(entry)
    assert str(entry / INDEX_FILE) in str(err.value)
    fresh = Cache(tmp_path / "cache")
    assert _layout(golden_dump(model, x, cache=fresh)) == _layout(listed, model)
    assert fresh.stats.rebuilt == 1 and (entry / INDEX_FILE).is_file()


def test_an_unpacked_entry_without_an_index_is_loaded_from_its_directory(tmp_path, monkeypatch):
    """What a build writes when it cannot index its tensors: a directory of .npy files."""
    monkeypatch.setattr(onnxruntime_golden, "PACK_FILE", None)
    model = models.passing_mlp()
    x = make_inputs(model)
    golden_dump(model, x, cache=Cache(tmp_path / "cache"))
    entry = Cache(tmp_path / "cache").entry_path("golden", golden_key(model, x))
    monkeypatch.undo()
    listed = read_entry_dump(entry)
    (entry / INDEX_FILE).unlink()
    assert read_entry_dump(entry) == listed


def test_golden_build_writes_each_npy_file_once_in_place(tmp_path, monkeypatch):
    """No temp file + rename per tensor in the cache's private build directory."""
    import os

    renamed = []
    real = os.replace
    monkeypatch.setattr(npy_writer.os, "replace", lambda a, b: renamed.append(b) or real(a, b))
    model = models.transformer_block()
    golden_dump(model, make_inputs(model), cache=Cache(tmp_path / "cache"))
    assert [p for p in renamed if p.suffix in (".npy", ".csv")] == []


def test_a_packed_npy_folder_copied_away_from_its_entry_names_the_entry_to_pass(
        tmp_path, emulated_run, capsys):
    """``cp -r <entry>/npy`` (docs/cli.md names an entry's ``npy/`` folder as a GOLDEN) read as
    "empty dump directory" (H99): the pack's index is one folder up. The error says so, and
    the entry folder it names, passed instead (or copied whole), compares."""
    import shutil

    from pytest_ascend_accuracy.cli import main

    dump, om_json, _ = emulated_run(tmp_path, models.passing_mlp())
    entry = next((tmp_path / "cache" / "golden").glob(f"*/*/{DUMP_DIR}")).parent
    shutil.copytree(entry / DUMP_DIR, tmp_path / "golden_npy")
    capsys.readouterr()
    assert main(["compare", dump, str(tmp_path / "golden_npy"), "--om-json", om_json]) == 2
    err = capsys.readouterr().err
    assert f"holds {PACK_FILE}, the tensors of a golden cache entry's npy/ folder" in err
    assert f"pass the entry folder (the one holding {INDEX_FILE}), or copy the whole entry" in err
    for golden in (entry, shutil.copytree(entry, tmp_path / "golden_entry")):
        assert main(["compare", dump, str(golden), "--om-json", om_json]) == 0
        assert capsys.readouterr().out.startswith("accuracy PASSED")

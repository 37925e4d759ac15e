"""A golden cache entry is read from its index (no directory listing, no header parsing) into
the very DumpSet ``load_dump`` gives for its ``npy`` directory; its manifest takes the digests
the writer computed (xxh3_128) instead of reading the files back; it stays a verified entry."""
import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.core import cache as cache_mod  # noqa: E402
from pytest_ascend_accuracy.core.cache import HASH, MANIFEST, Cache  # noqa: E402
from pytest_ascend_accuracy.dump import npy_dir  # noqa: E402
from pytest_ascend_accuracy.dump.loader import load_dump  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import (  # noqa: E402
    DUMP_DIR, INDEX_FILE, golden_dump, golden_key, read_entry_dump)
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
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


@pytest.mark.parametrize("make", MODELS, ids=lambda m: m.__name__)
def test_the_indexed_entry_is_the_dumpset_load_dump_gives(tmp_path, make):
    model = make()
    dynamic = make in (models.if_model, models.unnamed_model)
    x = {"x": np.full((2, 4), -1.0, np.float32)} if dynamic else make_inputs(model)
    dump = golden_dump(model, x, cache=Cache(tmp_path / "cache"))
    entry = Cache(tmp_path / "cache").entry_path("golden", golden_key(model, x))
    assert (entry / INDEX_FILE).is_file()
    listed = load_dump(entry / DUMP_DIR)
    assert read_entry_dump(entry) == listed
    assert dump.ops == listed.ops and dump.root == listed.root
    for x, y in zip(listed.ops, dump.ops):
        for t, u in zip(x.inputs + x.outputs, y.inputs + y.outputs):
            np.testing.assert_array_equal(t.load(), u.load())


def test_odd_names_survive_and_the_sequence_is_not_dumped(tmp_path):
    model = odd_names_model()
    dump = golden_dump(model, make_inputs(model), cache=Cache(tmp_path / "cache"))
    root = tmp_path / "cache"
    assert {"a.b", "a_b", "input_x", "L" * 300} <= set(dump.names)
    assert any(root.rglob("mapping.csv")) and any(root.rglob("op_names.csv"))
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
    npy = [rel for rel in manifest["files"] if rel.endswith(".npy")]
    assert len(npy) > 50 and not any(name.endswith(".npy") for name in hashed)
    for rel in npy:  # the vouched digests are the files' own
        size, digest = manifest["files"][rel]
        assert (entry / rel).stat().st_size == size and real(entry / rel, HASH) == digest
    assert set(hashed) <= {"golden.json", INDEX_FILE, "input_refs.csv", "op_names.csv"}
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
    assert read_entry_dump(entry) == load_dump(entry / DUMP_DIR)


def test_an_entry_without_an_index_is_loaded_from_its_directory(tmp_path):
    model = models.passing_mlp()
    x = make_inputs(model)
    golden_dump(model, x, cache=Cache(tmp_path / "cache"))
    entry = Cache(tmp_path / "cache").entry_path("golden", golden_key(model, x))
    listed = read_entry_dump(entry)
    (entry / INDEX_FILE).unlink()
    assert read_entry_dump(entry) == listed


def test_golden_build_writes_each_npy_file_once_in_place(tmp_path, monkeypatch):
    """No temp file + rename per tensor in the cache's private build directory."""
    import os

    renamed = []
    real = os.replace
    monkeypatch.setattr(npy_dir.os, "replace", lambda a, b: renamed.append(b) or real(a, b))
    model = models.transformer_block()
    golden_dump(model, make_inputs(model), cache=Cache(tmp_path / "cache"))
    assert [p for p in renamed if p.suffix in (".npy", ".csv")] == []

"""Cache keys' content digests (``model_digest``, ``inputs_digest``): the cache's manifest hash
(xxh3_128, named in the digest), over exactly the bytes that make the model or inputs."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from pytest_ascend_accuracy.core.cache import HASH  # noqa: E402
from pytest_ascend_accuracy.graph.content_digests import inputs_digest, model_digest  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402


def test_a_model_digest_names_its_hash_and_is_the_same_for_a_file_and_its_bytes(tmp_path):
    model = models.passing_mlp()
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    digest = model_digest(path)
    assert HASH == "xxh3_128" and digest.startswith("xxh3_128:")  # xxhash is a dependency
    assert digest == model_digest(path.read_bytes()) == model_digest(model)
    other = tmp_path / "n.onnx"
    onnx.save(models.transformer_block(), str(other))
    assert model_digest(other) != digest


def test_an_inputs_digest_changes_with_any_value_dtype_shape_or_name_only():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.ones(2, np.int64)
    base = inputs_digest({"x": x, "y": y})
    assert base.startswith(f"{HASH}:")
    assert inputs_digest({"y": y.copy(), "x": np.asfortranarray(x)}) == base  # order, layout
    changed = x.copy()
    changed[2, 3] = np.nextafter(changed[2, 3], np.float32(100))
    for variant in ({"x": changed, "y": y}, {"x": x.astype(np.float64), "y": y},
                    {"x": x.reshape(4, 3), "y": y}, {"z": x, "y": y}, {"x": x}):
        assert inputs_digest(variant) != base


def test_a_big_model_file_that_also_keeps_weights_outside_is_digested_with_them(tmp_path,
                                                                                monkeypatch):
    """A .onnx big enough to be read without its own weights (``wire``: here made "big" by
    lowering its thresholds) that keeps another weight in external data: the data file is part
    of the model's identity (it was skipped for files over 256 MiB: stale cache entries)."""
    from onnx import TensorProto, helper, numpy_helper
    from onnx.external_data_helper import set_external_data

    from pytest_ascend_accuracy.graph import wire
    from pytest_ascend_accuracy.graph.onnx_graph import external_data_files, load_model

    big = numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64), "big")
    small = numpy_helper.from_array(np.ones((64, 64), np.float32), "small")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "big"], ["h"]),
         helper.make_node("Add", ["h", "small"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 64])], initializer=[big, small])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    data = tmp_path / "m.onnx.data"
    data.write_bytes(numpy_helper.to_array(small).tobytes())
    set_external_data(model.graph.initializer[1], location="m.onnx.data", offset=0,
                      length=data.stat().st_size)
    model.graph.initializer[1].ClearField("raw_data")
    model.graph.initializer[1].data_location = TensorProto.EXTERNAL
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    monkeypatch.setattr(wire, "SCAN_ABOVE", 1024)
    monkeypatch.setattr(wire, "REF_ABOVE", 1024)
    light = load_model(path, weights=False)  # the big-file path: its own weight refers to itself
    assert [e.value for e in light.graph.initializer[0].external_data if e.key == "location"] \
        == ["m.onnx"]
    assert external_data_files(path) == [str(data)]
    before = model_digest(path)
    raw = bytearray(data.read_bytes())
    raw[0] ^= 1
    data.write_bytes(bytes(raw))
    assert model_digest(path) != before


def _settled(path, seconds_ago=60):
    """Backdate the file's times, as a model written a while ago has them."""
    import os
    import time

    old = time.time() - seconds_ago
    os.utime(path, (old, old))


def test_a_settled_models_digest_is_remembered_until_its_file_changes(tmp_path, monkeypatch):
    from pytest_ascend_accuracy.graph import onnx_graph

    path = tmp_path / "m.onnx"
    onnx.save(models.passing_mlp(), str(path))
    _settled(path)
    listed = []
    real = onnx_graph.external_data_files
    monkeypatch.setattr(onnx_graph, "external_data_files", lambda p: listed.append(p) or real(p))
    first = model_digest(path)
    assert model_digest(path) == first and len(listed) == 1  # the second: remembered
    from pytest_ascend_accuracy.graph.content_digests import forget_digests

    forget_digests()
    assert model_digest(path) == first and len(listed) == 2  # hashed again
    # same size, other bytes, times set back to the old ones: the change time still moved
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 1
    stat = path.stat()
    path.write_bytes(bytes(raw))
    import os

    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert model_digest(path) != first and len(listed) == 3


def test_a_just_written_models_digest_is_hashed_again(tmp_path, monkeypatch):
    """A file modified within a clock tick of being hashed could change again unseen: it is
    remembered only once it is SETTLED_S old."""
    from pytest_ascend_accuracy.graph import onnx_graph

    path = tmp_path / "m.onnx"
    onnx.save(models.passing_mlp(), str(path))
    listed = []
    real = onnx_graph.external_data_files
    monkeypatch.setattr(onnx_graph, "external_data_files", lambda p: listed.append(p) or real(p))
    assert model_digest(path) == model_digest(path) and len(listed) == 2

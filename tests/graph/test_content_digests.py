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


@pytest.fixture
def later(monkeypatch):
    """The clock the settled rule reads, a minute ahead: files written now look settled (their
    ctime cannot be set back). Remembered digests are forgotten before and after."""
    from pytest_ascend_accuracy.graph import content_digests

    real = content_digests._now
    monkeypatch.setattr(content_digests, "_now", lambda: real() + 60 * 10 ** 9)
    content_digests.forget_digests()
    yield
    content_digests.forget_digests()


def _counting(monkeypatch):
    """The model files hashed from here on (each time a digest is not remembered)."""
    from pytest_ascend_accuracy.graph import content_digests

    hashed = []
    real = content_digests._hash_file

    def counting(path, h, look_for=b""):
        if look_for:  # the model file itself (its data files are hashed without looking)
            hashed.append(path)
        return real(path, h, look_for)

    monkeypatch.setattr(content_digests, "_hash_file", counting)
    return hashed


def _with_data(folder, weights):
    """``folder/m.onnx`` whose initializer ``w`` lies in ``folder/w.data``."""
    from onnx import TensorProto, helper
    from onnx.external_data_helper import set_external_data

    folder.mkdir(parents=True, exist_ok=True)
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], np.zeros(4, np.float32).tobytes(), raw=True)
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    (folder / "w.data").write_bytes(np.asarray(weights, np.float32).tobytes())
    init = model.graph.initializer[0]
    set_external_data(init, location="w.data", offset=0, length=16)
    init.ClearField("raw_data")
    init.data_location = TensorProto.EXTERNAL
    (folder / "m.onnx").write_bytes(model.SerializeToString())
    return folder / "m.onnx"


def test_a_settled_models_digest_is_remembered_until_its_file_changes(tmp_path, monkeypatch,
                                                                      later):
    import os
    import time

    from pytest_ascend_accuracy.graph.content_digests import forget_digests

    path = tmp_path / "m.onnx"
    onnx.save(models.passing_mlp(), str(path))
    listed = _counting(monkeypatch)
    first = model_digest(path)
    assert model_digest(path) == first and len(listed) == 1  # the second: remembered
    forget_digests()
    assert model_digest(path) == first and len(listed) == 2  # hashed again
    # same size, other bytes, the old modification time set back: the change time moved
    time.sleep(0.05)  # past a coarse clock tick
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 1
    stat = path.stat()
    path.write_bytes(bytes(raw))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert model_digest(path) != first and len(listed) == 3


def test_a_just_written_models_digest_is_hashed_again(tmp_path, monkeypatch):
    """A file modified within a clock tick of being stamped could change again unseen: it is
    remembered only once it (mtime and ctime) is SETTLED_S old."""
    from pytest_ascend_accuracy.graph import content_digests

    path = tmp_path / "m.onnx"
    onnx.save(models.passing_mlp(), str(path))
    # the clock half SETTLED_S after the write, however long this machine takes to get to the
    # digests (a stall of SETTLED_S here made the file settled, and its digest remembered)
    st = path.stat()
    written = max(st.st_mtime_ns, st.st_ctime_ns)
    monkeypatch.setattr(content_digests, "_now",
                        lambda: written + int(content_digests.SETTLED_S * 10**9) // 2)
    listed = _counting(monkeypatch)
    assert model_digest(path) == model_digest(path) and len(listed) == 2


def test_a_remembered_digest_follows_its_data_files(tmp_path, monkeypatch, later):
    import time

    path = _with_data(tmp_path / "a", [1, 2, 3, 4])
    listed = _counting(monkeypatch)
    first = model_digest(path)
    assert model_digest(path) == first and len(listed) == 1
    time.sleep(0.05)
    (tmp_path / "a" / "w.data").write_bytes(np.asarray([1, 2, 3, 5], np.float32).tobytes())
    assert model_digest(path) != first  # same size, other weights
    (tmp_path / "a" / "w.data").unlink()
    with pytest.raises(Exception):
        model_digest(path)  # gone: an error, never the remembered digest


def test_a_relative_path_is_remembered_by_where_it_points(tmp_path, monkeypatch, later):
    """One model file (a hard link) in two folders with other weights beside it: the same
    relative name from each folder is a different model."""
    import os

    a = _with_data(tmp_path / "a", [1, 2, 3, 4])
    (tmp_path / "b").mkdir()
    os.link(a, tmp_path / "b" / "m.onnx")
    (tmp_path / "b" / "w.data").write_bytes(np.asarray([9, 9, 9, 9], np.float32).tobytes())
    monkeypatch.chdir(tmp_path / "a")
    from_a = model_digest("m.onnx")
    monkeypatch.chdir(tmp_path / "b")
    assert model_digest("m.onnx") != from_a


def test_a_model_replaced_by_rename_is_hashed_again(tmp_path, monkeypatch, later):
    import os

    path = tmp_path / "m.onnx"
    onnx.save(models.passing_mlp(), str(path))
    first = model_digest(path)
    other = bytearray(path.read_bytes())
    other[-1] ^= 1
    (tmp_path / "new.onnx").write_bytes(bytes(other))
    stat = path.stat()
    os.utime(tmp_path / "new.onnx", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    os.replace(tmp_path / "new.onnx", path)  # same size and mtime, another inode
    assert model_digest(path) != first


def test_a_model_file_without_the_bytes_location_is_not_parsed_for_data_files(tmp_path,
                                                                                 monkeypatch):
    """Every external data entry has the key "location": a file without those bytes has no
    data files, and its digest needs no parse of the model (8 ms for PP-OCRv4 det)."""
    from pytest_ascend_accuracy.graph import content_digests, onnx_graph

    path = tmp_path / "m.onnx"
    onnx.save(models.passing_mlp(), str(path))
    assert b"location" not in path.read_bytes()
    expected = model_digest(path.read_bytes())

    def never(*a, **k):
        raise AssertionError("parsed")

    monkeypatch.setattr(onnx_graph, "external_data_files", never)
    content_digests.forget_digests()
    assert model_digest(path) == expected
    named = models.passing_mlp()  # "location" in a node name: parsed, and no data file found
    named.graph.node[0].name = "location_of_the_first"
    onnx.save(named, str(path))
    monkeypatch.undo()
    calls = []
    real = onnx_graph.external_data_files
    monkeypatch.setattr(onnx_graph, "external_data_files",
                        lambda p: calls.append(p) or real(p))
    content_digests.forget_digests()
    assert model_digest(path) == model_digest(path.read_bytes()) and calls == [str(path)]


def test_the_bytes_location_are_found_across_read_blocks(tmp_path):
    from pytest_ascend_accuracy.graph.content_digests import _hash_file

    class Nothing:
        def update(self, block):
            pass

    for at in [0, (1 << 20) - 4, (1 << 20) - 8, (1 << 20) - 9, 1 << 20, (2 << 20) - 3]:
        data = bytearray(b"x" * ((2 << 20) + 100))
        data[at:at + 8] = b"location"
        path = tmp_path / f"f{at}"
        path.write_bytes(bytes(data))
        assert _hash_file(str(path), Nothing(), b"location"), at
    (tmp_path / "none").write_bytes(b"locatio" + b"x" * (1 << 20) + b"ocation")
    assert not _hash_file(str(tmp_path / "none"), Nothing(), b"location")

"""Cache keys' content digests (``model_digest``, ``inputs_digest``): the cache's manifest hash
(xxh3_128, named in the digest), over exactly the bytes that make the model or inputs."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from pytest_ascend_accuracy.core.cache import HASH  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import inputs_digest, model_digest  # noqa: E402
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

"""keep_dtype naming only an op folded at conversion is refused, as a per_op entry naming it is
(a PP-OCRv4 trial: keep_dtype(["p2o.Shape.0"]) converted and ran with the failure unchanged,
and diagnose said PASSES, with no word that the entry kept nothing)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T, helper as h, numpy_helper as nh

from pytest_ascend_accuracy import keep_dtype
from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import ConfigError


@pytest.fixture
def model(tmp_path):
    """y = Reshape(x * 2, Shape(x)): the Shape node is folded (x's shape is static)."""
    g = h.make_graph([h.make_node("Shape", ["x"], ["s"], name="shape_of_x"),
                      h.make_node("Mul", ["x", "two"], ["m"], name="double"),
                      h.make_node("Reshape", ["m", "s"], ["y"], name="reshape")],
                     "folds", [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 3])],
                     [nh.from_array(np.array(2.0, np.float32), "two")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    path = tmp_path / "folds.onnx"
    onnx.save(m, str(path))
    return path


def test_a_keep_dtype_entry_naming_a_folded_op_is_refused_on_every_conversion(model, tmp_path):
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    for _ in range(2):  # a cache miss, then a hit: refused both times
        with pytest.raises(ConfigError) as info:
            backend.convert(model, keep_dtype(["shape_of_x"]))
        assert ("keep_dtype entry 'shape_of_x' of model 'folds' names only ops folded at "
                "conversion") in str(info.value)
        assert "remove it" in str(info.value)
    backend.convert(model, keep_dtype(["double"]))  # an op that runs: taken

"""The library's golden API: ``store_golden`` takes a dump's path, and ``golden_dump`` names ops
as the model does, as the plugin and the CLI print them (API review findings 1 and 3; each
failed on the code before the fix)."""
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.dump.loader import load_dump  # noqa: E402
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.golden.stored import read_golden, store_golden  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402


def _spaced_model():
    """Two nodes whose names hold a space: their dump files say ``conv_1``, ``relu_1``."""
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="conv 1"),
             helper.make_node("Neg", ["a"], ["y"], name="relu 1")]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_golden_dump_names_ops_as_the_model_does(tmp_path):
    """It gave ``conv_1``, ``relu_1`` (the file names) where the plugin said ``conv 1``."""
    from pytest_ascend_accuracy.plugin.accuracy_check import real_names

    model = _spaced_model()
    cache = Cache(tmp_path / "cache")
    golden = golden_dump(model, make_inputs(model), cache=cache)
    assert golden.names == ["conv 1", "relu 1"]
    assert golden["relu 1"].output(0).load().shape == (1, 4)
    # the plugin applies the model's names once more: nothing changes
    assert real_names(golden, model).names == golden.names
    again = golden_dump(model, make_inputs(model), cache=cache)  # read from the cache
    assert again.names == ["conv 1", "relu 1"] and again.meta["backend"] == "golden"


@pytest.mark.parametrize("as_path", [str, Path])
def test_store_golden_takes_the_path_of_a_dump(tmp_path, as_path):
    """A path gave ``AttributeError: 'str' object has no attribute 'ops'``."""
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    with NpyDumpWriter(tmp_path / "dump") as writer:
        writer.write_op("relu", [], [values], timestamp_us=1)
    stored = store_golden(tmp_path / "golden", as_path(tmp_path / "dump"))
    assert read_golden(stored).names == load_dump(tmp_path / "dump").names == ["relu"]
    np.testing.assert_array_equal(read_golden(stored)["relu"].output(0).load(), values)


def test_store_golden_refuses_what_is_no_dump(tmp_path):
    with pytest.raises(TypeError, match="expected a DumpSet or a path to a dump, got int"):
        store_golden(tmp_path / "golden", 3)
    assert not (tmp_path / "golden").exists()

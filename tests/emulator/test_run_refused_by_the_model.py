"""An emulated run onnxruntime refuses says whether the float32 model refuses the same arrays
(``graph.model_refusal``): audit 32's silero test ran ``om.run`` before its golden with an LSTM
state of batch 2 beside an input of batch 1 and read "emulator run of 'silero_vad' failed",
which blamed the emulated device for inputs the model itself refuses."""
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from pytest_ascend_accuracy.errors import BackendError
from pytest_ascend_accuracy.graph.model_refusal import model_refusal

pytest.importorskip("onnxruntime")


def _matmul(path: Path) -> Path:
    """x [1, k] @ y [j, 3]: k and j are two names, so a conversion at other sizes is made."""
    import onnx

    nodes = [helper.make_node("MatMul", ["x", "y"], ["z"], name="mm"),
             helper.make_node("Relu", ["z"], ["out"], name="relu")]
    graph = helper.make_graph(nodes, "g", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "k"]),
        helper.make_tensor_value_info("y", TensorProto.FLOAT, ["j", 3])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def _run(tmp_path, x_size: int, y_size: int, monkeypatch):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    monkeypatch.chdir(tmp_path)
    model = _matmul(tmp_path / "mm.onnx")
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    converted = backend.convert(model, None, input_shape=f"x:1,{x_size};y:{y_size},3")
    feeds = {"x": np.ones((1, x_size), np.float32), "y": np.ones((y_size, 3), np.float32)}
    return backend.run(converted, feeds, dump_dir=tmp_path / "dump")


def test_inputs_the_model_refuses_are_said_to_be_the_models_refusal(tmp_path, monkeypatch):
    with pytest.raises(BackendError) as err:
        _run(tmp_path, 4, 5, monkeypatch)
    said = str(err.value)
    assert "emulator run of 'mm' failed: " in said
    assert ("; the ONNX model itself refuses these inputs: onnxruntime's float32 run of mm.onnx "
            "fails too (MatMul 'mm': ") in said
    assert said.endswith(": they do not fit the model, whatever the conversion, and its golden "
                         "refuses them as well")


def test_inputs_the_model_runs_get_no_such_words(tmp_path):
    model = _matmul(tmp_path / "mm.onnx")
    feeds = {"x": np.ones((1, 4), np.float32), "y": np.ones((4, 3), np.float32)}
    assert model_refusal(model, feeds) is None
    assert model_refusal(model, {**feeds, "y": np.ones((5, 3), np.float32)}).startswith(
        "MatMul 'mm': ")


def test_arrays_not_of_the_models_inputs_are_not_asked(tmp_path):
    """An AIPP conversion's run takes raw images (uint8, NHWC): nothing to ask the model."""
    model = _matmul(tmp_path / "mm.onnx")
    y = np.ones((5, 3), np.float32)
    assert model_refusal(model, {"x": np.ones((1, 4), np.uint8), "y": y}) is None
    assert model_refusal(model, {"x": np.ones((1, 1, 4), np.float32), "y": y}) is None
    assert model_refusal(model, {"x": np.ones((1, 4), np.float32)}) is None
    assert model_refusal(tmp_path / "missing.onnx", {"x": y}) is None

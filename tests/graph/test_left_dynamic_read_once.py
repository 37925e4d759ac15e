"""Which inputs a model leaves dynamic is read once per model content: every ``ascend_model``
call asked (``plugin.shape_deferred_model.deferred_model``) and every run of a shape-deferred
model asked again, parsing the ONNX file each time (check_dataset runs it per sample; found
re-reading the change). A model whose content changes is read again."""
import numpy as np
import onnx
from onnx import TensorProto, helper

from pytest_ascend_accuracy.graph import shape_from_inputs


def _model(path, dims):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "m",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_the_open_inputs_are_read_once_per_content(tmp_path, monkeypatch):
    path = tmp_path / "m.onnx"
    _model(path, ["n", 4])
    reads = []
    real = shape_from_inputs.load_model
    monkeypatch.setattr(shape_from_inputs, "load_model",
                        lambda *a, **k: reads.append(1) or real(*a, **k))
    for _ in range(3):
        assert shape_from_inputs.left_dynamic(str(path)) == ["x"]
        assert shape_from_inputs.shape_from_inputs(str(path), None, {"x": np.zeros((2, 4))}) \
            == {"x": (2, 4)}
    assert shape_from_inputs.left_dynamic(str(path), {"x": [1, 4]}) == []
    assert len(reads) == 1
    _model(path, [1, 4])  # another content: read again
    assert shape_from_inputs.left_dynamic(str(path)) == []
    assert len(reads) == 2

"""A model of a few MB of weights, as most CNNs are (a torchvision ResNet-18 is 47 MB): onnx's
shape inference gets a copy without them (``graph/shape_inference_copy.py``).

Until 2026-12-07 only models of over 256 MB of weights got that copy: below, every shape
inference copied each weight four times (a 50 MB MatMul chain's cold check: 2.20 s, 1.16 s
with the copy)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.graph import shape_inference_copy
from pytest_ascend_accuracy.graph.onnx_graph import tensor_info
from pytest_ascend_accuracy.graph.value_kinds import value_kinds


def _chain(n: int, d: int, *, constants: bool = False):
    """``n`` MatMul+Relu of ``d`` x ``d`` float32 weights (initializers, or Constant nodes as
    PaddleOCR's exports hold them), then a Reshape by a shape computed from the data (data
    propagation) and a Resize by float scales (values shape inference reads)."""
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "x"
    for i in range(n):
        w = numpy_helper.from_array(rng.standard_normal((d, d), dtype=np.float32), f"w{i}")
        if constants:
            nodes.append(helper.make_node("Constant", [], [f"w{i}"], name=f"c{i}", value=w))
        else:
            inits.append(w)
        nodes += [helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"], name=f"mm{i}"),
                  helper.make_node("Relu", [f"m{i}"], [f"r{i}"], name=f"relu{i}")]
        prev = f"r{i}"
    inits += [numpy_helper.from_array(np.array([1, 1, 2, -1], np.int64), "shape"),
              numpy_helper.from_array(np.array([1, 1, 2, 0.5], np.float32), "scales")]
    nodes += [helper.make_node("Reshape", [prev, "shape"], ["t"], name="reshape"),
              helper.make_node("Resize", ["t", "", "scales"], ["y"], name="resize")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                         [2, d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_shape_inference_gets_a_copy_without_the_big_weights(monkeypatch):
    for constants in (False, True):
        model = _chain(4, 600, constants=constants)  # 4 x 1.44 MB: above LIGHT_ABOVE
        before = model.SerializeToString()
        light = shape_inference_copy.shape_inference_model(model)
        assert light is not model and model.SerializeToString() == before  # untouched
        declared = {i.name for i in light.graph.input} - {"x"}
        assert declared == {"w0", "w1", "w2", "w3"}
        assert {t.name for t in light.graph.initializer} == {"shape", "scales"}
        assert not [n for n in light.graph.node if n.op_type == "Constant"]
        given = []  # the size of each model onnx's shape inference is given
        infer = onnx.shape_inference.infer_shapes
        monkeypatch.setattr(onnx.shape_inference, "infer_shapes",
                            lambda m, *a, **k: given.append(m.ByteSize()) or infer(m, *a, **k))
        info, kinds = tensor_info(model), value_kinds(model)
        assert len(given) == 2 and max(given) < 64 << 10  # the copy: no weight in it
        assert info["y"] == (TensorProto.FLOAT, (1, 1, 4, 300))  # the shape and scales read
        monkeypatch.setattr(shape_inference_copy, "LIGHT_ABOVE", 1 << 62)  # the whole model
        assert shape_inference_copy.shape_inference_model(model) is model
        assert tensor_info(model) == info and value_kinds(model) == kinds
        monkeypatch.undo()


def test_small_weights_and_big_integer_ones_under_1_mb_are_copied():
    model = _chain(2, 64)  # 16 KB weights: the model itself
    assert shape_inference_copy.shape_inference_model(model) is model
    big_ints = numpy_helper.from_array(np.zeros(100_000, np.int64), "ids")  # 800 KB of int64
    model = _chain(4, 600)
    model.graph.initializer.append(big_ints)
    light = shape_inference_copy.shape_inference_model(model)
    assert "ids" in {t.name for t in light.graph.initializer}

"""A model file of a few MB of weights, as most CNNs are (a torchvision ResNet-18 is 47 MB),
is read without its big weights (``graph/wire.py``, files over ``SCAN_ABOVE``), and onnx's shape
inference gets a copy without them (``graph/shape_inference_copy.py``).

Until 2026-12-07 only files over 64 MB were read so: a ResNet-18 check at 224x224 peaked at
629 MB against a budget of 310 MB (issue 17's, ``benchmarks/bench_check.py --model-file``);
and only models of over 256 MB of weights got that copy: below, every shape inference copied
each weight four times (a 50 MB MatMul chain's cold check: 2.20 s, 1.16 s with the copy)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.graph import external, shape_inference_copy, wire
from pytest_ascend_accuracy.graph.onnx_graph import load_model, tensor_info
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


def test_a_file_of_a_few_mb_of_weights_is_read_without_them(tmp_path):
    assert wire.SCAN_ABOVE <= 4 << 20
    path = tmp_path / "chain.onnx"
    onnx.save_model(_chain(3, 640), str(path))  # 3 x 1.6 MB of weights: a 4.9 MB file
    assert wire.SCAN_ABOVE < path.stat().st_size < 64 << 20
    light = load_model(path, weights=False)
    refs = [t.name for t in light.graph.initializer if external.is_external(t)]
    assert refs == ["w0", "w1", "w2"]  # the 1.6 MB weights, not the shape or the scales
    full = onnx.load(str(path))
    for t, original in zip(light.graph.initializer, full.graph.initializer):
        np.testing.assert_array_equal(external.initializer_array(t, str(tmp_path)),
                                      numpy_helper.to_array(original))


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


def _weight(name: str, d: int = 1100):  # 4.8 MB of float32: above LIGHT_ABOVE alone
    return numpy_helper.from_array(np.ones((d, d), np.float32), name)


def _light_and_whole(model, monkeypatch):
    """``(tensor_info, value_kinds)`` through the light copy, then on the whole model."""
    assert shape_inference_copy.shape_inference_model(model) is not model
    light = tensor_info(model), value_kinds(model)
    monkeypatch.setattr(shape_inference_copy, "LIGHT_ABOVE", 1 << 62)
    whole = tensor_info(model), value_kinds(model)
    monkeypatch.undo()
    return light, whole


def _model(nodes, inputs, outputs, inits=(), ir=8, opset=17, **kw):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits), **kw)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir
    return model


def test_the_copy_infers_what_the_whole_model_does_where_it_differs_in_kind(monkeypatch):
    """Cases reviews found the copy's shapes differed in: a big Constant that is also a graph
    output declared untyped (its users lost their shapes), a sparse initializer (dropped), an
    input that lists a big initializer (its dims lost; untyped: its type too), and an int64
    tensor over 1 MB shapes are computed from (data propagation lost)."""
    vi = helper.make_tensor_value_info
    x = vi("x", TensorProto.FLOAT, [4, 1100])
    mm = helper.make_node("MatMul", ["x", "w"], ["m"], name="mm")
    relu = helper.make_node("Relu", ["m"], ["y"], name="relu")
    weight = helper.make_node("Constant", [], ["w"], name="c", value=_weight("wv"))
    big = helper.make_node("Constant", [], ["b"], name="b", value=_weight("bv"))
    add_b = helper.make_node("MatMul", ["y", "b"], ["z"], name="mb")
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.ones(3, np.float32), "sp"),
        numpy_helper.from_array(np.array([0, 5, 9], np.int64), "sp_idx"), [4, 1100])
    add_sparse = helper.make_node("Add", ["y", "sp"], ["s"], name="add")
    untyped = vi("y", TensorProto.FLOAT, None)
    cases = {
        "a Constant that is a graph output": _model(
            [weight, mm, relu, big, add_b], [x], [untyped, vi("w", TensorProto.FLOAT, None),
                                                  vi("z", TensorProto.FLOAT, None)]),
        "a sparse initializer": _model([mm, relu, add_sparse], [x], [vi("s", TensorProto.FLOAT,
                                                                        None)],
                                       [_weight("w")], sparse_initializer=[sparse]),
        "an IR 3 input listing a big initializer": _model(
            [mm, relu], [x, vi("w", TensorProto.FLOAT, None)], [untyped], [_weight("w")],
            ir=3, opset=8),
        "an input listing a big initializer untyped": _model(
            [mm, relu], [x, onnx.ValueInfoProto(name="w")], [untyped], [_weight("w")]),
        "an int64 table over 1 MB a shape is gathered from": _model(
            [helper.make_node("Gather", ["table", "i"], ["shp"], name="ga"),
             helper.make_node("Reshape", ["x", "shp"], ["r"], name="re"), mm, relu],
            [x], [untyped, vi("r", TensorProto.FLOAT, None)],
            [_weight("w"), numpy_helper.from_array(np.arange(200_000, dtype=np.int64), "table"),
             numpy_helper.from_array(np.array([1100, 4], np.int64), "i")]),
    }
    for case, model in cases.items():
        light, whole = _light_and_whole(model, monkeypatch)
        assert light == whole, case
    assert light[0]["r"] == (TensorProto.FLOAT, (1100, 4))  # the gathered shape
    z = _light_and_whole(cases["a Constant that is a graph output"], monkeypatch)[0][0]["z"]
    assert z == (TensorProto.FLOAT, (4, 1100))

"""``graph.static.constant_values``: a ``Constant`` node's tensor taken as it is, checked
against what onnxruntime returns for the same node (the path it replaces), and the forms it
leaves to onnxruntime."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.graph import static

pytest.importorskip("onnxruntime")

NATIVE = [np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64,
          np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


def _model(nodes, outputs):
    graph = helper.make_graph(nodes, "consts", [],
                              [helper.make_tensor_value_info(o, elem, None) for o, elem in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _by_onnxruntime(model, names):
    from pytest_ascend_accuracy.graph.onnx_graph import ort_session

    return dict(zip(names, ort_session(model.SerializeToString()).run(names, {})))


def _typed_fields(value: np.ndarray, name: str):
    """The tensor in the typed repeated field (int64_data, float_data...), not raw_data."""
    elem = helper.np_dtype_to_tensor_dtype(value.dtype)
    return helper.make_tensor(name, elem, value.shape, value.flatten().tolist(), raw=False)


@pytest.mark.parametrize("dtype", NATIVE, ids=lambda d: np.dtype(d).name)
def test_a_constant_tensor_is_what_onnxruntime_returns_for_it(dtype):
    rng = np.random.default_rng(3)
    shaped = (rng.standard_normal((2, 3, 4)) * 100).astype(dtype)
    cases = {"shaped": numpy_helper.from_array(shaped, "t"),  # raw_data
             "scalar": numpy_helper.from_array(np.array(7, dtype), "t"),
             "empty": numpy_helper.from_array(np.zeros((0, 3), dtype), "t")}
    if dtype not in (np.float16,):  # float16 has no typed field of its own (int32_data bits)
        cases["typed"] = _typed_fields(shaped, "t")
    nodes = [helper.make_node("Constant", [], [name], name=f"c_{name}", value=t)
             for name, t in cases.items()]
    model = _model(nodes, [(n, t.data_type) for n, t in cases.items()])
    ours = static.constant_values(model, list(cases))
    theirs = _by_onnxruntime(model, list(cases))
    assert set(ours) == set(cases)
    for name in cases:
        assert ours[name].dtype == theirs[name].dtype and ours[name].shape == theirs[name].shape
        assert ours[name].tobytes() == theirs[name].tobytes(), name
        assert ours[name].flags.writeable  # the caller's own copy, as onnxruntime's is


def test_other_constant_forms_are_left_to_onnxruntime_and_still_evaluated():
    """value_float / value_ints / strings are computed by onnxruntime as before (``evaluate``);
    bfloat16 and sparse values are not taken either."""
    nodes = [helper.make_node("Constant", [], ["f"], value_float=2.5),
             helper.make_node("Constant", [], ["ints"], value_ints=[1, 2, 3]),
             helper.make_node("Constant", [], ["s"], value=helper.make_tensor(
                 "s", TensorProto.STRING, [2], [b"a", b"bc"])),
             helper.make_node("Constant", [], ["bf"], value=helper.make_tensor(
                 "bf", TensorProto.BFLOAT16, [2], [1.0, 2.0])),
             helper.make_node("Constant", [], ["w"], value=numpy_helper.from_array(
                 np.arange(4, dtype=np.float32), "w"))]
    model = _model(nodes, [("f", TensorProto.FLOAT), ("ints", TensorProto.INT64),
                           ("s", TensorProto.STRING), ("bf", TensorProto.BFLOAT16),
                           ("w", TensorProto.FLOAT)])
    assert set(static.constant_values(model, ["f", "ints", "s", "bf", "w"])) == {"w"}
    values = static.evaluate(model, ["f", "ints", "s", "w"])
    assert values["f"] == np.float32(2.5) and values["ints"].tolist() == [1, 2, 3]
    assert values["s"].tolist() == ["a", "bc"] and values["w"].tolist() == [0, 1, 2, 3]


def test_a_name_that_no_constant_produces_is_not_taken():
    nodes = [helper.make_node("Constant", [], ["w"], value=numpy_helper.from_array(
                 np.ones(2, np.float32), "w")),
             helper.make_node("Neg", ["w"], ["n"])]
    model = _model(nodes, [("n", TensorProto.FLOAT)])
    assert set(static.constant_values(model, ["w", "n", "missing"])) == {"w"}
    assert static.evaluate(model, ["n"])["n"].tolist() == [-1, -1]


@pytest.mark.parametrize("bias_first", [False, True], ids=["weight-first", "bias-first"])
@pytest.mark.parametrize("with_cast", [False, True], ids=["constants-read-directly", "a-cast-of-one"])
def test_folding_constant_weights_builds_no_session_and_folds_the_same(monkeypatch, with_cast,
                                                                       bias_first):
    """PP-OCR keeps its weights in Constant nodes read by the ops: folding them builds no
    onnxruntime session now (a Cast of a constant is still computed by one), and the folded
    model is byte-identical to the one onnxruntime's values gave."""
    from pytest_ascend_accuracy.backends.emulator import rewrite
    from pytest_ascend_accuracy.graph import onnx_graph
    from pytest_ascend_accuracy.graph.prepare import prepare_model

    def model():
        w = np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32)
        b = np.arange(4, dtype=np.float16 if with_cast else np.float32)
        nodes = [helper.make_node("Constant", [], ["w"], name="w_const",
                                  value=numpy_helper.from_array(w, "w")),
                 helper.make_node("Constant", [], ["b"], name="b_const",
                                  value=numpy_helper.from_array(b, "b"))]
        if bias_first:  # the graph's order differs from the order the values are asked in
            nodes.reverse()
        if with_cast:
            nodes.append(helper.make_node("Cast", ["b"], ["b32"], name="b_cast", to=TensorProto.FLOAT))
        nodes.append(helper.make_node("Conv", ["x", "w", "b32" if with_cast else "b"], ["y"],
                                      name="conv", pads=[1, 1, 1, 1]))
        g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                         [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

    folded = (["b_const", "w_const"] if bias_first else ["w_const", "b_const"]) + (
        ["b_cast"] if with_cast else [])
    sessions = []
    real_session = onnx_graph.ort_session
    monkeypatch.setattr(onnx_graph, "ort_session",
                        lambda *a, **k: sessions.append(1) or real_session(*a, **k))
    fast = prepare_model(model()).model
    assert rewrite.fold_constants(fast) == folded
    assert len(sessions) == (1 if with_cast else 0)
    sessions.clear()
    monkeypatch.setattr(static, "constant_values", lambda model, names: {})
    slow = prepare_model(model()).model
    assert rewrite.fold_constants(slow) == folded
    assert sessions == [1]
    assert fast.SerializeToString() == slow.SerializeToString()


def test_the_real_pp_ocr_cls_model_converts_to_the_same_files(tmp_path, monkeypatch):
    """PP-OCR cls (test extra ``ocr``: its model file only), 286 Constant weights: the emulator's
    conversion writes the same files with the Constant values taken as they are as with
    onnxruntime computing them."""
    import hashlib

    from pytest_ascend_accuracy.testing.ocr_models import MISSING, ocr_model_path

    cls = ocr_model_path("cls")
    if cls is None:
        pytest.skip(MISSING)
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.core.modes import resolve_mode

    def files(cache_dir):
        backend = EmulatorBackend(Cache(cache_dir), dump_mode="output")
        converted = backend.convert(cls, resolve_mode("default"), input_shape="x:1,3,48,192")
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(Path(converted.path).parent.iterdir())
                if p.name != ".manifest.json"}

    taken = []
    real = static.constant_values
    monkeypatch.setattr(static, "constant_values",
                        lambda model, names: taken.append(1) or real(model, names))
    fast = files(tmp_path / "fast")
    assert taken and "model.onnx" in fast
    monkeypatch.setattr(static, "constant_values", lambda model, names: {})
    assert files(tmp_path / "slow") == fast


def test_a_constant_whose_data_does_not_fill_its_dims_is_named_by_onnxruntime_as_before():
    """Not taken as it is: onnxruntime refuses it, and the error names the tensor."""
    from pytest_ascend_accuracy.errors import ConversionError

    bad = numpy_helper.from_array(np.zeros(3, np.float32), "w")
    bad.dims[:] = [4]  # 12 bytes of data for 4 floats
    model = _model([helper.make_node("Constant", [], ["w"], value=bad)], [("w", TensorProto.FLOAT)])
    assert static.constant_values(model, ["w"]) == {}
    with pytest.raises(ConversionError, match="'w'"):
        static.evaluate(model, ["w"])

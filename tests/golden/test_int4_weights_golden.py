"""A weight-only int4 model (DequantizeLinear of an INT4 initializer feeding a MatMul, opset 21):
``numpy_helper.to_array`` gives the weight as an ml_dtypes int4 array, which numpy saves as raw
bytes (``<V1``); the golden wrote it so, and reading the golden back refused the whole check
("dtype |V1 is not numeric or bool; it looks like an ml_dtypes float8 array", a user trial of
quantised models). The golden's ``.npy`` holds such a tensor as int8 (uint4 as uint8), the
values it holds, exactly."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
ml_dtypes = pytest.importorskip("ml_dtypes")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.dump.dtypes import npy_values  # noqa: E402
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402

CODES = np.array([[-8, -1, 0, 7], [3, -5, 6, 1], [2, 2, -3, -7]], np.int8)
X = np.array([[0.5, -1.0, 2.0]], np.float32)


def int4_weight_model():
    weight = helper.make_tensor("wq", TensorProto.INT4, list(CODES.shape), CODES.ravel().tolist())
    nodes = [helper.make_node("DequantizeLinear", ["wq", "ws"], ["w"], name="w/DQ"),
             helper.make_node("MatMul", ["x", "w"], ["y"], name="fc/MatMul")]
    graph = helper.make_graph(
        nodes, "int4_weights", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [weight, numpy_helper.from_array(np.float32(0.25), "ws")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model


@pytest.mark.parametrize("name,stored", [("int4", np.int8), ("uint4", np.uint8),
                                         ("int2", np.int8), ("uint2", np.uint8)])
def test_npy_files_hold_narrow_integers_as_8_bit(tmp_path, name, stored):
    low_type = getattr(ml_dtypes, name, None)
    if low_type is None:
        pytest.skip(f"ml_dtypes {ml_dtypes.__version__} has no {name}")
    values = np.array([0, 1, -1, -2] if stored is np.int8 else [0, 1, 3, 2])  # int2: -2..1
    low = values.astype(low_type)
    assert npy_values(low).dtype == stored
    np.testing.assert_array_equal(npy_values(low), values.astype(stored))
    with NpyDumpWriter(tmp_path / "npy") as writer:
        (path,) = writer.write_op("op", [], [low])
    loaded = np.load(path)
    assert loaded.dtype == stored
    np.testing.assert_array_equal(loaded, values.astype(stored))


def test_the_golden_holds_an_int4_weight_as_its_int8_values(tmp_path):
    dump = golden_dump(int4_weight_model(), {"x": X}, cache=Cache(tmp_path / "cache"))
    weight = dump["w/DQ"].inputs[0]
    assert weight.dtype == "int8"
    np.testing.assert_array_equal(weight.load(), CODES)
    np.testing.assert_allclose(dump["fc/MatMul"].output(0).load(), X @ (CODES * 0.25))


def test_check_accuracy_passes_on_an_int4_weight_model(pytester):
    onnx.save(int4_weight_model(), str(pytester.path / "int4w.onnx"))
    pytester.makepyfile(test_int4w="""
from pytest_ascend_accuracy import accuracy

@accuracy(threshold=0.99)
def test_int4w(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("int4w.onnx", seed=0)
    check_accuracy(ascend_model("int4w.onnx").run(inputs), golden_dump("int4w.onnx", inputs))
""")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["1 accuracy check: 1 passed, 0 failed (1 model x 1 mode)"])


@pytest.mark.parametrize("name", ["float8_e4m3fnuz", "float8_e5m2fnuz", "float4_e2m1fn",
                                  "float8_e8m0fnu"])
def test_npy_files_hold_other_ml_dtypes_floats_as_float32(tmp_path, name):
    """The int4 fix widened sub-byte integers only: a float8_e4m3fnuz weight (ONNX
    FLOAT8E4M3FNUZ, DequantizeLinear opset 21) was still written as ``<V1`` and refused the
    same way (review); every ml_dtypes float is float32 on disk, value for value."""
    low_type = getattr(ml_dtypes, name, None)
    if low_type is None:
        pytest.skip(f"ml_dtypes {ml_dtypes.__version__} has no {name}")
    values = np.array([0.5, 1.0, 2.0, 4.0], np.float32).astype(low_type)
    np.save(tmp_path / "w.npy", npy_values(values))
    loaded = np.load(tmp_path / "w.npy")
    assert loaded.dtype == np.float32
    assert np.array_equal(loaded, values.astype(np.float32))


def test_a_float8_fnuz_weight_model_gets_a_golden(tmp_path):
    codes = np.array([[1, -1, 0.5, 2], [3, -0.5, 1, 1], [2, 2, -3, -1]], np.float32)
    weight = helper.make_tensor("wq", TensorProto.FLOAT8E4M3FNUZ, list(codes.shape),
                                codes.ravel().tolist())
    model = int4_weight_model()
    model.graph.initializer[0].CopyFrom(weight)
    golden = golden_dump(model, {"x": X}, cache=Cache(tmp_path / "cache"))
    w = golden["w/DQ"].inputs[0].load()
    assert w.dtype == np.float32 and np.array_equal(w, codes)

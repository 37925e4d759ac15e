"""Tensors onnxruntime's Python API cannot return as numpy (bfloat16, float8): a segmented run
fetches them through an exact Cast to float32 and hands them over in their own type."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
ml_dtypes = pytest.importorskip("ml_dtypes")

from onnx import TensorProto, helper  # noqa: E402

from pytest_ascend_accuracy.graph.stream import SegmentedModel  # noqa: E402

X = np.array([1.3, -2.7, 3.1, 1e-3], np.float32)


def cast_chain(low=TensorProto.BFLOAT16, *, low_output=False, low_name="b"):
    """x float32 -> Cast(low) ``to_low`` -> Cast(FLOAT) ``to_f32`` -> Relu; with ``low_output``
    the low-precision tensor is a model output as well."""
    nodes = [helper.make_node("Cast", ["x"], [low_name], name="to_low", to=low),
             helper.make_node("Cast", [low_name], ["f"], name="to_f32", to=TensorProto.FLOAT),
             helper.make_node("Relu", ["f"], ["y"], name="relu")]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])]
    if low_output:
        outputs.append(helper.make_tensor_value_info(low_name, low, [4]))
    graph = helper.make_graph(nodes, "low",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


def run_all(model, **options):
    names = [o for n in model.graph.node for o in n.output if o]
    run = SegmentedModel(model, names, **options).run({"x": X})
    try:
        run.run_all()
        return dict(run.values)
    finally:
        run.close()


@pytest.mark.parametrize("low, name", [(TensorProto.BFLOAT16, "bfloat16"),
                                       (TensorProto.FLOAT8E4M3FN, "float8_e4m3fn"),
                                       (TensorProto.FLOAT8E5M2, "float8_e5m2")])
@pytest.mark.parametrize("segment_bytes", [None, 1])  # one segment; cut wherever it may be
def test_a_low_float_intermediate_comes_back_in_its_own_type(low, name, segment_bytes):
    values = run_all(cast_chain(low), segment_bytes=segment_bytes)
    expected = X.astype(getattr(ml_dtypes, name))
    assert values["b"].dtype == expected.dtype
    np.testing.assert_array_equal(values["b"].view(np.uint8), expected.view(np.uint8))
    np.testing.assert_array_equal(values["f"], expected.astype(np.float32))
    assert sorted(values) == ["b", "f", "y"]  # the Cast added to fetch it is not handed over


def test_a_bfloat16_model_output_is_fetched_too():
    values = run_all(cast_chain(low_output=True), segment_bytes=1)
    np.testing.assert_array_equal(values["b"].astype(np.float32),
                                  X.astype(ml_dtypes.bfloat16).astype(np.float32))


def test_the_added_fetch_never_takes_a_name_the_model_uses():
    # the model already has a tensor with the fetch's name: the fetch takes another
    model = cast_chain()
    model.graph.node.append(helper.make_node("Relu", ["y"], ["b::as_float32"],
                                             name="b::as_float32"))
    values = run_all(model)
    assert values["b"].dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(values["b::as_float32"], np.maximum(X.astype(ml_dtypes.bfloat16)
                                                                      .astype(np.float32), 0))

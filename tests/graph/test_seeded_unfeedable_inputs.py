"""Seeded inputs (``make_inputs``: ``accuracy_inputs(m, seed=0)``, YAML ``inputs: {seed: 0}``,
``diagnose``) of a bfloat16, float8 or int4 model input are refused with the reason no array can
feed it and what to do (``graph.feedable``), as a file of one is: they said only "cannot make
random inputs of dtype bfloat16"."""
import pytest
from onnx import TensorProto, helper

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


def _model(elem):
    x = helper.make_tensor_value_info("x", elem, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    node = helper.make_node("Cast", ["x"], ["y"], name="up", to=TensorProto.FLOAT)
    graph = helper.make_graph([node], "lowfloat", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.mark.parametrize("elem, kind, instead", [
    (TensorProto.BFLOAT16, "bfloat16", "in float32"),
    (TensorProto.FLOAT8E4M3FN, "float8e4m3fn", "in float32"),
    (TensorProto.INT4, "int4", "with int8 inputs"),
])
def test_seeded_inputs_of_an_unfeedable_type_say_why_and_what_to_do(elem, kind, instead):
    with pytest.raises(ConfigError) as info:
        make_inputs(_model(elem), seed=0)
    text = str(info.value)
    assert f"model input 'x' is {kind}: onnxruntime, which runs the golden model" in text
    assert f"export the model {instead}" in text
    if kind == "bfloat16":
        assert "YAML: modes: [{precision_mode: allow_fp32_to_bf16}]" in text


def test_seeded_inputs_of_a_string_input_say_why_and_what_to_export():
    # they said "cannot make random inputs of dtype object"
    x = helper.make_tensor_value_info("t", TensorProto.STRING, [1])
    y = helper.make_tensor_value_info("y", TensorProto.STRING, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["t"], ["y"], name="id")], "strin",
                              [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(ConfigError) as info:
        make_inputs(model, seed=0)
    text = str(info.value)
    assert ("model input 't' is string: a seed draws random numbers, no strings" in text
            and "export it with an int64 input in their place" in text), text
    assert "dtype object" not in text

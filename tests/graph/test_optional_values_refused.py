"""Optional operators are refused as what they are: the onnx 1.17 node-test sweep saw
``OptionalGetElement`` of a plain tensor refused as "sequence values", advising to export
tensors in place of sequences, in a model that had no sequence at all."""
import onnx
import pytest
from onnx import TensorProto, helper

from pytest_ascend_accuracy.errors import ConversionError
from pytest_ascend_accuracy.graph.value_kinds import refusal_text


def _model(nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def test_optional_get_element_of_a_tensor_is_refused_as_an_optional(tmp_path):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    model = _model([helper.make_node("OptionalGetElement", ["x"], ["y"], name="oge")],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    onnx.save(model, str(tmp_path / "opt.onnx"))
    with pytest.raises(ConversionError) as err:
        EmulatorBackend(Cache(tmp_path / "c")).convert(tmp_path / "opt.onnx", None)
    said = str(err.value)
    assert "model 'opt' has optional values: 1 operator reads or writes them: 'oge' " \
           "(OptionalGetElement). ATC has no optional values" in said
    assert "OptionalGetElement of a tensor is that tensor" in said
    assert "sequence" not in said


def test_an_optional_value_and_a_sequence_are_each_said_once():
    opt = onnx.helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [4]))
    model = _model([helper.make_node("Optional", ["x"], ["o"], name="wrap"),
                    helper.make_node("OptionalHasElement", ["o"], ["has"], name="has"),
                    helper.make_node("SequenceConstruct", ["x", "x"], ["s"], name="seq"),
                    helper.make_node("SequenceLength", ["s"], ["n"], name="len")],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                   [helper.make_tensor_value_info("has", TensorProto.BOOL, []),
                    helper.make_tensor_value_info("n", TensorProto.INT64, [])])
    model.graph.value_info.append(helper.make_value_info("o", opt))
    text = refusal_text("m", model).splitlines()
    assert text[0].startswith("model 'm' has sequence values: 2 operators read or write them: "
                              "'seq' (SequenceConstruct: s); 'len' (SequenceLength: s). ")
    assert text[1].startswith("model 'm' has optional values: 2 operators read or write them: "
                              "'wrap' (Optional: o); 'has' (OptionalHasElement: o). ")

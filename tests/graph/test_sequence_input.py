"""A model whose graph input is a sequence: the first message is the sequence refusal naming
it, not advice to give the sequence a tensor shape (pasting that advice turned the input's
type into a tensor's, and the refusal that followed no longer named it)."""
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper as h, numpy_helper as nh  # noqa: E402

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.errors import ConfigError, ConversionError  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs, resolve_input_shapes  # noqa: E402

REFUSAL = ("model 'seq_input' has sequence values: 1 operator reads or writes them: "
           "'at' (SequenceAt: s). ATC has no sequence tensors")


def sequence_input_model():
    seq = h.make_value_info("s", h.make_sequence_type_proto(
        h.make_tensor_type_proto(TensorProto.FLOAT, [3])))
    g = h.make_graph([h.make_node("SequenceAt", ["s", "zero"], ["y"], name="at")], "seq_input",
                     [seq], [h.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
                     initializer=[nh.from_array(np.array(0, np.int64), "zero")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_conversion_refuses_the_sequence_input_first(cache_dir):
    from pytest_ascend_accuracy.core.cache import Cache

    with pytest.raises(ConversionError) as err:
        EmulatorBackend(Cache(cache_dir)).convert(sequence_input_model())
    assert str(err.value).startswith(REFUSAL)


def test_shapes_leave_the_sequence_input_alone():
    model = sequence_input_model()
    assert resolve_input_shapes(model) == {}
    assert model.graph.input[0].type.WhichOneof("value") == "sequence_type"


def test_a_shape_given_to_a_sequence_input_is_refused_naming_it():
    model = sequence_input_model()
    with pytest.raises(ConfigError, match="input 's' is a sequence, not a tensor"):
        resolve_input_shapes(model, {"s": (3,)})
    assert model.graph.input[0].type.WhichOneof("value") == "sequence_type"


def test_made_inputs_refuse_the_sequence_input():
    with pytest.raises(ConversionError, match="model 'seq_input' has a sequence input 's': "
                                              "ATC has no sequence tensors"):
        make_inputs(sequence_input_model())


@pytest.fixture
def cache_dir(tmp_path):
    return tmp_path / "cache"

"""The dynamic-shape advice tries one input's dimensions at a time (``shape_trial.Trial.lone``).

silero-vad's 16 kHz path (the one its seeded ``sr`` now takes) needs 256 samples or more past
its padding, and its ``state`` [2, batch, 128] holds the batch of ``input`` [batch, N] in
dimension 1, which the batch-1 tries gave the size too (state [2, 224, 128] against input
[1, 224]: the LSTM refuses), while the tries giving every dimension the size stop at 128 x 128
(``ALL_ELEMENTS``): no example was offered for the real model. The model here is built like it:
a Conv of kernel 256 over the samples, and an LSTM whose initial state must have the samples'
batch."""
import numpy as np
import pytest
from onnx import TensorProto, helper as h, numpy_helper

from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
from pytest_ascend_accuracy.graph.shape_advice import DynamicShapeError

ort = pytest.importorskip("onnxruntime")


def signal_and_state():
    """``input`` [batch, N] (N >= 256: a Conv of kernel 256) and ``state`` [1, batch, 4] (an
    LSTM's initial_h: its batch must be ``input``'s)."""
    inits = [numpy_helper.from_array(np.full((1, 1, 256), 1 / 256, np.float32), "w"),
             numpy_helper.from_array(np.array([1], np.int64), "axis1"),
             numpy_helper.from_array(np.array([0], np.int64), "axis0"),
             numpy_helper.from_array(np.full((1, 16, 1), 0.1, np.float32), "W"),
             numpy_helper.from_array(np.full((1, 16, 4), 0.1, np.float32), "R")]
    nodes = [h.make_node("Unsqueeze", ["input", "axis1"], ["x3"], name="to3d"),
             h.make_node("Conv", ["x3", "w"], ["c"], name="conv", strides=[64]),
             h.make_node("ReduceMean", ["c"], ["m"], name="mean", axes=[2], keepdims=0),
             h.make_node("Unsqueeze", ["m", "axis0"], ["seq"], name="seq"),  # [1, batch, 1]
             h.make_node("LSTM", ["seq", "W", "R", "", "", "state"], ["y", "hn"], name="lstm",
                         hidden_size=4)]
    graph = h.make_graph(
        nodes, "signal_and_state",
        [h.make_tensor_value_info("input", TensorProto.FLOAT, ["", ""]),
         h.make_tensor_value_info("state", TensorProto.FLOAT, [1, "", 4])],
        [h.make_tensor_value_info("hn", TensorProto.FLOAT, None)], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])


def test_one_input_at_a_time_is_offered_and_runs():
    model = signal_and_state()
    with pytest.raises(DynamicShapeError) as info:
        make_inputs(model)
    text = str(info.value)
    assert ("e.g. with 256 for each dynamic dimension of 'input' but its batch, 1 for each "
            "other one, sizes that ran in onnxruntime on seeded inputs where 1 failed") in text
    assert text.endswith("input_shape={'input': (1, 256), 'state': (1, 1, 4)}")
    shape = {"input": (1, 256), "state": (1, 1, 4)}  # pasted: it runs
    feeds = make_inputs(model, input_shape=shape)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert session.run(None, feeds)[0].shape == (1, 1, 4)

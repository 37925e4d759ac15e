"""Seeded inputs an LSTM, GRU or RNN can take. A trial (a bidirectional LSTM of 6 steps, its
``sequence_lens`` a graph input): ``accuracy_inputs(model, seed=0)`` (and YAML ``{seed: 0}``,
``ascend-accuracy diagnose``) drew sequence_lens from [0, 10) like any integer input, [5, 8],
and onnxruntime refused the golden ("Invalid value/s in sequence_lens. All values must be >= 0
and <= seq_length. seq_length=6"), naming neither the input nor a fix. Now it takes values in
[1, seq_length]: ``X``'s axis 0, or 1 under ``layout=1`` (the ONNX spec's batch-first layout)."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from pytest_ascend_accuracy.baseline.check import REBASELINE, check_baseline
from pytest_ascend_accuracy.baseline.inputs import input_spec, inputs_for_baseline
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
from test_baseline_helpers import HEADER, make_result
from test_rnn_optypes import rnn_model

ort = pytest.importorskip("onnxruntime")


def _runs(model, inputs):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, inputs)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_sequence_lens_lie_in_one_to_seq_length_and_the_golden_runs(kind, direction):
    model = rnn_model(kind, steps=6, batch=64, direction=direction)
    inputs = make_inputs(model, seed=0)
    lens = inputs["seq_lens"]
    assert lens.min() >= 1 and lens.max() <= 6, lens  # before: up to 9
    assert set(np.unique(lens)) == set(range(1, 7))  # the whole range, 6 included
    _runs(model, inputs)  # before: Invalid value/s in sequence_lens


def test_the_trials_seed_and_shape_run():
    """The trial's own case: 2 sequences of 6 steps, seed 0 (drew [5, 8] before)."""
    model = rnn_model("LSTM", steps=6, batch=2, direction="bidirectional")
    inputs = make_inputs(model, seed=0)
    assert inputs["seq_lens"].max() <= 6
    _runs(model, inputs)


def test_layout_1_takes_the_length_from_axis_1():
    from pytest_ascend_accuracy.graph.integer_ranges import integer_ranges

    model = rnn_model("LSTM", steps=3, batch=40, layout=1)
    lens = make_inputs(model, seed=0)["seq_lens"]
    assert set(np.unique(lens)) == {1, 2, 3}  # not up to the batch size, 40
    ranges = integer_ranges(model, ["seq_lens"], {"x": (40, 3, 8), "seq_lens": (40,)})
    assert ranges == {"seq_lens": (1, 4)}


def test_a_dynamic_length_takes_the_one_input_shape_gives():
    model = rnn_model("GRU", batch=16, declared_steps="T")
    lens = make_inputs(model, seed=0, input_shape={"x": [4, 16, 8]})["seq_lens"]
    assert lens.min() >= 1 and lens.max() <= 4


def test_an_x_computed_in_the_graph_and_a_cast_length_are_followed():
    """A CRNN-like graph: X is a Transpose of the features (shape inference sizes it), and the
    int64 lengths reach the LSTM through a Cast."""
    model = rnn_model("LSTM", steps=5, batch=32, lens_dtype=TensorProto.INT64)
    graph = model.graph
    graph.node[0].input[0] = "x_t"
    graph.node[0].input[4] = "lens32"
    graph.node.insert(0, helper.make_node("Cast", ["seq_lens"], ["lens32"], name="cast",
                                          to=TensorProto.INT32))
    graph.node.insert(0, helper.make_node("Transpose", ["x"], ["x_t"], name="tr", perm=[1, 0, 2]))
    graph.input[0].CopyFrom(helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 5, 8]))
    inputs = make_inputs(model, seed=0)
    assert inputs["seq_lens"].dtype == np.int64
    assert set(np.unique(inputs["seq_lens"])) == set(range(1, 6))
    _runs(model, inputs)


def test_other_integer_inputs_draw_as_before():
    """Only sequence_lens changed: another integer input of the same model draws [0, 10) from
    the same generator as before (a baseline's inputs stay the same)."""
    model = rnn_model("LSTM")
    model.graph.input.append(helper.make_tensor_value_info("ids", TensorProto.INT64, [3, 4]))
    model.graph.output.append(helper.make_tensor_value_info("ids_out", TensorProto.INT64, None))
    model.graph.node.append(helper.make_node("Identity", ["ids"], ["ids_out"], name="idn"))
    ids = make_inputs(model, seed=5)["ids"]
    assert np.array_equal(ids, np.random.default_rng([5, 2]).integers(0, 10, (3, 4)))


def test_a_baseline_holding_the_former_draw_says_why(tmp_path):
    """A baseline a former version recorded (sequence_lens drawn from [0, 10), which a model
    of 9 steps or more runs) reads "rebaseline required" now and names the cause: the former
    draw is recognised as for any integer input, no record of the version is needed."""
    model = rnn_model("LSTM", steps=12, batch=4)
    path = tmp_path / "baselines" / "lstm" / "default.yaml"
    old = make_inputs(model, seed=0)
    old["seq_lens"] = np.random.default_rng([0, 1]).integers(0, 10, (4,)).astype(np.int32)
    _runs(model, old)  # it ran, so such a baseline exists
    info = {"model_sha256": "ab" * 32}
    check_baseline(make_result(), path, header=HEADER, inputs=input_spec(old, seed=0),
                   info=info)
    now = inputs_for_baseline(model, path, seed=0)
    out = check_baseline(make_result(), path, header=HEADER, inputs=now, info=info)
    assert out.status == REBASELINE
    assert [c[0] for c in out.changes] == ["inputs.seq_lens.sha256"]
    assert "  why: the recorded 'seq_lens' is what an earlier version" in out.message
    assert "an LSTM/GRU/RNN's sequence_lens from [1, seq_length]" in out.message

"""Seeded length inputs are the full length of the input they measure (audit 33, onnx_asr's
pre-processors: ``waveforms_lens`` drawn 5 of 16000 samples masked every frame, the output was
all zeros on both sides and the check passed on nothing)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.graph.length_inputs import length_inputs
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


def masked(lens_name="waveforms_lens", wave=("batch_size", "N"), lens=("batch_size",),
           gather=False):
    """y = where(arange(N) < lens, x * 2, 0): every sample past the length masked."""
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.array([1], np.int64), "axis1"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(0.0, np.float32), "fzero")]
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Gather", ["shape", "one"], ["n"], name="n", axis=0),
             helper.make_node("Range", ["zero", "n", "one"], ["steps"], name="steps"),
             helper.make_node("Unsqueeze", [lens_name, "axis1"], ["lens2"], name="lens2"),
             helper.make_node("Less", ["steps", "lens2"], ["valid"], name="valid"),
             helper.make_node("Mul", ["x", "two"], ["scaled"], name="scale"),
             helper.make_node("Where", ["valid", "scaled", "fzero"], ["y"], name="mask")]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if gather:  # the length also indexes a 4-row table: that bound comes first
        inits.append(numpy_helper.from_array(np.ones((4, 2), np.float32), "table"))
        nodes.append(helper.make_node("Gather", ["table", lens_name], ["g"], name="g"))
        outputs.append(helper.make_tensor_value_info("g", TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "masked", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, list(wave)),
        helper.make_tensor_value_info(lens_name, TensorProto.INT64, list(lens))], outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_length_is_drawn_as_the_whole_of_the_waveform(tmp_path):
    onnx.save(masked(), str(tmp_path / "m.onnx"))
    shape = {"x": (2, 16000), "waveforms_lens": (2,)}
    drawn = make_inputs(str(tmp_path / "m.onnx"), seed=0, input_shape=shape)
    assert drawn["waveforms_lens"].tolist() == [16000, 16000]
    import onnxruntime

    y, = onnxruntime.InferenceSession(str(tmp_path / "m.onnx")).run(["y"], drawn)
    assert np.count_nonzero(y) == y.size  # nothing masked: the check compares every sample


@pytest.mark.parametrize("wave, lens, shape, expected", [
    (("B", 80, "T"), ("B",), (1, 80, 120), 120),  # an encoder's [batch, features, time]
    ((1, 50), (), (1, 50), 50),  # a scalar length of a static waveform
    (("B", "T", "F"), ("B",), (1, 120, 7), None),  # two open: no axis is sure, no rule
    ((1, 50, 80), (1,), (1, 50, 80), None),  # static features: no axis is sure either
])
def test_the_measured_dimension(wave, lens, shape, expected):
    shapes = {"x": shape, "waveforms_lens": (1,) if lens else ()}
    assert length_inputs(masked(wave=wave, lens=lens), ["waveforms_lens"], shapes) == (
        {"waveforms_lens": expected} if expected else {})


def test_other_names_and_a_table_index_keep_their_draws(tmp_path):
    shapes = {"x": (1, 100), "k": (1,)}
    assert length_inputs(masked(lens_name="k"), ["k"], shapes) == {}
    onnx.save(masked(gather=True), str(tmp_path / "g.onnx"))
    drawn = make_inputs(str(tmp_path / "g.onnx"), seed=0,
                        input_shape={"x": (1, 100), "waveforms_lens": (1,)})
    assert drawn["waveforms_lens"].max() < 4  # below the table it indexes, as before


def test_a_seeded_check_compares_the_samples_it_masked_before(pytester):
    onnx.save(masked(wave=(1, 64), lens=(1,)), str(pytester.path / "m.onnx"))
    pytester.makepyfile("""
        def test_m(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("m.onnx", seed=0)
            assert inputs["waveforms_lens"].tolist() == [64]
            check_accuracy(ascend_model("m.onnx").run(inputs), golden_dump("m.onnx", inputs))
    """)
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=1)


def _inputs(**declared):
    """A model of these inputs ({name: (elem type, dims)}), each passed to an output."""
    vis = [helper.make_tensor_value_info(n, t, list(d)) for n, (t, d) in declared.items()]
    nodes = [helper.make_node("Identity", [n], [f"{n}_out"], name=f"id_{n}") for n in declared]
    outs = [helper.make_tensor_value_info(f"{n}_out", t, None) for n, (t, _) in declared.items()]
    return helper.make_model(helper.make_graph(nodes, "m", vis, outs),
                             opset_imports=[helper.make_opsetid("", 17)])


F, I64, I16 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT16


@pytest.mark.parametrize("name", ["blend_mode", "max_len", "cache_len", "past_sequence_length",
                                  "min_length", "lenient"])
def test_names_that_are_no_lengths_keep_their_draw(name):
    """A review: blend_mode (an If's decider) was drawn 224; a max_len bound 16000."""
    model = _inputs(x=(F, ("B", "T")), **{name: (I64, ("B",))})
    assert length_inputs(model, [name], {"x": (1, 300), name: (1,)}) == {}


def test_the_input_a_length_names_is_the_one_it_measures():
    """A review: a Paraformer-style decoder's acoustic_embeds_len took enc's T (50), not U."""
    model = _inputs(enc=(F, ("B", "T", 16)), enc_len=(I64, ("B",)),
                    acoustic_embeds=(F, ("B", "U", 16)), acoustic_embeds_len=(I64, ("B",)))
    shapes = {"enc": (1, 50, 16), "enc_len": (1,), "acoustic_embeds": (1, 7, 16),
              "acoustic_embeds_len": (1,)}
    assert length_inputs(model, ["enc_len", "acoustic_embeds_len"], shapes) == {
        "enc_len": 50, "acoustic_embeds_len": 7}


def test_two_candidates_or_a_type_too_small_keep_the_draw():
    """A review: a speaker embedding [B, 192] declared before the audio [B, T] gave 192."""
    model = _inputs(spk=(F, ("B", 192)), audio=(F, ("B", "T")), feats_len=(I64, ("B",)),
                    audio_len=(I16, ("B",)))
    shapes = {"spk": (1, 192), "audio": (1, 40000), "feats_len": (1,), "audio_len": (1,)}
    assert length_inputs(model, ["feats_len", "audio_len"], shapes) == {}  # 40000 > int16


def test_make_inputs_draws_a_rank_3_inputs_length(tmp_path):
    """A re-review: make_inputs set the shapes on the model before the rule read it, so no
    axis of a [B, 80, T] input looked open and NeMo's length was drawn 5 of 120 frames."""
    model = _inputs(processed_signal=(F, ("B", 80, "T")), processed_signal_length=(I64, ("B",)))
    onnx.save(model, str(tmp_path / "nemo.onnx"))
    drawn = make_inputs(str(tmp_path / "nemo.onnx"), seed=0, input_shape={
        "processed_signal": (1, 80, 120), "processed_signal_length": (1,)})
    assert drawn["processed_signal_length"].tolist() == [120]


def test_inputs_of_one_length_and_camel_case_names():
    """A re-review: HF input_lengths beside input_ids and attention_mask (one length) was
    refused as two candidates; speechLengths was not split into words."""
    model = _inputs(input_ids=(I64, ("B", "S")), attention_mask=(I64, ("B", "S")),
                    input_lengths=(I64, ("B",)), speech=(F, ("B", "T", 560)),
                    speechLengths=(I64, ("B",)))
    shapes = {"input_ids": (1, 12), "attention_mask": (1, 12), "input_lengths": (1,),
              "speech": (1, 30, 560), "speechLengths": (1,)}
    assert length_inputs(model, ["input_lengths", "speechLengths"], shapes) == {
        "input_lengths": 12, "speechLengths": 30}


def test_a_length_an_empty_guard_compares_with_0_is_still_its_length(tmp_path):
    """A re-review: If(Equal(x_len, 0)) drew x_len 0 once the If rule came first: the check
    then passed on the empty branch's zeros."""
    zero = numpy_helper.from_array(np.array(0, np.int64), "zero")
    empty = helper.make_graph([helper.make_node("Constant", [], ["e"], name="ce",
                                                value=numpy_helper.from_array(
                                                    np.zeros((1, 64), np.float32)))],
                              "empty", [], [helper.make_tensor_value_info("e", F, [1, 64])])
    full = helper.make_graph([helper.make_node("Identity", ["x"], ["f"], name="idf")], "full",
                             [], [helper.make_tensor_value_info("f", F, [1, 64])])
    nodes = [helper.make_node("Squeeze", ["x_len"], ["n"], name="sq"),
             helper.make_node("Equal", ["n", "zero"], ["is_empty"], name="eq"),
             helper.make_node("If", ["is_empty"], ["y"], name="guard", then_branch=empty,
                              else_branch=full)]
    graph = helper.make_graph(nodes, "guarded", [
        helper.make_tensor_value_info("x", F, [1, 64]),
        helper.make_tensor_value_info("x_len", I64, [1])],
        [helper.make_tensor_value_info("y", F, [1, 64])], [zero])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              str(tmp_path / "g.onnx"))
    assert make_inputs(str(tmp_path / "g.onnx"), seed=0)["x_len"].tolist() == [64]

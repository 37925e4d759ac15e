"""A tensor of one value per sample along a known batch axis is judged sample by sample, each as
a check of that sample alone would judge it (compare/batch_samples.py, graph/batch_axis.py).
Audit 35: a batch of two Smart Turn clips passed its end-of-turn probability, 0.114 -> 0.221, at
cosine 0.9996, where the clip alone fails by the one-element rule. Review RB of a rule told by
shape alone: a batch-1 seq-first per-frame logit [50, 1, 1] failed at cosine 1.000000 (1), a
tiny probability beside a 0.6 failed where each alone passes (2), a golden-0 sample that the
device moved passed (3)."""
import ast
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy import compare_dumps
from pytest_ascend_accuracy.compare.sample_errors import largest_error
from pytest_ascend_accuracy.compare.sample_values import BatchSamples
from pytest_ascend_accuracy.compare.one_element import fix_threshold
from pytest_ascend_accuracy.compare.result import CompareResult
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.graph.batch_axis import batched_outputs

GOLDEN, ACTUAL = [0.0064, 0.114], [0.0064, 0.221]  # Smart Turn's two clips, audit 35
FIX = re.compile(r"per_op=(\{.*?\}) in a test")


def result(actual, golden, shape, batched=True, dtype=np.float32):
    """The compare of one op ``prob``; ``batched``: the golden knows its axis 0 as the batch
    axis ``N`` (``meta["batch_axis"]``, as the golden of a model with a symbolic batch fed
    with more than one sample records it)."""
    golden_dump = DumpSet.from_arrays({"prob": [np.asarray(golden, np.float32).reshape(shape)]})
    if batched:
        golden_dump.meta["batch_axis"] = {"dims": {"N": shape[0]},
                                          "outputs": {"prob:output:0": "N"}}
    return compare_dumps(
        DumpSet.from_arrays({"prob": [np.asarray(actual, dtype).reshape(shape)]}), golden_dump)


def test_a_batch_fails_what_its_sample_alone_fails_naming_the_sample_and_its_fix_passes():
    alone = result(ACTUAL[1:], GOLDEN[1:], (1, 1), batched=False).judge(0.95)
    batch = result(ACTUAL, GOLDEN, (2, 1)).judge(0.95)
    assert not alone.passed and not batch.passed
    (failure,) = batch.failures
    assert failure.row.metrics.cosine > 0.999  # what passed it before
    assert failure.reason.startswith(
        "one element: sample [1] of 2 along axis 0 (the inputs' dim 'N') "
        "(golden 0.114, device 0.221), judged "
        "as that sample alone: cosine tells only its sign; its relative error 0.9386 is over "
        "the 0.3287 that cosine >= 0.95 allows"), failure.reason
    fix = FIX.search(failure.reason).group(1)
    assert fix == FIX.search(alone.failures[0].reason).group(1) == '{"prob": 0.729138}'
    assert fix_threshold(failure.row.metrics) == "0.729138"
    assert result(ACTUAL, GOLDEN, (2, 1)).judge(0.95, per_op=ast.literal_eval(fix)).passed
    assert "(one value per sample: the relative error it allows)" in batch.describe()
    # where the axis is not known to be the batch's, the tensor keeps its cosine (as before)
    assert result(ACTUAL, GOLDEN, (2, 1), batched=False).judge(0.95).passed


def test_a_batch_passes_where_every_sample_alone_passes():
    # 3% and 14% each, under the 32.9% cosine 0.95 allows one element
    assert result([0.0066, 0.13], GOLDEN, (2, 1)).judge(0.95).passed
    # a sample whose sign flipped fails, as alone (cosine -1), named
    verdict = result([0.9, -0.2], [0.9, 0.2], (2, 1)).judge(0.95)
    assert not verdict.passed and not result([-0.2], [0.2], (1, 1), batched=False).judge(
        0.95).passed
    assert verdict.failures[0].reason.startswith("cosine -1.000000 fails cosine >= 0.95"), \
        verdict.failures[0].reason
    assert ("; at sample [1] of 2 along axis 0 (the inputs' dim 'N') (golden 0.2, device -0.2)"
            in verdict.failures[0].reason)


@pytest.mark.parametrize("threshold", [0.95, 0.99])
def test_rb2_a_tiny_probability_beside_a_06_passes_where_each_alone_passes(threshold):
    """The device gives float16's rounding of each probability; one lies below float16's
    smallest normal. The old rule failed 22 of 80 such batches at 0.95 (review RB, finding 2)."""
    logits = np.linspace(-18.0, -14.0, 80, endpoint=False)
    for logit in logits:
        golden = np.array([1 / (1 + np.exp(-logit)), 0.6], np.float32)
        actual = golden.astype(np.float16)
        for k in (0, 1):  # each sample alone
            assert result(actual[k:k + 1], golden[k:k + 1], (1, 1), batched=False,
                          dtype=np.float16).judge(threshold).passed
        assert result(actual, golden, (2, 1), dtype=np.float16).judge(threshold).passed, logit


def test_rb3_a_golden_0_sample_the_device_moves_fails_as_it_does_alone():
    """A ReLU head's golden 0 against the device's 0.25: max_rel counts it as 0 (review RB,
    finding 3); alone its cosine is NaN and it fails."""
    assert not result([0.25], [0.0], (1, 1), batched=False).judge(0.95).passed
    verdict = result([0.25, 1.0], [0.0, 1.0], (2, 1)).judge(0.95)
    assert not verdict.passed
    (failure,) = verdict.failures
    assert failure.reason.startswith("cosine is NaN"), failure.reason
    assert failure.reason.endswith("; at sample [0] of 2 along axis 0 (the inputs' dim 'N') "
                                   "(golden 0, device 0.25), judged as that sample alone"), \
        failure.reason
    # a golden 0 the device leaves at 0, or below float16's smallest normal, passes as alone
    assert result([0.0, 1.0], [0.0, 1.0], (2, 1)).judge(0.95).passed
    assert result([1e-6, 1.0], [0.0, 1.0], (2, 1)).judge(0.95).passed


def test_several_failing_samples_are_counted_and_the_fix_passes_the_worst():
    verdict = result([0.2, 0.5, 0.9], [0.1, 0.5, 0.6], (3, 1, 1)).judge(0.95)
    (failure,) = verdict.failures
    assert failure.reason.startswith("one element: sample [0] of 3 along axis 0 (the inputs' "
                                     "dim 'N') (golden 0.1, device 0.2); 2 of the 3 samples "
                                     "fail"), failure.reason
    assert largest_error(failure.row.metrics.samples)[0] == 0
    fix = ast.literal_eval(FIX.search(failure.reason).group(1))
    assert result([0.2, 0.5, 0.9], [0.1, 0.5, 0.6], (3, 1, 1)).judge(0.95, per_op=fix).passed


def test_the_samples_are_saved_and_judged_again_at_any_threshold(tmp_path):
    r = result(ACTUAL, GOLDEN, (2, 1))
    back = CompareResult.from_json(r.to_json())
    assert isinstance(back.rows[0].metrics.samples, BatchSamples)
    assert back.rows[0].metrics.samples == r.rows[0].metrics.samples
    for t in (0.5, 0.7, 0.72, 0.73, 0.95, 0.99):
        assert back.judge(t).passed == r.judge(t).passed
        assert back.judge(t).passed == result(ACTUAL[1:], GOLDEN[1:], (1, 1),
                                              batched=False).judge(t).passed, t
    # a row without samples (every compare.json written before) reads and judges as before
    assert "samples" not in result(ACTUAL, GOLDEN, (2, 1), batched=False).rows[0].to_dict()[
        "metrics"]


def test_more_than_one_value_per_sample_is_judged_as_a_whole():
    golden = [[0.0064, 0.5], [0.114, 0.5]]
    actual = [[0.0064, 0.5], [0.221, 0.5]]
    r = result(actual, golden, (2, 2))
    assert r.rows[0].metrics.samples is None and r.judge(0.95).passed


def _frames_model(path, first):
    """x [first, 1, 40] -> MatMul -> Tanh -> MatMul -> logit [first, 1, 1]: RB's seq-first
    per-frame detector, its axis 0 ``first`` (a number or a dim name)."""
    rng = np.random.default_rng(0)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["m1"], name="fc1"),
         helper.make_node("Tanh", ["m1"], ["t1"], name="tanh"),
         helper.make_node("MatMul", ["t1", "w2"], ["logit"], name="fc2")], "vad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [first, 1, 40])],
        [helper.make_tensor_value_info("logit", TensorProto.FLOAT, [first, 1, 1])],
        [numpy_helper.from_array(rng.standard_normal((40, 64)).astype(np.float32), "w1"),
         numpy_helper.from_array(rng.standard_normal((64, 1)).astype(np.float32), "w2")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                ir_version=8), str(path))
    return str(path)


@pytest.mark.parametrize("first", [50, "T", "seq_len", "time", "s0", "N", "num_boxes",
                                   "unk__12"])
def test_rb1_a_batch_1_models_per_frame_axis_is_not_a_batch_axis(tmp_path, first):
    """A fixed 50, or a symbolic dim whose name does not say batch: frames or boxes, not
    samples (review RB, finding 1: 5 of 40 seeded inputs failed at cosine 1.000000; review RP:
    torch.export's ``s0``, a per-box scorer's ``N``/``num_boxes``, tf2onnx's ``unk__12``)."""
    model = _frames_model(tmp_path / "vad.onnx", first)
    assert batched_outputs(model, {"x": np.zeros((50, 1, 40), np.float32)}) == {}


def test_rb1_frames_near_0_keep_their_cosine_where_the_axis_is_not_known():
    golden = np.linspace(-4, 4, 50).astype(np.float32) + 0.01  # a frame crosses 0
    actual = golden.astype(np.float16).astype(np.float32) + 1e-3
    r = result(actual, golden, (50, 1, 1), batched=False)
    assert r.rows[0].metrics.value("cosine") > 0.99999 and r.judge(0.99).passed


@pytest.mark.parametrize("name", ["batch", "batch_size", "Batch", "bs"])
def test_a_symbolic_batch_fed_with_more_than_one_sample_is_known(tmp_path, name):
    model = _frames_model(tmp_path / "b.onnx", name)
    known = batched_outputs(model, {"x": np.zeros((2, 1, 40), np.float32)})
    assert known == {"dims": {name: 2}, "outputs": {"fc2:output:0": name}}  # [N, 1, 1] only
    assert batched_outputs(model, {"x": np.zeros((1, 1, 40), np.float32)}) == {}  # batch of 1


def test_a_state_input_naming_batch_at_axis_1_leaves_the_batch_known(tmp_path):
    """Review RP: Silero VAD's state ``[2, batch, 128]`` beside ``x [batch, 512]`` made the
    whole model "seq-first", and its ``[batch, 1]`` probability of a batch of two passed what
    a clip alone fails. A seq-first ``[seq, batch, C]`` is not batched: its axis 0 says seq."""
    path = tmp_path / "s.onnx"
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "ax"], ["p"], name="prob", keepdims=1),
         helper.make_node("Identity", ["state"], ["state_out"], name="keep")], "s",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4]),
         helper.make_tensor_value_info("state", TensorProto.FLOAT, [2, "batch", 8])],
        [helper.make_tensor_value_info("p", TensorProto.FLOAT, ["batch", 1]),
         helper.make_tensor_value_info("state_out", TensorProto.FLOAT, [2, "batch", 8])],
        [numpy_helper.from_array(np.array([1], np.int64), "ax")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                ir_version=8), str(path))
    fed = {"x": np.zeros((2, 4), np.float32), "state": np.zeros((2, 2, 8), np.float32)}
    assert batched_outputs(str(path), fed)["outputs"] == {"prob:output:0": "batch"}
    seq_first = _frames_model(tmp_path / "sf.onnx", "seq")
    assert batched_outputs(seq_first, {"x": np.zeros((5, 1, 40), np.float32)}) == {}

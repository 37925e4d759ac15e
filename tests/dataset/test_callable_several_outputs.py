"""A callable metric on a model of several outputs (audit 34: MTCNN's rnet, basic-pitch's nmp).

Without ``output=`` no output's top-1 is tracked: the check said "0 flipped" and "no sample's
top-1 changed, so no operator was traced" though nothing was tracked, never named the samples
whose device outputs held NaN (every output of every sample, in nmp's case), and a failing
callable with no flipped sample ended with no next step. Now it says flips were not tracked
and why, gives ``output=NAME`` per output (which, pasted, tracks and traces them), names the
NaN/Inf samples and traces the first, else traces the sample whose outputs moved most."""
from __future__ import annotations

import numpy as np
import pytest

from pytest_ascend_accuracy.dataset import run_dataset_check

from .conftest import spiky_model, spiky_samples


def two_output_spiky(path):
    """``spiky`` with its ``scaled`` tensor as a second output: outputs logits, scaled."""
    import onnx
    from onnx import helper

    model = spiky_model(name="two")
    model.graph.output.append(helper.make_tensor_value_info("scaled", 1, [1, 8]))
    onnx.save(model, str(path))
    return path


def top1_of_logits(outputs, labels):
    logits = np.concatenate([o["logits"] for o in outputs])
    return float(np.mean(logits.argmax(axis=1) == np.asarray(labels)))


def total_logit(outputs, labels):
    return float(sum(o["logits"].sum() for o in outputs))


@pytest.fixture
def two(tmp_path):
    return two_output_spiky(tmp_path / "two.onnx")


def test_untracked_flips_are_said_with_the_outputs_not_as_none_flipped(device, two):
    samples, labels = spiky_samples()
    result, _, _ = run_dataset_check(device(two), samples, metric=top1_of_logits,
                                     labels=labels, trace=False)
    text = result.message()
    assert not result.passed and result.flipped == ()
    assert "flipped top-1: not tracked (the model has 2 outputs, logits, scaled, and a callable " \
           "metric may read any of them)" in text, text
    assert "to track the top-1 of one output of class scores (the top-1 of boxes or other " \
           "values tells nothing), and trace the first sample it flips to an operator, name " \
           "it:\n  output='logits'\n  output='scaled'" in text, text
    assert "no sample's top-1 changed" not in text, text
    assert result.summary_line().endswith(", 20 samples, flips not tracked FAILED")
    from pytest_ascend_accuracy.dataset.result import to_record

    assert to_record(result, "t.py::test")["untracked"] is True


def test_the_output_option_pasted_tracks_the_flips_and_traces_an_operator(device, two):
    samples, labels = spiky_samples()
    result, _, _ = run_dataset_check(device(two), samples, metric=top1_of_logits, labels=labels)
    pasted = result.message().split("name it:\n")[1].splitlines()[0].strip()
    assert pasted == "output='logits'"
    options = eval(f"dict({pasted})")  # the line as a keyword of the call
    again, _, _ = run_dataset_check(device(two), samples, metric=top1_of_logits, labels=labels,
                                    **options)
    text = again.message()
    assert again.flipped == ("3", "11") and not again.untracked
    assert "flipped top-1 (2 of 20): 3, 11" in text
    assert "first flipped sample 3: first operator below the threshold: amplify2 (Mul)" in text


def test_device_outputs_holding_inf_are_named_and_the_first_is_traced(device, two):
    samples, labels = spiky_samples()  # 3 and 11 overflow float16 at amplify2: +inf
    result, _, _ = run_dataset_check(device(two), samples, metric=top1_of_logits, labels=labels)
    text = result.message()
    assert result.nonfinite == ("3", "11") and result.nonfinite_outputs == ("logits", "scaled")
    assert "NaN/Inf in the device outputs logits, scaled (NaN, or an Inf the reference lacks " \
           "there) of 2 samples: 3, 11" in text, text
    assert result.culprit.sample == "3" and result.culprit.op == "amplify2"
    assert "first NaN/Inf sample 3: first operator below the threshold: amplify2 (Mul)" in text


def test_a_single_output_callable_still_tracks_flips_on_its_only_output(device, tmp_path):
    import onnx

    onnx.save(spiky_model(), str(tmp_path / "one.onnx"))
    samples, labels = spiky_samples()
    result, _, _ = run_dataset_check(device(tmp_path / "one.onnx"), samples,
                                     metric=top1_of_logits, labels=labels)
    assert result.flipped == ("3", "11") and result.output == "logits"
    assert result.culprit.op == "amplify2" and result.culprit.role == "first flipped sample"
    assert "not tracked" not in result.message()


def test_a_failing_callable_with_no_flip_and_no_nan_traces_what_the_metric_reads(device, two):
    """A review: tracing the sample whose outputs moved most picked one whose decision never
    changed (a flip is a near tie, which moves least), and the diagnosis then offered a fix
    that fixed nothing. Outputs moving say nothing of the metric: the sample traced is the one
    the metric itself, given that sample's device outputs alone, fails by at least half the
    drop (``CallableMetric.decisive``). Float16's rounding of a sum at max_drop 0: one sample's
    alone drops it more than the whole run does (the others' errors cancel); its ops all meet
    the threshold, and the note does not claim an answer changed (review RM)."""
    samples, _ = spiky_samples(spiked=())  # nothing overflows: float16 rounding only
    result, _, _ = run_dataset_check(device(two), samples, metric=total_logit, max_drop=0.0)
    text = result.message()
    assert not result.passed and result.nonfinite == (), text
    assert result.culprit.op is None, text  # every op meets the threshold, and it says so
    sample = result.culprit.sample
    assert (f"with the device outputs of sample {sample} alone; sample {sample}: every operator "
            "meets the threshold") in text, text
    assert "the answer changed" not in text and "moved most" not in text


def test_a_drop_spread_over_many_samples_traces_none():
    """Ten samples each 0.01 lower: none alone makes half the drop, none is traced."""
    from pytest_ascend_accuracy.dataset.callable_metric import CallableMetric
    from pytest_ascend_accuracy.dataset.samples import Labels, Sample

    called = CallableMetric(total_logit, Labels(None))
    for i in range(10):
        called.add(Sample(str(i), i, {}), {"logits": np.ones((1, 2))},
                   {"logits": np.array([[1.0, 0.99]])})
    reference, device = called.values()
    assert called.decisive(lambda v: reference - v, 0.0, reference - device) is None
    called.dev[4] = {"logits": np.array([[1.0, 0.0]])}  # one sample now makes most of it
    reference, device = called.values()
    sample, value = called.decisive(lambda v: reference - v, 0.0, reference - device)
    assert sample.id == "4" and value == reference - 1.0


def test_one_decisive_sample_among_many_is_found_in_few_metric_calls():
    """Review RM: past 256 samples whose outputs differ (under float16, nearly every one) none
    was tried; halving finds it in about 2 log2(N) calls."""
    from pytest_ascend_accuracy.dataset.callable_metric import CallableMetric
    from pytest_ascend_accuracy.dataset.samples import Labels, Sample

    calls = []

    def detections(outputs, labels):
        calls.append(1)
        return float(np.mean([o["s"][0] < 0.5 for o in outputs]))

    called = CallableMetric(detections, Labels(None))
    for i in range(1000):
        dev = 0.6 if i == 777 else 0.1 + 1e-4  # every sample differs a little, one flips
        called.add(Sample(str(i), i, {}), {"s": np.array([0.1])}, {"s": np.array([dev])})
    reference, device = called.values()
    calls.clear()
    sample, value = called.decisive(lambda v: reference - v, 0.0, reference - device)
    assert sample.id == "777" and value == device and len(calls) <= 2 * 10 + 1


def test_only_outputs_whose_top_1_can_be_tracked_are_offered():
    """A review: MTCNN's pnet maps [1, H, W, 2] and a sigmoid's [N, 1] were offered as
    ``output=`` lines, and pasted they tracked nothing."""
    from pytest_ascend_accuracy.dataset.check import trackable_outputs

    outputs = {"probs": np.zeros((1, 10)), "map": np.zeros((1, 6, 5, 2)),
               "gate": np.zeros((1, 1)), "head": np.zeros((1, 6, 50))}
    assert trackable_outputs(outputs, {"head": "Concat ..."}) == ("probs",)
    from pytest_ascend_accuracy.dataset.result import DatasetResult

    result = DatasetResult(metric="m", samples=1, rows=1, reference=1.0, device=0.5,
                           max_drop=0.0, untracked="the model has 2 outputs, map, gate")
    assert ("none of its outputs has a single class axis whose top-1 output= could track"
            in result.message())
    assert result.properties()["dataset_flipped"] == "not tracked"


def test_a_nan_the_reference_holds_too_is_not_the_devices():
    """A review: a NaN the fp32 reference also held was named as the device's and traced."""
    from pytest_ascend_accuracy.dataset.callable_metric import _odd

    ref = np.array([1.0, np.nan, 3.0])
    assert not _odd(ref, np.array([1.0, np.nan, 3.0]))
    assert _odd(ref, np.array([np.nan, np.nan, 3.0]))
    assert _odd(ref, np.array([1.0, np.nan, np.inf]))


def near_threshold_model(path):
    """``score = Sigmoid(x * 64)`` per sample ([N, 1]: one value per sample, no class axis, as
    openWakeWord's wake-word head), float16 rounding x * 64 moves a score near 0.5 across it."""
    import onnx
    from onnx import helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "k"], ["z"], name="gain"),
         helper.make_node("Sigmoid", ["z"], ["score"], name="squash")], "near",
        [helper.make_tensor_value_info("x", 1, [1, 1])],
        [helper.make_tensor_value_info("score", 1, [1, 1])],
        [numpy_helper.from_array(np.array(64.0, np.float32), "k")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def detection_accuracy(outputs, labels):
    """openWakeWord's decision, a detection where the score is at least 0.5, against labels."""
    decided = [float(o["score"].ravel()[0]) >= 0.5 for o in outputs]
    return float(np.mean(np.array(decided) == np.asarray(labels, bool)))


def test_a_callable_whose_drop_one_sample_makes_traces_that_sample(cache, tmp_path):
    """Audit 36 B F4: openWakeWord's score went 0.0001 -> 0.62 in one of 8 samples, the check
    failed 0.875 against 1.0, and said "no operator was traced". The metric itself, given that
    sample's device outputs and every other sample's reference outputs, fails: that sample is
    traced."""
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend, Fault
    from pytest_ascend_accuracy.dataset import load_device_model

    path = near_threshold_model(tmp_path / "near.onnx")
    xs = [-1.0, -0.5, 0.5, 1.0, -0.001, 0.75]  # sample 4: score 0.484, just under 0.5
    samples = [{"x": np.array([[v]], np.float32)} for v in xs]
    labels = [v > 0 for v in xs]
    backend = EmulatorBackend(cache, faults=[Fault.on_op("gain", effect="offset", amount=2.0)])
    om = load_device_model(backend, path, "default", dump_root=tmp_path / "dumps")
    result, _, _ = run_dataset_check(om, samples, metric=detection_accuracy, labels=labels,
                                     max_drop=0.0)
    text = result.message()
    assert not result.passed and result.culprit is not None, text
    assert result.culprit.sample == "4", text
    assert ("detection_accuracy 1.0000 -> 0.8333 with the device outputs of sample 4 alone; "
            "sample 4: first "
            "operator below the threshold: gain (Mul)") in text, text

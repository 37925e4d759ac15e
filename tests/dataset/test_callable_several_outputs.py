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


def test_a_failing_callable_with_no_flip_and_no_nan_traces_no_sample(device, two):
    """A review: tracing the sample whose outputs moved most picked one whose decision never
    changed (a flip is a near tie, which moves least), and the diagnosis then offered a fix
    that fixed nothing. With nothing flipped and no NaN/Inf, no sample is traced, and the
    result says so."""
    samples, _ = spiky_samples(spiked=())  # nothing overflows: float16 rounding only
    result, _, _ = run_dataset_check(device(two), samples, metric=total_logit, max_drop=0.0)
    assert not result.passed and result.nonfinite == () and result.culprit is None
    assert "top-1 flips were not tracked, so no operator was traced" in result.message()
    assert "moved most" not in result.message()


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

"""A failing top-k check traces a sample the metric lost (audit H104).

It traced the first sample whose top-1 flipped, in sample order: possibly one wrong on both
sides (a flip that cost nothing), while the sample the figure lost went untraced; and a top5
failure whose top-1s all held named no sample and traced nothing. The check now tracks the
rows each metric lost (the label in the reference's top k, not in the device's), names them,
and traces the first; a failure reads with enough decimals that its drop never equals its
max_drop."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.dataset import DatasetFailure, DatasetResult, check_dataset

from .conftest import spiky_model


def test_a_lost_sample_is_traced_before_an_earlier_flip_that_cost_nothing(
        device, tmp_path, cache):
    onnx.save(spiky_model(), str(tmp_path / "spiky.onnx"))
    om = device(tmp_path / "spiky.onnx")
    wrong = np.zeros((1, 8), np.float32)  # label 0: wrong on both sides, a near-tie 2 vs 1
    wrong[0, 1], wrong[0, 2] = 0.5, 0.50001
    lost = np.zeros((1, 8), np.float32)  # label 3: right in fp32, class 7 inf on the device
    lost[0, 3], lost[0, 7] = 0.6, 0.9999
    samples = [{"x": wrong}, {"x": lost}] + [{"x": np.eye(8, dtype=np.float32)[[k]] * 0.6}
                                             for k in range(6)]
    with pytest.raises(DatasetFailure) as info:
        check_dataset(om, samples, labels=[0, 3] + list(range(6)), cache=cache)
    text = str(info.value)
    assert "flipped top-1 (2 of 8): 0, 1" in text
    assert "top1 lost (1 of 8, right in the reference, wrong on the device): 1" in text
    assert "first lost sample 1: first operator below the threshold: amplify2 (Mul)" in text
    assert info.value.dataset.culprit.sample == "1"


def _tail_model(path):
    """logits = x * 256 * 256 / 65536 + bias: classes 4-6 sit far below (bias -5), so class 7
    at -0.9999 is 5th in fp32; float16 takes -0.9999 * 65536 to -inf, out of the top 5, while
    the top-1 holds."""
    from onnx import numpy_helper

    model = spiky_model(name="tail")
    bias = np.array([0, 0, 0, 0, -5, -5, -5, 0], np.float32)
    model.graph.initializer[2].CopyFrom(numpy_helper.from_array(bias, "bias"))
    onnx.save(model, str(path))
    return path


def test_a_top5_loss_without_a_top1_flip_is_named_and_traced(device, tmp_path, cache):
    om = device(_tail_model(tmp_path / "tail.onnx"))
    samples = []
    for i in range(6):
        x = np.array([[0.8, 0.7, 0.6, 0.5, 0.1, 0.1, 0.1, -0.5]], np.float32)
        if i == 2:
            x[0, 7] = -0.9999
        samples.append({"x": x})
    with pytest.raises(DatasetFailure) as info:
        check_dataset(om, samples, metric="top5", labels=[7] * 6, cache=cache)
    text = str(info.value)
    assert "flipped top-1: none" in text
    assert "top5 lost (1 of 6, right in the reference, wrong on the device): 2" in text
    assert "first lost sample 2: first operator below the threshold: amplify2 (Mul)" in text
    assert "no operator was traced" not in text


@pytest.mark.parametrize("device_figure, max_drop", [(0.99996, 0.0), (0.989996, 0.01)])
def test_a_failing_drop_never_prints_as_its_max_drop(device_figure, max_drop):
    """It read "drop 0.0000 > max_drop 0.0000" (and "0.0100 > 0.0100")."""
    result = DatasetResult(metric="top1", reference=1.0, device=device_figure,
                           max_drop=max_drop, samples=100000, rows=100000)
    assert not result.passed
    figures = result.figures()
    drop, bound = figures.split("(drop ")[1].rstrip(")").split(" > max_drop ")
    assert float(drop) > float(bound), figures
    assert drop != bound
    device_text, reference_text = figures.split()[1], figures.split()[5]
    assert device_text != reference_text, figures

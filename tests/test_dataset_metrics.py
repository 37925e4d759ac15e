import numpy as np
import pytest

from pytest_ascend_accuracy import assert_metric_close, topk_accuracy
from pytest_ascend_accuracy.dataset.metrics import MetricMismatch, topk_from_outputs


def test_failure_message_reads_like_a_person_would_say_it():
    with pytest.raises(MetricMismatch) as info:
        assert_metric_close(0.90, 0.92, abs_tol=0.01, name="Top-1")
    assert str(info.value) == "Top-1 0.9000 vs 0.9200 reference, tolerance 0.0100: fails by 0.0100"


def test_within_tolerance_and_better_than_reference_pass():
    assert assert_metric_close(0.915, 0.92, abs_tol=0.01).passed
    assert assert_metric_close(0.99, 0.92, abs_tol=0.0, name="mAP").describe() == (
        "mAP 0.9900 vs 0.9200 reference, tolerance 0.0000: passes")


def test_relative_tolerance_and_lower_is_better():
    assert_metric_close(10.4, 10.0, rel_tol=0.05, higher_is_better=False)  # WER 10.4 vs 10 +-5%
    with pytest.raises(MetricMismatch, match="fails by 0.1000"):
        assert_metric_close(10.6, 10.0, rel_tol=0.05, higher_is_better=False)


def test_nan_never_passes():
    with pytest.raises(MetricMismatch, match="non-finite"):
        assert_metric_close(float("nan"), 0.9, abs_tol=1.0)


def test_topk_from_logits():
    logits = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.2, 0.3, 0.5], [0.4, 0.4, 0.2]])
    labels = np.array([1, 2, 2, 1])
    assert topk_accuracy(logits, labels, 1) == 0.5   # row 3 tie -> class 0 ranks first
    assert topk_accuracy(logits, labels, 2) == 0.75
    assert topk_accuracy(logits, labels, 3) == 1.0
    assert topk_from_outputs([logits[:2], logits[2:]], labels, ks=(1, 2, 5)) == {"top1": 0.5, "top2": 0.75}


@pytest.mark.parametrize("args, match", [
    ((np.zeros(3), [0, 0, 0], 1), "2-D"),
    ((np.zeros((2, 3)), [0], 1), "2 rows of logits but 1 labels"),
    ((np.zeros((2, 3)), [0, 1], 4), "k=4 outside 1..3"),
])
def test_topk_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        topk_accuracy(*args)

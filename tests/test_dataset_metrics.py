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
    by_output = topk_from_outputs([logits[:2], logits[2:]], labels, ks=(1, 2))
    assert by_output == {"top1": 0.5, "top2": 0.75}


@pytest.mark.parametrize("args, match", [
    ((np.zeros(3), [0, 0, 0], 1), "2-D"),
    ((np.zeros((2, 3)), [0], 1), "2 rows of logits but 1 labels"),
    ((np.zeros((2, 3)), [0, 1], 4), "k=4 outside 1..3"),
])
def test_topk_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        topk_accuracy(*args)


# audit H104: topk_accuracy (which the README gives hand-written loops) follows check_dataset's
# rules; it counted an all-NaN row as right and read labels past the classes, 2.7 or '1' as
# silently wrong rows


@pytest.mark.parametrize("row", [[np.nan, np.nan, np.nan], [1.0, np.nan, 0.0]])
def test_topk_accuracy_counts_a_row_holding_nan_wrong(row):
    assert topk_accuracy(np.array([row, [0.0, 1.0, 0.0]]), [0, 1], 1) == 0.5
    assert topk_accuracy(np.array([row]), [0], 2) == 0.0


@pytest.mark.parametrize("label, message", [
    (2.7, "label of row 1 is 2.7, not a class index"),
    (True, "label of row 1 is True, a bool, not a class index"),
    (-1, r"label of row 1 is -1, outside the 3 classes of the logits \(shape \[2, 3\]\)"),
    (7, r"label of row 1 is 7, outside the 3 classes of the logits \(shape \[2, 3\]\)"),
    ("x", "label of row 1 is 'x', not a class index"),
])
def test_topk_accuracy_refuses_a_label_as_check_dataset_does(label, message):
    from pytest_ascend_accuracy.errors import ConfigError

    with pytest.raises(ConfigError, match=message):  # a ValueError, as before
        topk_accuracy(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), [0, label])


def test_topk_accuracy_reads_integral_labels_of_any_type_as_check_dataset_does():
    logits = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert topk_accuracy(logits, [0, "1", 2.0]) == 1.0
    assert topk_accuracy(logits, np.array([0, 1, 2], np.uint8)) == 1.0


def test_topk_from_outputs_reads_an_output_layout_as_check_dataset_does():
    """[1, 6, 1, 1] is one row of 6 classes (it was read as 6 rows of one class)."""
    out = np.array([0.1, 0.2, 0.9, 0.3, 0.0, 0.4], np.float32).reshape(1, 6, 1, 1)
    assert topk_from_outputs([out, out], [2, 5], ks=(1, 2)) == {"top1": 0.5, "top2": 1.0}
    with pytest.raises(ValueError, match=r"shape \[1, 3, 2, 2\] has no single class axis"):
        topk_from_outputs([np.zeros((1, 3, 2, 2))], [0], ks=(1,))
    with pytest.raises(ValueError, match=r"shape \[1, 4, 3\] is a sequence of 4 positions"):
        topk_from_outputs([np.zeros((1, 4, 3))], [0], ks=(1,))


def test_topk_from_outputs_refuses_a_k_over_the_classes_and_its_advice_applies():
    """ks=(1, 5) on 3 classes returned top1 alone, dropping top5 silently."""
    import re

    logits = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]])
    with pytest.raises(ValueError) as info:
        topk_from_outputs([logits], [1, 0], ks=(1, 2, 5))
    assert str(info.value).startswith("top5 needs at least 5 classes; the outputs hold 3")
    advice = re.search(r"pass (ks=\(.*\))$", str(info.value)).group(1)
    assert eval(f"topk_from_outputs([logits], [1, 0], {advice})") == {"top1": 1.0, "top2": 1.0}


@pytest.mark.parametrize("tolerance", [{"abs_tol": float("nan")}, {"rel_tol": float("nan")},
                                       {"abs_tol": float("inf")}, {"rel_tol": float("inf")},
                                       {"abs_tol": True}, {"abs_tol": -0.1}])
def test_assert_metric_close_refuses_a_tolerance_that_is_no_finite_number(tolerance):
    """NaN was taken (NaN >= 0 is False, so not refused) and inf passed any figure."""
    ((key, value),) = tolerance.items()
    with pytest.raises(ValueError, match=rf"^{key}: expected a finite number >= 0, got "):
        assert_metric_close(0.1, 0.9, **tolerance)


def test_a_failing_figure_never_reads_as_failing_by_nothing():
    """It read "Top-1 0.9000 vs 0.9000 reference, tolerance 0.0000: fails by 0.0000"."""
    with pytest.raises(MetricMismatch) as info:
        assert_metric_close(0.89996, 0.9, name="Top-1")
    assert str(info.value) == ("Top-1 0.89996 vs 0.90000 reference, tolerance 0.00000: fails by "
                               "0.00004")

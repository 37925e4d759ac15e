"""A TopK's indices compared within the ties of the device's own values (a detector trial: a
1000-long TopK failed a correct device because two inputs the golden tells apart in float32
round to one float16 value, which ONNX's TopK lists lower index first)."""
import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet


def _topk(values, indices):
    return DumpSet.from_arrays({"topk": [values, indices]}, op_types={"topk": "TopK"})


def _row(actual, golden, slot="output:1"):
    result = compare_dumps(actual, golden)
    return next(r for r in result.rows if r.slot == slot), result


def test_indices_swapped_within_a_device_tie_are_equal():
    golden_values = np.array([[0.9, 0.86, 0.8599, 0.5]], np.float32)
    device_values = golden_values.astype(np.float16)  # 0.86 and 0.8599 tie in float16
    assert device_values[0, 1] == device_values[0, 2]
    golden = _topk(golden_values, np.array([[3, 20, 10, 7]], np.int64))
    device = _topk(device_values, np.array([[3, 10, 20, 7]], np.int32))  # lower index first
    row, result = _row(device, golden)
    assert row.metrics.unequal == 0 and "ties_reordered" in row.flags
    assert "exact_unequal" not in row.flags
    assert ("2 of the 2 differing indices only reorder values tied on the device (ONNX's TopK "
            "lists a tie's lower index first): compared as sets within ties") in row.metrics.notes
    assert result.judge(0.99).passed


def test_indices_that_differ_outside_a_tie_still_fail():
    values = np.array([[0.9, 0.8, 0.7, 0.5]], np.float32)
    golden = _topk(values, np.array([[3, 20, 10, 7]], np.int64))
    device = _topk(values.astype(np.float16), np.array([[3, 10, 20, 7]], np.int32))  # no tie
    row, result = _row(device, golden)
    assert row.metrics.unequal == 2 and "exact_unequal" in row.flags
    assert not result.judge(0.99).passed


@pytest.mark.parametrize("device_set", [[10, 20], [10, 30]])
def test_a_tie_inside_the_list_must_hold_the_same_indices(device_set):
    """[10, 30] against the golden's [20, 10] in a tie that ends before the list's end: not a
    reorder (30 was not among them)."""
    values = np.array([[0.9, 0.86, 0.86, 0.5]], np.float16)
    golden = _topk(values.astype(np.float32) + np.array([[0, 1e-4, 0, 0]], np.float32),
                   np.array([[3, 20, 10, 7]], np.int64))
    device = _topk(values, np.array([[3] + device_set + [7]], np.int32))
    row, _ = _row(device, golden)
    assert row.metrics.unequal == (0 if device_set == [10, 20] else 2)


def test_a_tie_at_the_end_of_the_list_may_hold_another_tied_index():
    """Which of several tied elements made the cut is the tie's order too."""
    values = np.array([[0.9, 0.86, 0.86]], np.float16)
    golden = _topk(values.astype(np.float32), np.array([[3, 20, 30]], np.int64))
    device = _topk(values, np.array([[3, 10, 20]], np.int32))
    row, _ = _row(device, golden)
    assert row.metrics.unequal == 0


def test_other_integer_outputs_are_compared_exactly_as_before():
    golden = DumpSet.from_arrays({"argmax": [np.array([1, 2, 3], np.int64)]},
                                 op_types={"argmax": "ArgMax"})
    device = DumpSet.from_arrays({"argmax": [np.array([1, 3, 2], np.int32)]},
                                 op_types={"argmax": "ArgMax"})
    row, _ = _row(device, golden, "output:0")
    assert row.metrics.unequal == 2

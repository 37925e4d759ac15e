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


@pytest.mark.parametrize("device_tail", [[10, 20], [5, 4], [99, -1], [1, 1]])
def test_a_tie_at_the_end_of_the_list_is_not_forgiven(device_tail):
    """Which of several tied elements made the cut cannot be told from the outputs: a review
    passed other values' indices, indices out of range and a repeated one there."""
    values = np.array([[0.9, 0.86, 0.86]], np.float16)
    golden = _topk(values.astype(np.float32), np.array([[3, 20, 30]], np.int64))
    device = _topk(values, np.array([[3] + device_tail], np.int32))
    row, _ = _row(device, golden)
    assert row.metrics.unequal == 2


@pytest.mark.parametrize("shape", [(2, 1), (3, 2)])
def test_a_list_whose_axis_is_not_certain_is_compared_exactly(shape):
    """A review: a (2, 1) top-1 over a batch whose probabilities both round to 1.0 was judged
    along the batch and passed wrong indices; a (3, 2) TopK on axis 0 along the wrong axis."""
    values = np.ones(shape, np.float16)
    golden_idx = np.arange(np.prod(shape)).reshape(shape)
    device_idx = golden_idx.ravel()[::-1].reshape(shape)
    row, _ = _row(_topk(values, device_idx.astype(np.int32)),
                  _topk(values.astype(np.float32), golden_idx))
    assert row.metrics.unequal == int(np.count_nonzero(device_idx != golden_idx))


def test_an_unreadable_values_tensor_leaves_the_row_as_compared(monkeypatch):
    """A review: a TopK values file that failed to load aborted the whole comparison."""
    from pytest_ascend_accuracy.dump.model import TensorRef
    from pytest_ascend_accuracy.errors import DumpFormatError

    values = np.array([[0.9, 0.86, 0.86, 0.5]], np.float16)
    device = _topk(values, np.array([[3, 10, 20, 7]], np.int32))
    golden = _topk(values.astype(np.float32), np.array([[3, 20, 10, 7]], np.int64))
    real = TensorRef.load

    def load(self):
        if self.slot == "output:0" and self.dtype == "float16":
            raise DumpFormatError("topk.0.out0.bin", "truncated file (a test)")
        return real(self)

    monkeypatch.setattr(TensorRef, "load", load)
    row, _ = _row(device, golden)
    assert row.metrics.unequal == 2


def test_a_long_tie_is_judged_in_linear_time():
    """A review: 8000 tied zeros took 18.7 s (each differing position walked its run)."""
    import time

    k = 20000
    values = np.r_[np.float16(1.0), np.zeros(k - 2, np.float16), np.float16(-1.0)][None]
    golden = _topk(values.astype(np.float32), np.arange(k)[None])
    order = np.r_[0, np.arange(1, k - 1)[::-1], k - 1][None].astype(np.int32)
    start = time.perf_counter()
    row, _ = _row(_topk(values, order), golden)
    assert row.metrics.unequal == 0
    assert time.perf_counter() - start < 5  # seconds; quadratic: minutes


def test_other_integer_outputs_are_compared_exactly_as_before():
    golden = DumpSet.from_arrays({"argmax": [np.array([1, 2, 3], np.int64)]},
                                 op_types={"argmax": "ArgMax"})
    device = DumpSet.from_arrays({"argmax": [np.array([1, 3, 2], np.int32)]},
                                 op_types={"argmax": "ArgMax"})
    row, _ = _row(device, golden, "output:0")
    assert row.metrics.unequal == 2


def test_a_tie_at_the_end_holding_the_same_indices_is_a_reorder():
    """A review (H46): a full sort (k = the axis length) whose last two values tie in float16
    failed a correct device: the same indices, so no question of which one made the cut."""
    values = np.array([[0.9, 0.7, 0.5, 0.5]], np.float16)
    golden = _topk(values.astype(np.float32), np.array([[3, 0, 2, 1]], np.int64))
    device = _topk(values, np.array([[3, 0, 1, 2]], np.int32))
    row, _ = _row(device, golden)
    assert row.metrics.unequal == 0


def test_a_batch_of_lists_is_judged_row_by_row():
    """A review (H46): a (2, 4) TopK over a batch failed a correct device (one axis longer than
    1 was required); each row is a list along the last axis, sorted along it alone."""
    values = np.array([[0.9, 0.6, 0.6, 0.1], [0.8, 0.7, 0.3, 0.2]], np.float16)
    golden = _topk(values.astype(np.float32), np.array([[3, 4, 1, 6], [7, 6, 5, 4]], np.int64))
    device = _topk(values, np.array([[3, 1, 4, 6], [7, 6, 5, 4]], np.int32))
    row, _ = _row(device, golden)
    assert row.metrics.unequal == 0
    swapped = _topk(values, np.array([[3, 1, 4, 6], [7, 5, 6, 4]], np.int32))  # no tie there
    row, _ = _row(swapped, golden)
    assert row.metrics.unequal == 2


def test_a_row_of_one_value_is_not_taken_as_a_tied_list():
    """A review (H47): a TopK on axis 0 with k=1 gives (1, C) column maxima; a one-hot's are
    all 1.0, and indices swapped between columns passed as one tied list."""
    values = np.ones((1, 4), np.float16)
    golden = _topk(values.astype(np.float32), np.array([[0, 1, 2, 0]], np.int64))
    device = _topk(values, np.array([[1, 0, 0, 2]], np.int32))
    row, _ = _row(device, golden)
    assert row.metrics.unequal == 4


def test_in_a_batch_a_whole_row_tie_is_a_reorder():
    """A review (H49) of the previous rule: a (2, 2) batch of top-2 lists (the axis told apart)
    whose row 0 ties in float16 failed a correct device."""
    values = np.array([[0.86, 0.86], [0.9, 0.2]], np.float16)
    golden = _topk(values.astype(np.float32), np.array([[5, 3], [1, 0]], np.int64))
    device = _topk(values, np.array([[3, 5], [1, 0]], np.int32))
    row, _ = _row(device, golden)
    assert row.metrics.unequal == 0


@pytest.mark.parametrize("shape", [(1, 2, 3), (2, 1, 3)])
def test_a_whole_row_tie_next_to_an_axis_of_length_1_is_not_forgiven(shape):
    """A review (H50): a TopK on axis 0 or 1 with k=1 gives (1, 2, 3) or (2, 1, 3); a row of
    equal column maxima passed indices swapped between columns as a tie."""
    values = np.full(shape, 0.5, np.float16)
    values.reshape(-1, 3)[1] = [0.9, 0.5, 0.1]  # another row sorted: the last axis looks right
    golden_idx = np.zeros(shape, np.int64)
    golden_idx.reshape(-1, 3)[0] = [0, 1, 2]
    device_idx = golden_idx.copy()
    device_idx.reshape(-1, 3)[0] = [2, 1, 0]
    row, _ = _row(_topk(values, device_idx.astype(np.int32)),
                  _topk(values.astype(np.float32), golden_idx))
    assert row.metrics.unequal == 2

"""A time-major sequence output ``[T, N, C]`` (a CTC recogniser: ddddocr's ``common.onnx``
outputs ``(T, 1, 8210)``, T following the image width) is read along its batch axis, not axis 0:
each time step counted as a sample, 2 of 50 samples decoding to other text passed a 0.01
``max_drop`` at agreement 0.9984 (audit 32, F1). The batch axis is the output axis of the
inputs' batch size; ``batch_axis=`` says it where the sizes cannot, and a reading the sizes
contradict is an error, never a silent one."""
from __future__ import annotations

import numpy as np
import pytest

from pytest_ascend_accuracy.dataset.batch_axis import BatchAxis
from pytest_ascend_accuracy.dataset.check import run_dataset_check
from pytest_ascend_accuracy.dataset.samples import Sample
from pytest_ascend_accuracy.errors import ConfigError

C, H = 10, 2
FLIPPED = (7, 31)


def ctc_model(batch=1):
    """x [batch, 1, C, W] -> Mul by 1 -> y [W, batch, C] (time-major, T = W), as a CTC head
    transposes its features (ops ``ctc.scale``, ``ctc.squeeze``, ``ctc.time_major``)."""
    from onnx import helper, numpy_helper

    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    nodes = [helper.make_node("Mul", ["x", "one"], ["scaled"], name="ctc.scale"),
             helper.make_node("Squeeze", ["scaled", "axes"], ["feat"], name="ctc.squeeze"),
             helper.make_node("Transpose", ["feat"], ["y"], perm=[2, 0, 1],
                              name="ctc.time_major")]
    graph = helper.make_graph(
        nodes, "ctc", [helper.make_tensor_value_info("x", 1, [batch, 1, C, "width"])],
        [helper.make_tensor_value_info("y", 1, ["width", batch, C])], [one, axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def ctc_samples(n=50, flipped=FLIPPED, batch=1):
    """Samples of widths 20..29: class 3 wins every position by far, but in the ``flipped``
    samples position 12 is a float16 near-tie (5.0 vs 5.001, one float16 value): the reference
    picks 4, the device 3."""
    rng = np.random.default_rng(0)
    samples = []
    for s in range(n):
        x = rng.standard_normal((batch, 1, C, 20 + s % 10)).astype(np.float32)
        x[:, 0, 3, :] = 5.0
        if s in flipped:
            x[0, 0, 4, 12] = 5.001
        samples.append({"x": x})
    return samples


@pytest.fixture
def ctc(tmp_path):
    import onnx

    path = tmp_path / "ctc.onnx"
    onnx.save(ctc_model(), str(path))
    return path


def test_a_time_major_output_counts_samples_not_time_steps(device, ctc):
    result, _, _ = run_dataset_check(device(ctc), ctc_samples(), metric="agreement",
                                     max_drop=0.01, trace=False)
    assert (result.samples, result.rows, result.flipped) == (50, 50, ("7", "31"))
    assert result.device == pytest.approx(0.96) and not result.passed
    assert (result.positions_min, result.positions, result.flipped_positions) == (20, 29, 2)
    text = result.message()
    assert "samples read along axis 1 of output 'y' (e.g. [20, 1, 10]: the axis of the " \
           "inputs' batch size, 1; axis 0, of 20, is not); batch_axis=AXIS says another" in text
    assert "flipped top-1 (2 of 50; a sample flips when any of its 20 to 29 positions does, " \
           "2 of 1225 positions flipped): 7, 31" in text


def test_batch_axis_0_keeps_the_time_step_reading_when_asked(device, ctc):
    result, _, _ = run_dataset_check(device(ctc), ctc_samples(), metric="agreement",
                                     max_drop=0.01, trace=False, batch_axis=0)
    assert (result.rows, result.passed) == (1225, True)
    assert result.layout_note == ""


def test_a_batch_of_two_is_read_along_its_axis(device, tmp_path):
    import onnx

    path = tmp_path / "ctc2.onnx"
    onnx.save(ctc_model(batch=2), str(path))
    result, _, _ = run_dataset_check(device(path), ctc_samples(6, flipped=(3,), batch=2),
                                     metric="agreement", max_drop=0.0, trace=False)
    assert (result.samples, result.rows, result.flipped) == (6, 12, ("3[0]",))


def _sample(shape, sid="a"):
    return Sample(sid, 0, {"x": np.zeros(shape, np.float32)})


def test_unchanged_layouts_read_axis_0():
    axes = BatchAxis("y")
    for inp, out in [((4, 8), (4, 8)), ((1, 3), (1, 3, 7)), ((2, 3), (2, 40, 6)),
                     ((1, 8), (8,)), ((3, 8), (3, 8, 1, 1)), ((1, 8), (1, 1, 8))]:
        assert axes.axis_for(_sample(inp), out) == 0, (inp, out)
    assert axes.note() == ""


def test_no_axis_of_the_batch():
    axes = BatchAxis("y")
    assert axes.axis_for(_sample((1, 64, 30)), (30, 8)) is None  # batch 1 squeezed: one row
    assert "read as one row per sample (it has no axis of the inputs' batch size, 1)" \
        in axes.note()


def test_an_inputs_axis_0_the_output_does_not_carry_is_no_batch():
    """A review: a model of one image [H, W, 3] (or [3, H, W]) making a batch of one itself
    stopped with "no axis of the inputs' batch size, 32", and a [3, 8, 8] one read the 3
    classes of its [1, 3] output as 3 samples; both read axis 0 again, as before."""
    for inp, out in [((32, 32, 3), (1, 10)), ((3, 8, 8), (1, 3)), ((4, 64, 30), (30, 8))]:
        axes = BatchAxis("y")
        assert axes.axis_for(_sample(inp), out) == 0, (inp, out)
        assert axes.note() == ""


def test_a_reading_later_sizes_contradict_is_an_error():
    axes = BatchAxis("y")
    assert axes.axis_for(_sample((4, 1, 8, 4), "a"), (4, 4, 8)) == 0  # T == N: axis 0
    with pytest.raises(ConfigError, match=r"output 'y' of shape \[5, 4, 8\]: its axis 0 is not "
                                          r"the inputs' batch, 4, though sample 'a' was read "
                                          r"along it .*batch_axis=1"):
        axes.axis_for(_sample((4, 1, 8, 5), "b"), (5, 4, 8))


def test_several_axes_of_the_batch_without_axis_0_is_an_error():
    with pytest.raises(ConfigError, match=r"several axes of the inputs' batch size, 3 \(axes "
                                          r"1, 2\).*batch_axis=1"):
        BatchAxis("y").axis_for(_sample((3, 5)), (7, 3, 3))


def test_the_declared_batch_breaks_a_tie():
    axes = BatchAxis("y", declared=(3, 1))  # y declared [T, N, C], N the inputs' dim_param
    assert axes.axis_for(_sample((4, 1, 8, 4)), (4, 4, 8)) == 1


def test_an_output_of_one_whose_declared_batch_is_axis_1_reads_it():
    """A review: an output [1, N, C] of a real batch N (declared with the inputs' dim_param)
    was read along axis 0 by the no-batch rule, its N entries as positions of one row; an
    undeclared one still reads axis 0 (a model of one [3, H, W] image making [1, 3])."""
    assert BatchAxis("y", declared=(3, 1)).axis_for(_sample((4, 8)), (1, 4, 10)) == 1
    assert BatchAxis("y").axis_for(_sample((4, 8)), (1, 4, 10)) == 0


def test_a_batch_of_one_switches_size_1_axes_freely():
    axes = BatchAxis("y")
    assert axes.axis_for(_sample((1, 1, 8, 1), "a"), (1, 1, 8)) == 0  # T = 1: either reads
    assert axes.axis_for(_sample((1, 1, 8, 9), "b"), (9, 1, 8)) == 1


@pytest.mark.parametrize("value", [1.0, "1", True, [1]])
def test_batch_axis_values_are_checked(value, device, ctc):
    with pytest.raises(ConfigError, match="expected an axis of the output"):
        run_dataset_check(device(ctc), ctc_samples(2), metric="agreement", batch_axis=value)


def test_batch_axis_past_the_output_rank_is_refused(device, ctc):
    with pytest.raises(ConfigError, match=r"batch_axis=3 is not an axis of output 'y' of shape "
                                          r"\[20, 1, 10\]"):
        run_dataset_check(device(ctc), ctc_samples(2), metric="agreement", batch_axis=3)

"""Class scores of any layout: a sequence output ``[N, T, C]`` (PP-OCR rec's ``[1, 40, 6625]``)
gets one top-1 per position, not one argmax over all T*C values, and a layout of no single
class axis (``[N, C, H, W]``) is refused naming its shape instead of flattened; ``[N, C]``,
``[N, 1, C]`` and ``[N, C, 1, 1]`` read as one row of classes, as before."""
from __future__ import annotations

import numpy as np
import pytest

from pytest_ascend_accuracy.dataset import check_dataset
from pytest_ascend_accuracy.dataset.check import run_dataset_check
from pytest_ascend_accuracy.dataset.result import DatasetFailure
from pytest_ascend_accuracy.errors import ConfigError

# fp16 rounds 5.0001 and 5.0003 to 5.0: per position the top-1 stays [1 2 3], the argmax over
# the flattened 12 values moves from 11 to 1
SAME_TOP1 = np.array([[[1, 5.0001, 1, 1], [1, 1, 2, 1], [1, 1, 1, 5.0003]]], np.float32)
# fp16 rounds 2.0005 to 2.0: position 1's top-1 moves from 2 to 1 (the flattened argmax, 1,
# does not move)
FLIPPED_POS1 = np.array([[[1, 9, 1, 1], [1, 2.0, 2.0005, 1], [1, 1, 1, 5]]], np.float32)


def mul_model(shape, name="seq"):
    """y = x * 1.0, one node ``seq.scale``, x and y of ``shape``."""
    from onnx import helper, numpy_helper

    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    graph = helper.make_graph([helper.make_node("Mul", ["x", "one"], ["y"], name="seq.scale")],
                              name, [helper.make_tensor_value_info("x", 1, list(shape))],
                              [helper.make_tensor_value_info("y", 1, list(shape))], [one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_same_top1_at_every_position_agrees(device):
    result = check_dataset(device(mul_model([1, 3, 4])), [{"x": SAME_TOP1}], metric="agreement",
                           max_drop=0.0)
    assert (result.reference, result.device, result.flipped) == (1.0, 1.0, ())
    assert "flipped top-1: none (a sample flips when any of its 3 positions does, 0 of 3 " \
           "positions flipped)" in result.message()


def test_one_flipped_position_flips_the_sample(device):
    with pytest.raises(DatasetFailure) as info:
        check_dataset(device(mul_model([1, 3, 4])), [{"x": FLIPPED_POS1}], metric="agreement",
                      max_drop=0.0)
    result = info.value.dataset
    assert (result.device, result.flipped, result.flipped_positions) == (0.0, ("0",), 1)
    assert "flipped top-1 (1 of 1; a sample flips when any of its 3 positions does, 1 of 3 " \
           "positions flipped): 0" in str(info.value)
    assert result.properties()["dataset_flipped_positions"] == "1"


def test_a_batched_sequence_names_the_flipped_row(device):
    x = np.concatenate([SAME_TOP1, FLIPPED_POS1])
    result, _, _ = run_dataset_check(device(mul_model([2, 3, 4])), [{"x": x}],
                                     metric="agreement", max_drop=0.0, trace=False)
    assert (result.rows, result.device, result.flipped) == (2, 0.5, ("0[1]",))
    assert "flipped top-1 (1 of 2; a row flips when any of its 3 positions does, 1 of 6 " \
           "positions flipped): 0[1]" in result.message()


@pytest.mark.parametrize("metric", ["top1", "top5"])
def test_topk_with_labels_refuses_a_sequence_output_naming_its_shape(device, metric):
    x = np.tile(SAME_TOP1, (1, 1, 2))  # 8 classes: top5 has enough
    with pytest.raises(ConfigError) as info:
        check_dataset(device(mul_model([1, 3, 8])), [{"x": x}], metric=metric, labels=[1])
    assert f"metric {metric} scores one label per row, but output 'y' of shape [1, 3, 8] is a " \
           "sequence: 3 positions of 8 classes per row; use metric='agreement'" in str(info.value)


@pytest.mark.parametrize("metric,labels", [("agreement", None), ("top1", [0])])
@pytest.mark.parametrize("shape", [[1, 2, 3, 4], [1, 3, 2, 1, 4]])
def test_an_output_of_no_single_class_axis_is_refused_naming_its_shape(device, metric, labels,
                                                                       shape):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    with pytest.raises(ConfigError) as info:
        check_dataset(device(mul_model(shape)), [{"x": x}], metric=metric, labels=labels)
    spelled = "[" + ", ".join(map(str, shape)) + "]"
    assert f"metric {metric} reads output 'y' as class scores, [N, C] (one row per batch " \
           f"entry) or [N, T, C] (T positions of C classes, class axis last), but its shape is " \
           f"{spelled}: no single class axis" in str(info.value)


def test_a_callable_metric_on_a_segmentation_map_runs_with_its_flips_untracked(device):
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    result, _, _ = run_dataset_check(device(mul_model([1, 2, 3, 4])), [{"x": x}],
                                     metric=lambda outputs, labels: 0.5, max_drop=0.0)
    assert result.passed and result.flipped == ()
    assert "flipped top-1: not tracked (output 'y' of shape [1, 2, 3, 4] has no single class " \
           "axis)" in result.message()


@pytest.mark.parametrize("shape", [[1, 4], [1, 1, 4], [1, 4, 1, 1], [4]])
@pytest.mark.parametrize("metric", ["top1", "agreement"])
def test_one_row_of_classes_still_reads_through_size_one_axes(device, shape, metric):
    x = np.array([1, 1, 3, 1], np.float32).reshape(shape)
    labels = [2] if metric == "top1" else None
    result = check_dataset(device(mul_model(shape)), [{"x": x}], metric=metric, labels=labels,
                           max_drop=0.0)
    assert (result.rows, result.reference, result.device, result.positions) == (1, 1.0, 1.0, 1)


@pytest.mark.parametrize("shape,layout", [
    ((8,), (1, 1, 8)), ((2, 8), (2, 1, 8)), ((2, 1, 8), (2, 1, 8)), ((2, 8, 1, 1), (2, 1, 8)),
    ((1, 40, 6625), (1, 40, 6625)), ((2, 8, 1), (2, 1, 8)), ((1, 19, 64, 64), None),
    ((1, 1, 40, 6625), None)])
def test_score_layout(shape, layout):
    from pytest_ascend_accuracy.dataset.scoring import score_layout

    assert score_layout(shape) == layout


def test_samples_of_different_sequence_lengths_count_their_own_positions():
    """A text recognizer's samples of several widths (a dynamic ``T``): the positions are
    counted sample by sample, never the last sample's T times the samples (a trial's check
    over widths 8 to 40 said '136 of 48 positions flipped')."""
    from pytest_ascend_accuracy.dataset.result import DatasetResult
    from pytest_ascend_accuracy.dataset.samples import Sample
    from pytest_ascend_accuracy.dataset.scoring import RowFlips

    flips = RowFlips("y")
    long_ = np.concatenate([SAME_TOP1, FLIPPED_POS1], axis=1)  # T = 6, 1 position flips
    short = FLIPPED_POS1[:, :2]  # T = 2, 1 position flips
    for k, ref in enumerate((long_, short)):
        flips.add(Sample(str(k), k, {}), {"y": ref}, {"y": ref.astype(np.float16)})
    result = DatasetResult(metric="agreement", reference=1.0, device=0.0, max_drop=0.0,
                           samples=2, rows=flips.rows, flipped=tuple(flips.flipped),
                           positions=flips.positions, positions_min=flips.positions_min,
                           positions_total=flips.positions_total,
                           flipped_positions=flips.flipped_positions, output="y")
    assert (result.flipped, result.flipped_positions) == (("0", "1"), 2)
    assert "flipped top-1 (2 of 2; a sample flips when any of its 2 to 6 positions does, 2 " \
           "of 8 positions flipped): 0, 1" in result.message()
    assert result.properties()["dataset_positions"] == "2-6"


def test_check_dataset_counts_each_samples_own_positions(pytester):
    """The wiring of the count above through check_dataset (review: the unit test built the
    result by hand): a recognizer with a dynamic T, converted per sample by ``ascend_model``,
    over samples of 3 and 2 positions."""
    import onnx

    onnx.save(mul_model(["N", "T", 4]), str(pytester.path / "seq.onnx"))
    np.save(pytester.path / "a.npy", FLIPPED_POS1)
    np.save(pytester.path / "b.npy", SAME_TOP1[:, :2])
    pytester.makepyfile(test_ds="""
import numpy as np


def test_ds(ascend_model, check_dataset):
    samples = [{"x": np.load("a.npy")}, {"x": np.load("b.npy")}]
    check_dataset(ascend_model("seq.onnx"), samples, metric="agreement", max_drop=0.0)
""")
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=out.xml")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*(1 of 2; a sample flips when any of its 2 to 3 positions "
                                 "does, 1 of 5 positions flipped)*"])
    assert 'name="dataset_positions" value="2-3"' in (pytester.path / "out.xml").read_text()

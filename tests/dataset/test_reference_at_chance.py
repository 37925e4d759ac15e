"""A top-k reference no device could fail against is refused, as map's is (audit H104).

Labels in another class numbering or order score the onnxruntime fp32 reference at or below
chance (k of C classes): every device passed, a dead one (all NaN) included, and a failure
over them meant nothing. A ``max_drop`` at or over the reference figure, and an ArgMax output's
labels past its classes, let any device through the same way."""
from __future__ import annotations

import re

import numpy as np
import pytest

from pytest_ascend_accuracy.dataset import DatasetFailure, check_dataset, run_dataset_check
from pytest_ascend_accuracy.errors import ConfigError

C, N = 10, 50


class _Om:
    """A model under test whose outputs are ``device(x)`` (no dumps: nothing is traced)."""

    def __init__(self, model, device):
        self.model, self.device, self.name, self.mode, self.input_shape = (model, device, "fake",
                                                                           "default", None)

    def outputs(self, inputs):
        return {"y": self.device(inputs["x"])}


def _model(tmp_path, argmax=False, classes=C):
    import onnx
    from onnx import helper

    op = (helper.make_node("ArgMax", ["x"], ["y"], axis=1, keepdims=0, name="am") if argmax
          else helper.make_node("Identity", ["x"], ["y"], name="ident"))
    out = (helper.make_tensor_value_info("y", 7, ["N"]) if argmax
           else helper.make_tensor_value_info("y", 1, ["N", classes]))
    graph = helper.make_graph([op], "m", [helper.make_tensor_value_info("x", 1, ["N", classes])],
                              [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    return path


def _data():
    rng = np.random.default_rng(0)
    samples, labels = [], []
    for _ in range(N):
        x = rng.normal(size=(1, C)).astype(np.float32)
        label = int(rng.integers(C))
        x[0, label] += 5
        samples.append({"x": x})
        labels.append(label)
    return samples, labels


def dead(x):
    return np.full(x.shape, np.nan, np.float32)


def test_labels_in_another_class_order_are_refused_not_passed(tmp_path):
    samples, labels = _data()
    shifted = [(label + 1) % C for label in labels]  # another class order
    with pytest.raises(ConfigError) as info:
        run_dataset_check(_Om(_model(tmp_path), dead), samples, labels=shifted, trace=False)
    assert info.value.where == "labels"
    assert (f"metric top1: the onnxruntime fp32 reference gets 0 of {N} rows right (0.0000), "
            f"below chance (1 in {C} classes: 0.1000), so no device could fail this "
            f"check") in str(info.value)
    assert "Check their class numbering" in str(info.value)
    # the right labels fail the dead device
    with pytest.raises(DatasetFailure):
        check_dataset(_Om(_model(tmp_path), dead), samples, labels=labels, trace=False)


def test_a_top5_reference_at_chance_is_refused(tmp_path):
    """Shifted labels left the reference 0.48 top5 of 10 classes (chance 0.5): its failure
    against a device of zeros was reported as an accuracy drop."""
    samples, labels = _data()
    shifted = [(label + 1) % C for label in labels]
    zeros = _Om(_model(tmp_path), lambda x: np.zeros(x.shape, np.float32))
    with pytest.raises(ConfigError, match=r"below chance \(5 in 10 classes: 0\.5000\), "
                                          r"so a device guessing classes at random would score "
                                          r"better: the labels likely do not match"):
        run_dataset_check(zeros, samples, metric="top5", labels=shifted, trace=False)


def test_a_max_drop_at_or_over_the_reference_is_refused_and_the_advice_applies(tmp_path):
    samples, labels = _data()
    om = _Om(_model(tmp_path), dead)
    with pytest.raises(ConfigError) as info:
        run_dataset_check(om, samples, labels=labels, max_drop=1.0, trace=False)
    assert info.value.where == "max_drop"
    below = re.search(r"give a max_drop below (\d\.\d+)$", str(info.value))
    assert below, str(info.value)
    with pytest.raises(DatasetFailure):  # max_drop below the figure named: the dead device fails
        check_dataset(om, samples, labels=labels, max_drop=float(below.group(1)) - 0.01,
                      trace=False)


def test_agreement_with_a_max_drop_of_one_is_refused(tmp_path):
    samples, _ = _data()
    with pytest.raises(ConfigError, match=r"metric agreement: the onnxruntime fp32 reference "
                                          r"scores 1\.0000 and max_drop is 1\.0000, so no device "
                                          r"could fail this check"):
        run_dataset_check(_Om(_model(tmp_path), dead), samples, metric="agreement",
                          max_drop=1.0, trace=False)


def test_an_argmax_output_bounds_its_labels_by_the_classes_it_picks_from(tmp_path):
    """Labels past the classes (1-based, another dataset's ids) were never checked for an
    output of class ids: the reference scored 0 and a device stuck on one class passed."""
    samples, labels = _data()
    stuck = _Om(_model(tmp_path, argmax=True), lambda x: np.full((x.shape[0],), 3, np.int64))
    with pytest.raises(ConfigError, match=r"label of sample '0' is 1\d\d, outside the 10 classes "
                                          r"of output 'y'"):
        run_dataset_check(stuck, samples, labels=[label + 100 for label in labels], trace=False)
    with pytest.raises(DatasetFailure):
        check_dataset(stuck, samples, labels=labels, trace=False)


def test_an_argmax_over_an_open_class_axis_with_no_row_right_is_refused(tmp_path):
    """Where the graph leaves the classes open, chance is unknown: no row right is the bound."""
    import onnx
    from onnx import helper

    graph = helper.make_graph([helper.make_node("ArgMax", ["x"], ["y"], axis=1, keepdims=0)],
                              "m", [helper.make_tensor_value_info("x", 1, ["N", "C"])],
                              [helper.make_tensor_value_info("y", 7, ["N"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "open.onnx"))
    samples, labels = _data()
    stuck = _Om(tmp_path / "open.onnx", lambda x: np.full((x.shape[0],), 3, np.int64))
    with pytest.raises(ConfigError, match=rf"gets 0 of {N} rows right \(0\.0000\), so no device "
                                          rf"could fail this check"):
        run_dataset_check(stuck, samples, labels=[(label + 1) % C for label in labels],
                          trace=False)


def test_a_reference_at_chance_exactly_is_judged_not_refused(tmp_path):
    """A 2-class model (PP-OCR's angle classifier has two) right on 2 of 4 samples, on its
    right labels, scores 0.5 = chance: an honest figure of a few samples, refused as "labels do
    not match" though max_drop 0.01 fails a dead device (H106)."""
    model = _model(tmp_path, classes=2)
    samples = [{"x": np.array([[a, b]], np.float32)} for a, b in
               ((2, 1), (1, 2), (2, 1), (1, 2))]
    labels = [0, 1, 1, 0]  # the first two right, the last two wrong: 0.5
    result = check_dataset(_Om(model, lambda x: x), samples, labels=labels, trace=False)
    assert result.reference == 0.5 and result.passed
    with pytest.raises(DatasetFailure):
        check_dataset(_Om(model, dead), samples, labels=labels, trace=False)


def test_top5_of_five_classes_is_refused_as_a_check_only_nan_can_fail(tmp_path):
    model = _model(tmp_path, classes=5)
    samples = [{"x": np.eye(5, dtype=np.float32)[[k]]} for k in range(5)]
    with pytest.raises(ConfigError, match=r"metric top5 of output 'y', which has 5 classes: "
                                          r"every label is among a row's top 5, so every device "
                                          r"whose outputs are finite scores 1 and only NaN rows "
                                          r"could fail; judge it by top1"):
        run_dataset_check(_Om(model, lambda x: x), samples, metric="top5",
                          labels=list(range(5)), trace=False)

"""A detector's head is no class-score tensor (audit 34: NudeNet's YOLOv8 ``output0`` [1, 22,
2100], boxes and Sigmoid scores joined along axis 1, failed ``agreement`` at 0.0000 against
1.0000 on 8 real photos whose detections were unchanged: the argmax over 2100 anchors of each
channel is which anchor holds the largest box x). The built-in class metrics refuse an output
joining scores with other values, naming the Concat; a callable still scores it, and a Concat
of scores alone (a recognizer's chunks) is scored as before."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper

from pytest_ascend_accuracy.dataset import run_dataset_check
from pytest_ascend_accuracy.dataset.joined_outputs import joined_outputs
from pytest_ascend_accuracy.errors import ConfigError


def _head(scores_op="Sigmoid", boxes_op="Mul"):
    """x [1, 6, 50] -> Concat(boxes_op(x[:, :4]), scores_op(x[:, 4:])) on axis 1: the layout of
    an Ultralytics head, 4 box values and 2 class scores for each of 50 anchors."""
    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
             (("s0", [0]), ("s4", [4]), ("s6", [6]), ("ax", [1]))]
    inits.append(numpy_helper.from_array(np.array(32.0, np.float32), "stride"))
    box_node = (helper.make_node("Mul", ["xb", "stride"], ["b"], name="boxes")
                if boxes_op == "Mul" else helper.make_node(boxes_op, ["xb"], ["b"], name="boxes"))
    nodes = [helper.make_node("Slice", ["x", "s0", "s4", "ax"], ["xb"], name="take_boxes"),
             helper.make_node("Slice", ["x", "s4", "s6", "ax"], ["xs"], name="take_scores"),
             box_node,
             helper.make_node(scores_op, ["xs"], ["c"], name="scores"),
             helper.make_node("Concat", ["b", "c"], ["out"], name="head", axis=1),
             helper.make_node("Identity", ["out"], ["output0"], name="named")]
    graph = helper.make_graph(nodes, "yolo_head",
                              [helper.make_tensor_value_info("x", 1, [1, 6, 50])],
                              [helper.make_tensor_value_info("output0", 1, [1, 6, 50])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _samples(n=3):
    rng = np.random.default_rng(0)
    return [{"x": rng.uniform(0, 10, (1, 6, 50)).astype(np.float32)} for _ in range(n)]


@pytest.mark.parametrize("metric", ["agreement", "top1"])
def test_a_detector_head_is_refused_by_the_class_metrics(device, metric):
    with pytest.raises(ConfigError) as info:
        run_dataset_check(device(_head()), _samples(), metric=metric,
                          labels=[0, 1, 2] if metric == "top1" else None)
    assert (f"metric {metric} reads output 'output0' as class scores, but the model makes it by "
            "joining values of several kinds (Concat 'head' of Sigmoid scores and Mul values): "
            "a detector's boxes beside its class scores") in str(info.value)
    assert "score a detector with the map metric and a postprocess function" in str(info.value)


def test_a_callable_still_scores_it(device):
    def boxes_right(outputs, labels):
        return 1.0

    result, _, _ = run_dataset_check(device(_head()), _samples(), metric=boxes_right)
    assert result.passed


def test_scores_or_values_alone_stay_score_tensors():
    assert joined_outputs(_head().graph) == {
        "output0": "Concat 'head' of Sigmoid scores and Mul values"}
    assert joined_outputs(_head(boxes_op="Softmax").graph) == {}  # chunks of scores
    assert joined_outputs(_head(scores_op="Relu").graph) == {}  # two heads' values


def _graph(nodes, out="y"):
    return helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [1, 4])],
                             [helper.make_tensor_value_info(out, 1, None)],
                             [numpy_helper.from_array(np.array(1.0, np.float32), "one")])


def test_a_binary_classifiers_one_minus_p_beside_p_stays_a_score_tensor():
    """A review: ``torch.cat([1 - p, p])`` (skl2onnx's binary exports too) was refused as a
    detector's head."""
    nodes = [helper.make_node("Sigmoid", ["x"], ["p"], name="sig"),
             helper.make_node("Sub", ["one", "p"], ["q"], name="not_p"),
             helper.make_node("Concat", ["q", "p"], ["y"], name="pair", axis=1)]
    assert joined_outputs(_graph(nodes)) == {}


def test_unnamed_nested_concats_are_each_read_and_a_long_chain_does_not_recurse():
    nodes = [helper.make_node("Mul", ["x", "one"], ["b"]),
             helper.make_node("Concat", ["b", "b"], ["c0"], axis=1)]
    for k in range(1, 1500):  # a review: RecursionError on every dataset check
        nodes.append(helper.make_node("Concat", [f"c{k - 1}", "b"], [f"c{k}"], axis=1))
    nodes += [helper.make_node("Sigmoid", ["x"], ["s"]),
              helper.make_node("Concat", ["c1499", "s"], ["y"], axis=1)]
    unnamed = {"y": "an unnamed Concat of Sigmoid scores and Mul values"}
    assert joined_outputs(_graph(nodes)) == unnamed
    inner = [helper.make_node("Sigmoid", ["x"], ["s"]),
             helper.make_node("Concat", ["s", "s"], ["c1"], axis=1),
             helper.make_node("Mul", ["x", "one"], ["b"]),
             helper.make_node("Concat", ["b", "b"], ["c2"], axis=1),  # unnamed, as c1's Concat
             helper.make_node("Concat", ["c1", "c2"], ["y"], axis=1)]
    assert joined_outputs(_graph(inner)) == unnamed


def test_a_box_computed_from_a_sigmoid_is_a_value_not_a_score():
    """A re-review: ``Concat(Mul(Sigmoid(t), 640), Softmax)`` (YOLOv5's boxes are sigmoids
    scaled by strides) was no longer refused once any op of a score counted as one."""
    nodes = [helper.make_node("Sigmoid", ["x"], ["p"], name="sig"),
             helper.make_node("Mul", ["p", "one"], ["b"], name="box"),
             helper.make_node("Softmax", ["x"], ["c"], name="cls"),
             helper.make_node("Concat", ["b", "c"], ["y"], name="head", axis=1)]
    assert joined_outputs(_graph(nodes)) == {
        "y": "Concat 'head' of Softmax scores and Mul values"}

"""metric="map" verdicts on a detector whose heads a fault makes wrong (needs the optional extra
``map``: pycocotools). The model passes [1, K, 6] rows (x1, y1, x2, y2, score, class) through a
box head, a score head and a class head, as an exported detector's [N, K, 6] output; the
figures are held to pycocotools run directly on the same boxes."""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from pytest_ascend_accuracy.dataset import DatasetFailure, check_dataset
from pytest_ascend_accuracy.errors import ConfigError

K = 12


@pytest.fixture(autouse=True)
def _coco_or_skip():
    from pytest_ascend_accuracy.dataset.detection import coco_classes

    try:
        coco_classes()
    except ConfigError as exc:
        pytest.skip(f"optional extra not installed: {exc.problem}")


def det6(path):
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    nodes, inits = [], [nh.from_array(np.array(1.0, np.float32), "one"),
                        nh.from_array(np.array([-1], np.int64), "axis")]
    for name, start, end, head in (("box", 0, 4, "box_head"), ("score", 4, 5, "score_head"),
                                   ("cls", 5, 6, "cls_head")):
        inits += [nh.from_array(np.array([start], np.int64), f"{name}_start"),
                  nh.from_array(np.array([end], np.int64), f"{name}_end")]
        nodes += [h.make_node("Slice", ["raw", f"{name}_start", f"{name}_end", "axis"],
                              [f"{name}_raw"], name=f"slice_{name}"),
                  h.make_node("Mul", [f"{name}_raw", "one"], [name], name=head)]
    nodes.append(h.make_node("Concat", ["box", "score", "cls"], ["det"], axis=-1, name="cat"))
    graph = h.make_graph(nodes, "det6", [h.make_tensor_value_info("raw", T.FLOAT, [1, K, 6])],
                         [h.make_tensor_value_info("det", T.FLOAT, [1, K, 6])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def postprocess(outputs):
    """[x1, y1, x2, y2, score, class] rows, padded with zeros, into COCO detections."""
    return [{"bbox": [float(r[0]), float(r[1]), float(r[2] - r[0]), float(r[3] - r[1])],
             "score": float(r[4]), "category_id": int(round(float(r[5])))}
            for r in outputs["det"][0] if r[4] > 0]


def detections(n=12, seed=0):
    """Samples of a 640x480 image: each ground-truth box found a few pixels off, plus false
    positives; labels are COCO [x, y, w, h] in pixels."""
    rng = np.random.default_rng(seed)
    samples, labels = [], []
    for _ in range(n):
        truth, rows = [], []
        for _ in range(rng.integers(1, 4)):
            w, h = rng.uniform(40, 200, 2)
            x, y, c = rng.uniform(0, 640 - w), rng.uniform(0, 480 - h), int(rng.integers(1, 4))
            truth.append({"bbox": [x, y, w, h], "category_id": c})
            j = rng.normal(0, 2, 4)
            rows.append([x + j[0], y + j[1], x + w + j[2], y + h + j[3],
                         rng.uniform(0.5, 0.95), c])
        for _ in range(rng.integers(1, 3)):
            w, h = rng.uniform(20, 150, 2)
            x, y = rng.uniform(0, 640 - w), rng.uniform(0, 480 - h)
            rows.append([x, y, x + w, y + h, rng.uniform(0.05, 0.6), int(rng.integers(1, 4))])
        raw = np.zeros((1, K, 6), np.float32)
        raw[0, :len(rows)] = rows
        samples.append({"raw": raw})
        labels.append(truth)
    return samples, labels


def pycocotools_map(found, labels):
    """AP@[.50:.95] of pycocotools itself on per-image detections."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    boxes = [(i + 1, g) for i, truth in enumerate(labels) for g in truth]
    anns = [{"id": k + 1, "image_id": i, "bbox": g["bbox"], "iscrowd": 0,
             "category_id": g["category_id"], "area": g["bbox"][2] * g["bbox"][3]}
            for k, (i, g) in enumerate(boxes)]
    res = [dict(d, image_id=i + 1) for i, dets in enumerate(found) for d in dets]
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = {"images": [{"id": i + 1} for i in range(len(labels))], "annotations": anns,
                      "categories": [{"id": c} for c in (1, 2, 3)]}
        gt.createIndex()
        ev = COCOeval(gt, gt.loadRes(res), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return float(ev.stats[0])


def faulty(cache, model, *faults):
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.dataset import load_device_model

    return load_device_model(EmulatorBackend(cache, faults=list(faults)), model)


def test_a_correct_float16_device_passes_with_no_detection_changed(tmp_path, cache):
    model = det6(tmp_path / "det6.onnx")
    samples, labels = detections()
    om = faulty(cache, model)
    result = check_dataset(om, samples, metric="map", labels=labels, postprocess=postprocess,
                           cache=cache)
    assert result.passed and result.flipped == ()
    assert result.device == pytest.approx(
        pycocotools_map([postprocess(om.outputs(s)) for s in samples], labels), abs=1e-12)
    assert "detections changed: none" in result.message()


def test_nan_boxes_on_the_device_fail_and_name_the_box_head(tmp_path, cache):
    from pytest_ascend_accuracy.backends.emulator.faults import Fault

    model = det6(tmp_path / "det6.onnx")
    samples, labels = detections()
    om = faulty(cache, model, Fault.on_op("box_head", "nan"))
    found = [postprocess(om.outputs(s)) for s in samples]
    assert all(np.isnan(d["bbox"]).all() for dets in found for d in dets)
    reference = pycocotools_map([postprocess({"det": s["raw"]}) for s in samples], labels)
    # pycocotools scores the NaN boxes as matches (above the reference): taken as is, the
    # check passed a device whose boxes were all NaN
    assert pycocotools_map(found, labels) > reference
    with pytest.raises(DatasetFailure) as info:
        check_dataset(om, samples, metric="map", labels=labels, postprocess=postprocess,
                      cache=cache)
    result = info.value.dataset
    assert result.device == 0.0 and result.reference == pytest.approx(reference, abs=1e-12)
    assert len(result.flipped) == len(samples) and result.culprit.op == "box_head"
    assert "NaN/Inf in the device outputs (a detection holding NaN/Inf matches nothing)" \
        in str(info.value)


def test_boxes_moved_by_three_pixels_fail_naming_the_samples(tmp_path, cache):
    from pytest_ascend_accuracy.backends.emulator.faults import Fault

    model = det6(tmp_path / "det6.onnx")
    samples, labels = detections()
    om = faulty(cache, model, Fault.on_op("box_head", "offset", 3.0))
    with pytest.raises(DatasetFailure) as info:
        check_dataset(om, samples, metric="map", labels=labels, postprocess=postprocess,
                      cache=cache)
    result = info.value.dataset
    assert result.device == pytest.approx(
        pycocotools_map([postprocess(om.outputs(s)) for s in samples], labels), abs=1e-12)
    assert result.reference - result.device > 0.05
    # the top detection of every sample still overlaps its reference at IoU > 0.5: only the
    # strict IoU thresholds lose the boxes, and the samples were named none
    assert len(result.flipped) >= len(samples) // 2, str(info.value)
    assert result.culprit is not None and result.culprit.sample == result.flipped[0]
    assert "no sample's" not in str(info.value)


def _normalized(labels):
    return [[dict(g, bbox=[g["bbox"][0] / 640, g["bbox"][1] / 480, g["bbox"][2] / 640,
                           g["bbox"][3] / 480]) for g in truth] for truth in labels]


def _corners(labels):
    return [[dict(g, bbox=[g["bbox"][0], g["bbox"][1], g["bbox"][0] + g["bbox"][2],
                           g["bbox"][1] + g["bbox"][3]]) for g in truth] for truth in labels]


@pytest.mark.parametrize("case,said", [
    ("normalized", "the labels' boxes reach x+w 0."),
    ("corners", "its 47 detections match almost none of the labels' 30 boxes"),
    ("no boxes", "the labels hold no ground-truth boxes"),
    ("no detections", "returned no reference detection"),
])
def test_a_reference_map_within_max_drop_of_0_is_refused(tmp_path, cache, case, said):
    """Labels another convention than the detections' (normalized against pixels, corners
    against [x, y, w, h]), or nothing to match: the reference scored ~0 and any device passed,
    one whose classes were all wrong too."""
    from pytest_ascend_accuracy.backends.emulator.faults import Fault

    model = det6(tmp_path / "det6.onnx")
    samples, labels = detections()
    post = postprocess if case != "no detections" else (lambda outputs: [])
    if case == "normalized":
        wrong = _normalized(labels)
    elif case == "corners":
        wrong = _corners(labels)
    elif case == "no boxes":
        wrong = [[] for _ in labels]
    else:
        wrong = labels
    om = faulty(cache, model, Fault.on_op("cls_head", "offset", 1.0))
    with pytest.raises(ConfigError) as info:
        check_dataset(om, samples, metric="map", labels=wrong, postprocess=post, cache=cache)
    text = str(info.value)
    assert "so no device could fail this check" in text and said in text, text
    assert "bbox [x, y, w, h] (top-left corner, width, height; not [x1, y1, x2, y2])" in text
    # the advice applied (labels in the detections' [x, y, w, h] pixels): the wrong classes fail
    with pytest.raises(DatasetFailure):
        check_dataset(om, samples, metric="map", labels=labels, postprocess=postprocess,
                      cache=cache)


def test_a_detection_row_that_is_no_dict_is_refused(tmp_path, cache):
    model = det6(tmp_path / "det6.onnx")
    samples, labels = detections(2)
    with pytest.raises(ConfigError, match="a detection must be a dict with bbox"):
        check_dataset(faulty(cache, model), samples, metric="map", labels=labels,
                      postprocess=lambda outputs: outputs["det"][0], cache=cache)


def test_a_reference_detection_holding_nan_is_an_error(tmp_path, cache):
    model = det6(tmp_path / "det6.onnx")
    samples, labels = detections(3)
    samples[1]["raw"][0, 0, 2] = np.nan
    with pytest.raises(ConfigError, match=r"reference's detection .* of sample '1' holds NaN"):
        check_dataset(faulty(cache, model), samples, metric="map", labels=labels,
                      postprocess=postprocess, cache=cache)


def test_a_max_drop_as_large_as_the_reference_is_named_not_the_conventions(tmp_path, cache):
    """A reference mAP of 0.88 with max_drop=0.9 was refused as a convention mismatch ("its
    detections match almost none of the labels' boxes"), though they matched well (review)."""
    model = det6(tmp_path / "det6.onnx")
    samples, labels = detections()
    om = faulty(cache, model)
    with pytest.raises(ConfigError) as info:
        check_dataset(om, samples, metric="map", labels=labels, postprocess=postprocess,
                      cache=cache, max_drop=0.9)
    text = str(info.value)
    assert "max_drop is 0.9000, so no device could fail this check" in text, text
    assert "match almost none" not in text
    below = float(text.rsplit("give a max_drop below ", 1)[1])
    result = check_dataset(om, samples, metric="map", labels=labels, postprocess=postprocess,
                           cache=cache, max_drop=below / 2)
    assert result.passed

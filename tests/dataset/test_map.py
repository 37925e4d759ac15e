"""metric="map" on a tiny detector (needs the optional extra ``map``: pycocotools)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pytest_ascend_accuracy.dataset import DatasetFailure, check_dataset
from pytest_ascend_accuracy.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _coco_or_skip():
    from pytest_ascend_accuracy.dataset.detection import coco_classes

    try:
        coco_classes()
    except ConfigError as exc:
        pytest.skip(f"optional extra not installed: {exc.problem}")


def tiny_detector(tmp_path):
    """det = x * 256 * 256 / 65536: one detection [x, y, w, h, score, class/10] per sample;
    an input of 0.9999 overflows float16 in ``amplify2``."""
    import onnx
    from onnx import helper, numpy_helper

    inits = [numpy_helper.from_array(np.array(256.0, np.float32), "k256"),
             numpy_helper.from_array(np.array(1 / 65536, np.float32), "k_inv")]
    nodes = [helper.make_node("Mul", ["x", "k256"], ["a1"], name="amplify1"),
             helper.make_node("Mul", ["a1", "k256"], ["a2"], name="amplify2"),
             helper.make_node("Mul", ["a2", "k_inv"], ["det"], name="rescale")]
    graph = helper.make_graph(nodes, "tiny_detector",
                              [helper.make_tensor_value_info("x", 1, [1, 6])],
                              [helper.make_tensor_value_info("det", 1, [1, 6])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "tiny_detector.onnx"
    onnx.save(model, str(path))
    return path


def postprocess(outputs):
    d = outputs["det"][0]
    return [{"bbox": [float(v) * 100 for v in d[:4]], "score": float(d[4]),
             "category_id": int(round(float(d[5]) * 10))}]


def detection_samples(n=10, spiked=(2, 7)):
    rng = np.random.default_rng(3)
    samples, labels = [], []
    for i in range(n):
        x = np.empty((1, 6), np.float32)
        x[0, :2] = rng.random(2) * 0.4
        x[0, 2:4] = 0.2 + rng.random(2) * 0.3
        x[0, 4] = 0.5 + rng.random() * 0.4
        x[0, 5] = rng.integers(1, 4) / 10
        if i in spiked:
            x[0, 2] = 0.9999  # a wide box: its width overflows float16 on the device
        labels.append([{"bbox": [float(v) * 100 for v in x[0, :4]],
                        "category_id": int(round(x[0, 5] * 10))}])
        samples.append({"x": x})
    return samples, labels


def test_map_fails_in_fp16_and_passes_in_high_precision(device, tmp_path, cache):
    _coco_or_skip()
    model = tiny_detector(tmp_path)
    samples, labels = detection_samples()
    with pytest.raises(DatasetFailure) as info:
        check_dataset(device(model), samples, metric="map", labels=labels, postprocess=postprocess,
                      cache=cache)
    result = info.value.dataset
    assert result.metric == "map" and result.device < result.reference
    assert result.flipped == ("2", "7") and result.nonfinite == ("2", "7")
    assert result.culprit.op == "amplify2"
    assert "first flipped sample 2: first operator below the threshold: amplify2" in str(info.value)
    passed = check_dataset(device(model, "high_precision"), samples, metric="map", labels=labels,
                           postprocess=postprocess, cache=cache)
    assert passed.passed and passed.device == passed.reference > 0.5


def test_map_needs_postprocess_and_labels(device, tmp_path):
    _coco_or_skip()
    om = device(tiny_detector(tmp_path), "high_precision")
    samples, labels = detection_samples(2, spiked=())
    with pytest.raises(ConfigError, match="needs postprocess"):
        check_dataset(om, samples, metric="map", labels=labels)
    with pytest.raises(ConfigError, match="COCO-style labels"):
        check_dataset(om, samples, metric="map", postprocess=postprocess)
    with pytest.raises(ConfigError, match="a detection must be a dict"):
        check_dataset(om, samples, metric="map", labels=labels, postprocess=lambda o: [[1, 2]])


def test_without_the_extra_map_says_how_to_install_it(monkeypatch):
    import sys

    from pytest_ascend_accuracy.dataset.detection import coco_classes

    for name in ("pycocotools", "pycocotools.coco", "pycocotools.cocoeval", "faster_coco_eval"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    with pytest.raises(ConfigError) as info:
        coco_classes()
    # what it names installs without this package on an index (it is installed from a checkout)
    assert 'pip install "pycocotools>=2.0.6"' in str(info.value)
    assert "pycocotools>=2.0.6" in (ROOT / "pyproject.toml").read_text()  # the extra's own pin

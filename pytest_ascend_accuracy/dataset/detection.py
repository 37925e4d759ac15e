"""Detection mAP of the device against the reference, computed by a well-kept COCO evaluator.

``metric="map"`` needs the optional extra ``map`` (``pip install "pytest-ascend-accuracy[map]"``,
which brings pycocotools; faster-coco-eval is used when it is installed instead) and a
``postprocess(outputs) -> detections`` callable turning one sample's output dict into COCO
result dicts ``{"bbox": [x, y, w, h], "score": s, "category_id": c}``. Labels are COCO-style
ground truth per sample: a list of ``{"bbox": [x, y, w, h], "category_id": c}`` (``iscrowd``
and ``area`` optional). The figure is COCO's AP averaged over IoU 0.50:0.95 (``stats[0]``).

A sample counts as flipped when its highest-scoring detection changed: another category, a
detection on one side only, or boxes overlapping less than IoU 0.5.
"""
from __future__ import annotations

import contextlib
import io
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from ..errors import ConfigError
from .samples import Labels, Sample
from .scoring import callable_label, raised

INSTALL_HINT = ('metric "map" needs pycocotools or faster-coco-eval: '
                'pip install "pytest-ascend-accuracy[map]"')


def coco_classes():
    """(COCO, COCOeval) from pycocotools, else faster-coco-eval; ConfigError when neither."""
    try:
        from pycocotools.coco import COCO
        from pycocotools.cocoeval import COCOeval
        return COCO, COCOeval
    except ImportError:
        pass
    try:
        from faster_coco_eval import COCO, COCOeval_faster
        return COCO, COCOeval_faster
    except ImportError:
        raise ConfigError("metric", INSTALL_HINT) from None


def _detections(postprocess: Callable, outputs, sample: Sample, side: str) -> List[dict]:
    try:
        dets = list(postprocess(outputs))
    except ConfigError:
        raise
    except Exception as exc:
        name = callable_label(postprocess)
        raise ConfigError("postprocess", f"{name} failed on the {side} outputs of sample "
                                         f"{sample.id!r}: {raised(exc)}") from exc
    out = []
    for d in dets:
        try:
            box = [float(v) for v in d["bbox"]]
            out.append({"bbox": box, "score": float(d["score"]),
                        "category_id": int(d["category_id"])})
        except (KeyError, TypeError, ValueError):
            raise ConfigError("postprocess", f"sample {sample.id!r}: a detection must be a dict "
                                             f"with bbox [x, y, w, h], score and category_id, got "
                                             f"{d!r}") from None
        if len(box) != 4:
            raise ConfigError("postprocess",
                              f"sample {sample.id!r}: bbox {box} is not [x, y, w, h]")
    return out


def _iou(a, b) -> float:
    ax2, ay2, bx2, by2 = a[0] + a[2], a[1] + a[3], b[0] + b[2], b[1] + b[3]
    w = max(0.0, min(ax2, bx2) - max(a[0], b[0]))
    h = max(0.0, min(ay2, by2) - max(a[1], b[1]))
    inter = w * h
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def _top_changed(ref: List[dict], dev: List[dict]) -> bool:
    if not ref or not dev:
        return bool(ref) != bool(dev)
    r = max(ref, key=lambda d: d["score"])
    d = max(dev, key=lambda d: d["score"])
    return r["category_id"] != d["category_id"] or _iou(r["bbox"], d["bbox"]) < 0.5


class MeanAP:
    """COCO mAP of each side's detections against the labels; keeps detections, not outputs."""

    def __init__(self, postprocess: Optional[Callable], labels: Labels):
        if postprocess is None:
            raise ConfigError("postprocess", 'metric "map" needs postprocess(outputs) -> [{"bbox": '
                                             '[x, y, w, h], "score": s, "category_id": c}]')
        if not labels.given:
            raise ConfigError("labels", 'metric "map" needs COCO-style labels per sample: '
                                        '[{"bbox": [x, y, w, h], "category_id": c}, ...]')
        self.coco = coco_classes()
        self.postprocess = postprocess
        self.labels = labels
        self.images: List[dict] = []
        self.truth: List[dict] = []
        self.found: Tuple[List[dict], List[dict]] = ([], [])
        self.flipped: List[str] = []
        self.nonfinite: List[str] = []

    def add(self, sample: Sample, ref: Dict[str, np.ndarray], dev: Dict[str, np.ndarray]) -> bool:
        image = len(self.images) + 1
        self.images.append({"id": image, "file_name": sample.id})
        boxes = self.labels.raw(sample)
        if boxes is not None and not isinstance(boxes, (list, tuple)):
            raise ConfigError(self.labels.where, f"label of sample {sample.id!r}: expected its "
                                                 f'ground-truth boxes [{{"bbox": [x, y, w, h], '
                                                 f'"category_id": c}}, ...], got {boxes!r}')
        for box in boxes or ():
            try:
                bbox = [float(v) for v in box["bbox"]]
                ann = {"id": len(self.truth) + 1, "image_id": image, "bbox": bbox,
                       "category_id": int(box["category_id"]),
                       "iscrowd": int(box.get("iscrowd", 0)),
                       "area": float(box.get("area", bbox[2] * bbox[3]))}
            except (KeyError, TypeError, ValueError, IndexError, AttributeError):
                raise ConfigError(self.labels.where, f"label of sample {sample.id!r}: expected "
                                                     f'{{"bbox": [x, y, w, h], "category_id": c}}, '
                                                     f"got {box!r}") from None
            self.truth.append(ann)
        sides = []
        for k, (side, outputs) in enumerate((("reference", ref), ("device", dev))):
            dets = _detections(self.postprocess, outputs, sample, side)
            for d in dets:
                self.found[k].append(dict(d, image_id=image))
            sides.append(dets)
        if not all(np.isfinite(v).all() for v in dev.values()):
            self.nonfinite.append(sample.id)
        flipped = _top_changed(sides[0], sides[1]) or sample.id in self.nonfinite[-1:]
        if flipped:
            self.flipped.append(sample.id)
        return flipped

    def values(self) -> Tuple[float, float]:
        if not self.images:
            raise ConfigError("samples", "no samples")
        return self._map(self.found[0]), self._map(self.found[1])

    def _map(self, found: List[dict]) -> float:
        if not found or not self.truth:
            return 0.0
        COCO, COCOeval = self.coco
        cats = sorted({a["category_id"] for a in self.truth} | {d["category_id"] for d in found})
        with contextlib.redirect_stdout(io.StringIO()):  # both libraries print progress
            gt = COCO()
            gt.dataset = {"images": list(self.images), "annotations": list(self.truth),
                          "categories": [{"id": c, "name": str(c)} for c in cats]}
            gt.createIndex()
            dt = gt.loadRes([dict(d) for d in found])
            ev = COCOeval(gt, dt, "bbox")
            ev.evaluate()
            ev.accumulate()
            ev.summarize()
        value = float(ev.stats[0])
        return max(value, 0.0)  # COCO writes -1 when no ground truth matched the area range

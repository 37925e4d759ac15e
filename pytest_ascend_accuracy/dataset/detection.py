"""Detection mAP of the device against the reference, computed by a well-kept COCO evaluator.

``metric="map"`` needs the optional extra ``map`` (pycocotools: ``pip install
"pycocotools>=2.0.6"``, or ``".[map]"`` from a checkout; faster-coco-eval is used when it is
installed instead) and a ``postprocess(outputs) -> detections`` callable turning one sample's
output dict into COCO result dicts ``{"bbox": [x, y, w, h], "score": s, "category_id": c}``.
Labels are COCO-style ground truth per sample: a list of ``{"bbox": [x, y, w, h],
"category_id": c}`` (``iscrowd`` and ``area`` optional). The figure is COCO's AP averaged over
IoU 0.50:0.95 (``stats[0]``).

A sample counts as changed (flipped) when its highest-scoring detection changed (another
category, a detection on one side only, boxes overlapping less than IoU 0.5) or when a
ground-truth box the reference's detections match at one of COCO's IoU thresholds 0.50:0.95 is
matched by none of the device's there while they match fewer boxes of its category
(``_matches``, ``_lost``: a detection whose match moved to another box changes no box; boxes
moved by a few pixels keep the top detection but lose the strict thresholds, and the mAP with
them), and the reference's outputs
rounded to float16 change as much (``_in_float16``): a box whose IoU sits on a threshold crossed
it in float16 alone, and a correct float16 device counted one or two samples of 12 as changed in
14 of 40 seeded sets (tests/dataset/test_map_verdicts.py). Boxes, not counts per threshold: one
box crossing 0.95 in float16 alone hid another box the device really moved (IoU 0.999 -> 0.939),
as both sides then matched one box fewer there. A failing check where no sample changed so is
traced on the sample whose detection scores moved most (``MeanAP.moved``): mAP ranks the
detections of all samples by score, so scores moved differently per sample lower it with every
box and top detection in place (a trial: 0.8766 -> 0.7910, "no sample's detections changed, so
no operator was traced"). A detection whose bbox or score holds NaN/Inf
matches nothing: on the device it is dropped (pycocotools scores a NaN box as a match, which
passed a device whose boxes were all NaN), in the reference it is an error. A reference figure
within ``max_drop`` of 0 is refused (``vacuous_reference``): no device could fail against it.
Near 0 it is what a convention mismatch gives (labels in [x1, y1, x2, y2], normalized against
pixel detections, no ground-truth boxes, no detections), and the error says so; above, the
``max_drop`` given is as large as the reference figure, and the error says that.
"""
from __future__ import annotations

import contextlib
import io
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from ..errors import ConfigError
from .samples import Labels, Sample
from .scoring import callable_label, raised

INSTALL_HINT = ('metric "map" needs pycocotools or faster-coco-eval: pip install '
                '"pycocotools>=2.0.6" (the extra map of this package, ".[map]" from a checkout)')


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
            finite = _finite(d["category_id"])  # a NaN class output's id is no category
            found = {"bbox": box, "score": float(d["score"]),
                     "category_id": int(d["category_id"]) if finite else -1}
        except (KeyError, TypeError, ValueError, IndexError):
            raise ConfigError("postprocess", f"sample {sample.id!r}: a detection must be a dict "
                                             f"with bbox [x, y, w, h], score and category_id, got "
                                             f"{d!r}") from None
        if len(box) != 4:
            raise ConfigError("postprocess",
                              f"sample {sample.id!r}: bbox {box} is not [x, y, w, h]")
        if not finite or not all(np.isfinite(box + [found["score"]])):
            if side == "reference":
                raise ConfigError("reference", f"the onnxruntime fp32 reference's detection "
                                               f"{d!r} of sample {sample.id!r} holds NaN/Inf: "
                                               f"there is no reference figure to hold the "
                                               f"device to; check this sample and "
                                               f"{callable_label(postprocess)}")
            continue  # a NaN box matches nothing: the device's detection is lost
        out.append(found)
    return out


def _finite(value) -> bool:
    """False for a NaN/Inf number (a category id a NaN class output gave)."""
    try:
        return bool(np.isfinite(float(value)))
    except (TypeError, ValueError):
        return True  # not a number: int() says what is wrong with it


def _iou(a, b) -> float:
    ax2, ay2, bx2, by2 = a[0] + a[2], a[1] + a[3], b[0] + b[2], b[1] + b[3]
    w = max(0.0, min(ax2, bx2) - max(a[0], b[0]))
    h = max(0.0, min(ay2, by2) - max(a[1], b[1]))
    inter = w * h
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


#: COCO's IoU thresholds of AP@[.50:.95]
IOUS = np.linspace(0.5, 0.95, 10)
#: COCO's maxDets for that figure: detections per image and category kept, highest scores first
MAX_DETS = 100


def _matches(dets: List[dict], truth: List[dict]) -> np.ndarray:
    """Which of the ``truth`` boxes are matched at each of ``IOUS`` (a bool array, one row per
    threshold), as COCO's evaluateImg matches them: per category, detections by descending
    score (its first ``MAX_DETS``) each take the best-overlapping unmatched non-crowd box at
    IoU >= t."""
    matched = np.zeros((len(IOUS), len(truth)), bool)
    for cat in {g["category_id"] for g in truth if not g.get("iscrowd")}:
        index = [i for i, g in enumerate(truth)
                 if g["category_id"] == cat and not g.get("iscrowd")]
        gts = [truth[i]["bbox"] for i in index]
        mine = sorted((d for d in dets if d["category_id"] == cat), key=lambda d: -d["score"])
        ious = np.array([[_iou(d["bbox"], g) for g in gts] for d in mine[:MAX_DETS]])
        for k, t in enumerate(IOUS):
            taken = np.zeros(len(gts), bool)
            for row in ious:
                best = np.where(taken | (row < min(t, 1 - 1e-10)), -1.0, row)
                if best.size and best.max() >= 0:
                    taken[int(best.argmax())] = True
            matched[k, index] = taken
    return matched


def _lost(ref: List[dict], dev: List[dict], truth: List[dict]) -> np.ndarray:
    """Which of the ``truth`` boxes the device lost at each of ``IOUS``: the reference's
    detections match it (``_matches``), the device's do not, and the device matches fewer boxes
    of its category there than the reference. A detection between two boxes matching the other
    one on the device moves a match, not a box (a review: counted as changed, the mAP the same);
    one that covers a lost box but is another box's match hides nothing (a second review)."""
    matched, kept = _matches(ref, truth), _matches(dev, truth)
    lost = matched & ~kept
    category = np.array([g["category_id"] for g in truth], dtype=object)
    for cat in set(category.tolist()):
        of = category == cat
        fewer = kept[:, of].sum(axis=1) < matched[:, of].sum(axis=1)  # one per threshold
        lost[:, of] &= fewer[:, None]
    return lost


def _in_float16(outputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """``outputs`` with every float array rounded to float16 (what a float16 output holds)."""
    with np.errstate(over="ignore"):
        return {k: v.astype(np.float16).astype(v.dtype) if v.dtype.kind == "f" else v
                for k, v in outputs.items()}


def _score_moved(ref: List[dict], dev: List[dict]) -> Tuple[float, float, float]:
    """(how far, reference score, device score) of the detection whose score moved most,
    relative to the reference's (a score 0.2 -> 0.05 moved more than 0.9 -> 0.7: the factor is
    what the trace's scale guard sees): each reference detection against the device's of its
    category overlapping it most (IoU >= 0.5); within twice float16's spacing is no move."""
    best = (0.0, 0.0, 0.0)
    for r in ref:
        mates = [(_iou(r["bbox"], d["bbox"]), d) for d in dev
                 if d["category_id"] == r["category_id"]]
        iou, d = max(mates, key=lambda m: m[0], default=(0.0, None))
        if d is None or iou < 0.5:
            continue
        moved = abs(d["score"] - r["score"])
        if moved <= 2 * float(np.spacing(np.float16(r["score"]))):
            continue
        moved /= max(abs(r["score"]), abs(d["score"]), 1e-12)
        if moved > best[0]:
            best = (moved, r["score"], d["score"])
    return best


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
        #: (how far, sample, reference score, device score): the sample whose scores moved most
        self.moved: Optional[Tuple[float, Sample, float, float]] = None

    def add(self, sample: Sample, ref: Dict[str, np.ndarray], dev: Dict[str, np.ndarray]) -> bool:
        image = len(self.images) + 1
        self.images.append({"id": image, "file_name": sample.id})
        boxes = self.labels.raw(sample)
        truth = len(self.truth)
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
        mine = self.truth[truth:]
        lost = _lost(sides[0], sides[1], mine)  # box x threshold
        top = _top_changed(sides[0], sides[1])
        if top or lost.any():  # not where the reference as float16 holds it changes as much
            half = _detections(self.postprocess, _in_float16(ref), sample, "float16 reference")
            top = top and _top_changed(half, sides[1])
            lost &= _matches(half, mine)
        flipped = top or bool(lost.any())
        flipped = flipped or sample.id in self.nonfinite[-1:]
        if flipped:
            self.flipped.append(sample.id)
        moved = _score_moved(sides[0], sides[1])
        if moved[0] > 0 and (self.moved is None or moved[0] > self.moved[0]):
            self.moved = (moved[0], sample, moved[1], moved[2])
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


#: a reference mAP below this matches almost nothing: the conventions are the likely cause
NEAR_ZERO = 0.05


def vacuous_reference(scorer: MeanAP, reference: float, max_drop: float) -> Optional[ConfigError]:
    """The error of a reference mAP within ``max_drop`` of 0 (None when it is above): a device
    finding nothing would pass, so the check proves nothing; it names what there was to match
    and the conventions whose mismatch gives such a figure."""
    if reference > max_drop:
        return None
    if reference >= NEAR_ZERO:  # the labels match: max_drop is what lets any device through
        from .chance import max_drop_refusal

        return max_drop_refusal("map", reference, max_drop, "finding nothing")
    found = scorer.found[0]
    if not scorer.truth:
        what = "the labels hold no ground-truth boxes"
    elif not found:
        what = f"{callable_label(scorer.postprocess)} returned no reference detection"
    else:
        what = (f"its {len(found)} detections match almost none of the labels' "
                f"{len(scorer.truth)} boxes (the labels' boxes reach {_reach(scorer.truth)}, "
                f"the detections' {_reach(found)})")
    return ConfigError("labels", f"metric map: the onnxruntime fp32 reference scores "
                                 f"{reference:.4f}, within max_drop {max_drop:.4f} of 0, so no "
                                 f"device could fail this check: {what}. Labels and "
                                 f"postprocess must both give bbox [x, y, w, h] (top-left "
                                 f"corner, width, height; not [x1, y1, x2, y2]) in the same "
                                 f"coordinates (both pixels of the same image size, or both "
                                 f"normalized) and the same category_id numbering")


def _reach(boxes: List[dict]) -> str:
    """``x+w 638.2, y+h 477.2``: how far the boxes reach, read as [x, y, w, h]."""
    return ", ".join(f"{name} {max(b['bbox'][axis] + b['bbox'][axis + 2] for b in boxes):.4g}"
                     for axis, name in ((0, "x+w"), (1, "y+h")))

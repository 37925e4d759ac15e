"""Dataset metrics computed while the samples stream past: Top-k, agreement, a user callable.

Every scorer sees each sample once, as ``add(sample, reference_outputs, device_outputs)``,
and gives ``(reference value, device value)`` at the end. Built-in classification metrics read
one output (``output=``, or the model's only output) as class scores, laid out by
``class_scores``: ``[N, C]`` is one row per batch entry (``[C]``, ``[N, 1, C]`` and
``[N, C, 1, 1]`` too), ``[N, T, C]`` is a sequence of T positions per row (text recognition),
class axis last; any other layout (``[N, C, H, W]``) is refused, not flattened into one argmax.
An output that holds class ids (``dataset.reference.class_id_outputs``: INT64, or another
integer fed by ArgMax/ArgMin/TopK's indices; a uint8 ``[N, C]`` after a QuantizeLinear and
MatMulInteger's int32 are scores) is read as the classes themselves (``class_ids``):
``[N]`` or ``[N, 1]`` is one class per row, ``[N, T]`` a sequence of T class ids per row (a
recognizer that decodes in the graph); ranking ids as scores would compare where the largest
id stands, not the ids. An
output of scores with one value per row (``[N]``, ``[N, 1]``: a sigmoid's probability) has no
class axis and is refused, and so is an output holding no values (``[N, 0]``).
A row is scored by its values, -inf and +inf ordering as values (a log-softmax's -inf); a device
row holding NaN counts as wrong and is named; a reference row holding NaN cannot be scored:
``RowFlips.nonfinite_reference`` names it and the check refuses to give a figure.
``RowFlips`` records, for every row, whether the device's top-1 differs from the reference's at
any position (the flipped sample ids a failure names); top-k with labels reads one label per
row, so it refuses a sequence output.
"""
from __future__ import annotations

import difflib
import inspect
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import ConfigError
from .samples import Labels, Sample

BUILTIN = ("top1", "top5", "agreement", "map")


def pick_output(names: Sequence[str], output: Optional[str], where: str = "output") -> str:
    """The output the built-in metrics read: ``output`` or the model's only output."""
    names = list(names)
    if output is not None:
        if output not in names:
            close = difflib.get_close_matches(output, names, n=3, cutoff=0.3)
            raise ConfigError(where, f"no model output named {output!r}; outputs: "
                                     f"{', '.join(names)}"
                                     + (f" (closest: {', '.join(close)})" if close else ""))
        return output
    if len(names) != 1:
        raise ConfigError(where, f"the model has {len(names)} outputs ({', '.join(names)}): say "
                                 f"which one the metric reads with output=...")
    return names[0]


def score_layout(shape: Tuple[int, ...]) -> Optional[Tuple[int, int, int]]:
    """``(rows, positions, classes)`` of an output of ``shape`` read as class scores, or None
    when no single trailing class axis can be told (``[N, C, H, W]``, ``[N, 2, T, C]``).

    Size-1 axes after the batch axis are dropped (``[N, 1, C]``, ``[N, C, 1, 1]`` are ``[N, C]``);
    a rank-3 output with two axes left, ``[N, T, C]``, is T positions of C classes. One value
    per row (``[N, 1]``, ``[1]``) is no class axis either: its argmax would always be class 0."""
    if len(shape) <= 1:
        size = int(np.prod(shape, dtype=np.int64))
        return (1, 1, size) if size > 1 else None
    rest = [int(d) for d in shape[1:] if d != 1]
    if not rest:
        return None
    if len(rest) == 1:
        return int(shape[0]), 1, rest[0]
    if len(shape) == 3:
        return int(shape[0]), rest[0], rest[1]
    return None


def index_rows(shape: Tuple[int, ...]) -> Optional[int]:
    """Rows of an output holding one value per row (``[N]``, ``[N, 1]``, ``[]``), else None."""
    if len(shape) <= 1:
        return int(np.prod(shape, dtype=np.int64))
    return int(shape[0]) if all(d == 1 for d in shape[1:]) else None


def class_ids(value: np.ndarray, index: bool) -> Optional[np.ndarray]:
    """An output of class ids (``index``: ``class_id_outputs`` names it) as ``(rows,
    positions)``: ArgMax's ``[N]`` is one class per row, a decoder's ``[N, T]`` T classes per
    row; else None (scores)."""
    if not index:
        return None
    arr = np.asarray(value)
    rows = int(arr.shape[0]) if arr.ndim else 1
    return arr.reshape(rows, int(np.prod(arr.shape[1:], dtype=np.int64)))


def values_present(value: np.ndarray, output: str) -> np.ndarray:
    """``value``, refused when it holds no values (``[N, 0]``): nothing there can agree or
    differ, and a figure over it would read as a perfect score."""
    if not value.size:
        raise ConfigError("output", f"output {output!r} of shape {_shape(value.shape)} holds no "
                                    f"values to score")
    return value


def class_scores(value: np.ndarray, output: str, metric: str) -> np.ndarray:
    """``value`` as ``(rows, positions, classes)`` (see ``score_layout``); ConfigError naming
    the shape when its class axis cannot be told."""
    arr = np.asarray(value)
    layout = score_layout(arr.shape)
    if layout is None and index_rows(arr.shape) is not None:
        raise ConfigError("metric", f"metric {metric} reads output {output!r} as class scores, "
                                    f"but its shape {_shape(arr.shape)} holds one score per "
                                    f"row: no class axis (a binary classifier's probability? "
                                    f"an output of class ids, ArgMax's or a Cast of it, is read "
                                    f"as the class itself); score it with a callable "
                                    f"metric(outputs, labels)")
    if layout is None:
        raise ConfigError("metric", f"metric {metric} reads output {output!r} as class scores, "
                                    f"[N, C] (one row per batch entry) or [N, T, C] (T positions "
                                    f"of C classes, class axis last), but its shape is "
                                    f"{_shape(arr.shape)}: no single class axis "
                                    f"({_map_guess(arr.shape)}); score it with a callable "
                                    f"metric(outputs, labels)")
    return arr.reshape(layout)


def _map_guess(shape) -> str:
    """What an output of no single class axis likely is: classes last where the last axis is
    smaller than every other after the batch (MTCNN's [1, H, W, 2]), else classes first."""
    rest = [int(d) for d in shape[1:-1] if d != 1]
    if len(shape) >= 3 and shape[-1] > 1 and all(shape[-1] < d for d in rest):
        return "a per-position map with classes last [N, H, W, C]?"
    return "a segmentation map [N, C, H, W]?"


def _shape(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def device_like(ref: np.ndarray, dev, output: str, sample: Sample) -> np.ndarray:
    """The device's ``output`` in the reference's shape (a runtime may flatten it or drop its
    size-1 axes); ConfigError when the two hold different numbers of values."""
    dev = np.asarray(dev)
    if dev.shape == ref.shape:
        return dev
    if dev.size != ref.size:
        raise ConfigError(f"sample {sample.id!r}", f"output {output!r} has shape {dev.shape} on "
                                                   f"the device, {ref.shape} in the reference")
    return dev.reshape(ref.shape)


def row_ids(sample: Sample, rows: int) -> List[str]:
    return [sample.id] if rows == 1 else [f"{sample.id}[{r}]" for r in range(rows)]


class RowFlips:
    """Which rows' top-1 the device changed, and which rows hold NaN/Inf, in sample order.

    A row of a sequence output ``[N, T, C]`` flips when the top-1 of any of its T positions
    does (``positions``, the largest T met; ``positions_min`` the smallest, T varying with a
    sample's shape; ``positions_total`` and ``flipped_positions`` count the positions themselves,
    row by row). An output of
    class ids (``index``) is the classes themselves: a row flips when one of its ids differs.
    ``nonfinite`` names the device rows holding NaN (a flip: counted as wrong) or an Inf the
    reference's row lacks there (scored as a value); ``nonfinite_reference`` the reference rows
    holding NaN (they cannot be scored). With ``strict=False`` (a callable metric) an output of
    no single class axis is not refused: its flips go untracked (``untracked`` says why) and
    only NaN/Inf rows are recorded."""

    def __init__(self, output: str, metric: str = "agreement", strict: bool = True,
                 index: bool = False, axes=None):
        self.output, self.metric, self.strict, self.index = output, metric, strict, index
        self.axes = axes  # ``batch_axis.BatchAxis``: the output's batch axis read first
        self.flipped: List[str] = []
        self.flipped_samples: List[str] = []
        self.nonfinite: List[str] = []
        self.nonfinite_reference: List[str] = []
        self.rows = 0
        self.positions = 1
        self.positions_min = 0  # 0: no sample yet
        self.positions_total = 0
        self.flipped_positions = 0
        self.untracked = ""

    def add(self, sample: Sample, ref: Dict[str, np.ndarray], dev: Dict[str, np.ndarray]) -> bool:
        """Record one sample; True when one of its rows flipped."""
        rv = np.asarray(ref[self.output])
        if not rv.size and not self.strict:  # a callable scores it; nothing here can flip
            self.untracked = f"output {self.output!r} of shape {_shape(rv.shape)} holds no values"
            return False
        values_present(rv, self.output)
        dv = device_like(rv, dev[self.output], self.output, sample)
        if self.axes is not None:
            rv, dv = self.axes.rows_first(sample, rv, dv)
        ids = class_ids(rv, self.index)
        if ids is not None:  # the classes themselves: (rows, positions) ids
            r, d = ids[:, :, None], dv.reshape(ids.shape)[:, :, None]
            top_r, top_d = r[:, :, 0], d[:, :, 0]
        else:
            if score_layout(rv.shape) is None and not self.strict:
                self.untracked = (f"output {self.output!r} of shape {_shape(rv.shape)} has no "
                                  f"single class axis")
                r = rv.reshape(rv.shape[0] if rv.ndim else 1, 1, -1)
            else:
                r = class_scores(rv, self.output, self.metric)
            d = dv.reshape(r.shape)
            top_r, top_d = r.argmax(axis=2), d.argmax(axis=2)
        row_ids_ = row_ids(sample, r.shape[0])
        self.rows += len(row_ids_)
        if not self.untracked:
            first = not self.positions_total
            self.positions = r.shape[1] if first else max(self.positions, r.shape[1])
            self.positions_min = r.shape[1] if first else min(self.positions_min, r.shape[1])
            self.positions_total += r.shape[0] * r.shape[1]
        flipped = False
        ref_nan = np.isnan(r).any(axis=(1, 2))
        dev_nan = np.isnan(d).any(axis=(1, 2))
        with np.errstate(invalid="ignore"):
            dev_odd = dev_nan | (np.isinf(d) & (d != r)).any(axis=(1, 2))
        changed = top_r != top_d  # (rows, positions); -inf and +inf order as values
        for k, row_id in enumerate(row_ids_):
            if ref_nan[k]:
                self.nonfinite_reference.append(row_id)
            if dev_odd[k]:
                self.nonfinite.append(row_id)
            if self.untracked:
                continue
            self.flipped_positions += r.shape[1] if dev_nan[k] else int(changed[k].sum())
            if dev_nan[k] or changed[k].any():
                self.flipped.append(row_id)
                flipped = True
        if flipped:
            self.flipped_samples.append(sample.id)
        return flipped


class TopK:
    """Share of rows whose label is among the k largest logits (a row holding NaN is wrong;
    -inf and +inf order as values); an output of class ids (``index``) of one value per row is
    the class itself, compared with the label (top1 only), and ``id_classes`` (the classes its
    ArgMax picks from, where the graph says) bounds its labels as a scores output's width does.
    ``lost`` names the rows the metric lost (the label in the reference's top k, not in the
    device's), ``first_lost`` the first sample holding one; ``classes`` is the class count
    (None: an output of class ids whose graph does not say it)."""

    def __init__(self, k: int, output: str, labels: Labels, index: bool = False,
                 id_classes: Optional[int] = None, axes=None):
        if not labels.given:
            raise ConfigError("labels", f"metric top{k} needs labels (a sequence in sample "
                                        "order or a {sample id: label} mapping); 'agreement' "
                                        "needs none")
        self.k, self.output, self.labels, self.index = k, output, labels, index
        self.axes = axes  # ``batch_axis.BatchAxis``: the output's batch axis read first
        self.correct = [0, 0]  # reference, device
        self.rows = 0
        self.classes: Optional[int] = id_classes if index else None
        self.lost: List[str] = []
        self.first_lost: Optional[Sample] = None

    def add(self, sample: Sample, ref: Dict[str, np.ndarray], dev: Dict[str, np.ndarray]) -> None:
        rv = values_present(np.asarray(ref[self.output]), self.output)
        dv = device_like(rv, dev[self.output], self.output, sample)
        shape = rv.shape  # (as the output has it, in messages)
        if self.axes is not None:
            rv, dv = self.axes.rows_first(sample, rv, dv)
        ids = class_ids(rv, self.index)
        if ids is not None:
            self._add_ids(sample, ids, dv, shape)
            return
        r = class_scores(rv, self.output, f"top{self.k}")
        if r.shape[1] > 1:
            self._refuse_sequence(shape, f"{r.shape[1]} positions of {r.shape[2]} classes "
                                         f"per row", "the top-1 of every position does")
        r = r[:, 0, :]
        d = dv.reshape(r.shape)
        if self.k > r.shape[1]:
            raise ConfigError("metric", f"top{self.k} needs at least {self.k} classes; output "
                                        f"{self.output!r} has {r.shape[1]}")
        self.classes = r.shape[1]
        truth = self._truth(sample, r.shape[0], r.shape[1])
        self._count(sample, topk_hits(r, truth, self.k), topk_hits(d, truth, self.k))

    def _refuse_sequence(self, shape, per_row: str, agrees: str) -> None:
        raise ConfigError("metric", f"metric top{self.k} scores one label per row, but output "
                                    f"{self.output!r} of shape {_shape(shape)} is a sequence: "
                                    f"{per_row}; use metric='agreement' (a row agrees when "
                                    f"{agrees}) or a callable metric(outputs, labels) that "
                                    f"decodes the sequence")

    def _add_ids(self, sample: Sample, ids: np.ndarray, dev, shape) -> None:
        if ids.shape[1] > 1:
            self._refuse_sequence(shape, f"{ids.shape[1]} class ids per row (an integer output)",
                                  "every position does")
        ids = ids[:, 0]
        if self.k > 1:
            raise ConfigError("metric", f"metric top{self.k} ranks {self.k} classes per row, "
                                        f"but output {self.output!r} of shape "
                                        f"{_shape(shape)} is one class "
                                        f"per row (an integer output, such as ArgMax's): use "
                                        f"metric='top1' or 'agreement', or read the scores "
                                        f"output before the ArgMax with output=...")
        d = device_like(ids, dev, self.output, sample).reshape(ids.shape)
        truth = self._truth(sample, ids.shape[0], self.classes)
        self._count(sample, ids == truth, d == truth)  # NaN equals no label

    def _count(self, sample: Sample, ref_hit: np.ndarray, dev_hit: np.ndarray) -> None:
        """Add one sample's rows, right or wrong on each side; name the rows it lost."""
        self.correct[0] += int(np.count_nonzero(ref_hit))
        self.correct[1] += int(np.count_nonzero(dev_hit))
        lost = np.flatnonzero(ref_hit & ~dev_hit)
        if lost.size:
            ids = row_ids(sample, len(ref_hit))
            self.lost.extend(ids[k] for k in lost)
            self.first_lost = self.first_lost or sample
        self.rows += len(ref_hit)

    def _truth(self, sample: Sample, rows: int, classes: Optional[int]) -> np.ndarray:
        return np.asarray([class_label(label, f"sample {sample.id!r}", self.labels.where,
                                       classes, f"output {self.output!r}")
                           for label in self.labels.for_sample(sample, rows)])

    def values(self) -> Tuple[float, float]:
        if not self.rows:
            raise ConfigError("samples", "no samples")
        return self.correct[0] / self.rows, self.correct[1] / self.rows


def topk_hits(rows: np.ndarray, truth: np.ndarray, k: int) -> np.ndarray:
    """Per row of ``rows`` (rows x classes): is ``truth`` among its k largest values? A row
    holding NaN is wrong; -inf and +inf order as values; equal values rank by class index."""
    scored = ~np.isnan(rows).any(axis=1)  # NaN ranks nothing
    if k == 1:  # argmax takes the first of equal maxima, as the stable sort does
        hit = rows.argmax(axis=1) == truth
    else:
        top = np.argsort(-rows, axis=1, kind="stable")[:, :k]
        hit = (top == truth[:, None]).any(axis=1)
    return hit & scored


class Top1Agreement:
    """Share of rows whose device top-1 equals the reference's (the reference scores 1.0)."""

    def __init__(self, flips: RowFlips):
        self.flips = flips

    def add(self, sample, ref, dev) -> None:  # RowFlips already saw the sample
        pass

    def values(self) -> Tuple[float, float]:
        if not self.flips.rows:
            raise ConfigError("samples", "no samples")
        return 1.0, 1.0 - len(self.flips.flipped) / self.flips.rows


def callable_label(fn) -> str:
    """``module:name`` of a user's function, as ``--metric``/``--postprocess`` spell it."""
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None)
    return f"{module}:{name}" if module else name


def raised(exc: BaseException) -> str:
    """``ValueError: boom (raised at my_metrics.py:12, in bad)``: a user function's exception
    and the line that raised it (pytest shows a ``ConfigError`` without its traceback)."""
    import os
    import traceback

    text = f"{type(exc).__name__}: {exc}"
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return text
    where = frames[-1]
    path = where.filename
    try:
        relative = os.path.relpath(path)
        path = path if relative.startswith("..") else relative
    except ValueError:  # another drive (Windows)
        pass
    return f"{text} (raised at {path}:{where.lineno}, in {where.name})"


def check_signature(fn, args: Tuple[str, ...], what: str) -> None:
    """Refuse, before any sample runs, a callable that cannot take ``args`` positionally."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins without a signature: their call will tell
        return
    try:
        signature.bind(*args)
    except TypeError as exc:
        raise ConfigError(what, f"{callable_label(fn)} cannot be called as "
                                f"{what}({', '.join(args)}): {exc}") from None


def class_label(label, whose: str, where: str = "labels", classes: Optional[int] = None,
                of: str = "") -> int:
    """``label`` (of ``whose``: "sample 'a'", "row 3") as a class index: an integer (3, 3.0,
    numpy integers, "3") from 0, below ``classes`` where known (the classes ``of`` holds);
    3.7 is a mistake, not class 3, and so is True (a bool is no class index: ``[True]`` read
    as class 1 hid a wrong labels list). Anything else is a ``ConfigError`` at ``where``."""
    if isinstance(label, (bool, np.bool_)):
        raise ConfigError(where, f"label of {whose} is {label!r}, a bool, not a class index")
    try:
        index = int(label)
        if isinstance(label, (float, np.floating)) and index != label:
            raise ValueError(label)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(where, f"label of {whose} is {label!r}, not a class index") from None
    if classes is not None and not 0 <= index < classes:
        raise ConfigError(where, f"label of {whose} is {index}, outside the {classes} classes "
                                 f"of {of}")
    if index < 0:
        raise ConfigError(where, f"label of {whose} is {index}, not a class index")
    return index


def metric_name(metric) -> str:
    if callable(metric):
        return getattr(metric, "__name__", type(metric).__name__)
    return str(metric)


def check_dataset_metric(metric) -> None:
    if callable(metric):
        check_signature(metric, ("outputs", "labels"), "metric")
        return
    if metric not in BUILTIN:
        close = difflib.get_close_matches(str(metric), BUILTIN, n=2, cutoff=0.3)
        raise ConfigError("metric", f"unknown metric {metric!r}; built-in metrics: "
                                    f"{', '.join(BUILTIN)} (or a callable)"
                                    + (f"; closest: {', '.join(close)}" if close else ""))

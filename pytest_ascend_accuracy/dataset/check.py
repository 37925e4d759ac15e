"""``check_dataset``: a dataset metric on the device against the reference, traced to an operator.

Every sample runs through the reference (onnxruntime fp32 on the original model, outputs
cached per sample, see ``reference``) and through the model under test (``om.outputs``, device
outputs read as float32), one sample at a time. The metric is computed on both sides; the check
passes iff ``reference - device <= max_drop`` (``higher_is_better=False``, for a figure where
lower is better such as a callable's loss: ``device - reference <= max_drop``). On failure the
first sample top1/top5 lost (right in the reference, wrong on the device), else the first whose
top-1 flipped, is dumped on both sides and compared (``culprit``), and ``DatasetFailure`` names
the metric, both values, the drop, the flipped and lost sample ids and the first operator
below the threshold. A reference figure no device could fail against (top-k at or below
chance: labels that do not match the model; a ``max_drop`` at or over it) is refused
(``chance``), as map's is (``detection.vacuous_reference``).
An input the metric does not read (``labels`` for agreement, ``postprocess`` but for map,
``output`` for map) is refused (``READS``): ignored, it would hide the caller's mistake.

``om`` is anything with ``outputs(inputs) -> {output name: array}``, ``run(inputs, dump=True)
-> DumpSet``, ``model`` (the original ONNX model), ``input_shape`` and ``name`` / ``mode``:
the plugin's ``ascend_model(...)`` result, or ``device.DeviceModel`` without pytest.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import replace
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from ..core.check_defaults import DEFAULT_SCALE_TOLERANCE
from ..errors import ConfigError
from .culprit import trace_sample
from .batch_axis import AUTO, BatchAxis, check_batch_axis
from .chance import vacuous_score
from .detection import MeanAP, vacuous_reference
from .joined_outputs import refuse_joined
from .reference import ReferenceModel, as_float32
from .result import DatasetFailure, DatasetResult
from .samples import Labels, SampleSource
from .callable_metric import CallableMetric
from .scoring import (RowFlips, Top1Agreement, TopK, callable_label, check_dataset_metric,
                      check_signature, index_rows, metric_name, pick_output, score_layout)

#: progress(done, total or None) is called at most this often (seconds) plus once at the end
PROGRESS_EVERY = 0.5


def run_dataset_check(om, samples, *, metric="top1", labels=None, max_drop: float = 0.01,
                      output: Optional[str] = None, postprocess: Optional[Callable] = None,
                      cache=None, threshold=0.95, per_op=None, ignore=(), op_metric="cosine",
                      progress: Optional[Callable[[int, Optional[int]], None]] = None,
                      trace: bool = True, reference_inputs: Optional[Callable] = None,
                      names_where: str = "per_op/ignore", higher_is_better: bool = True,
                      scale_tolerance=DEFAULT_SCALE_TOLERANCE,
                      converted_by: Optional[str] = None, on_traced: Optional[Callable] = None,
                      batch_axis=AUTO):
    """Run the check and return ``(DatasetResult, CompareResult | None, Verdict | None)``; the
    last two are the traced sample's comparison when the check failed and a sample flipped.
    ``reference_inputs(sample inputs) -> inputs`` feeds the reference run when the device model
    takes other inputs (an AIPP model takes raw images; the reference network, its own
    pre-processing of them). ``per_op`` and ``ignore`` entries must name ops of ``om.model``
    (``names_where`` starts the error): checked before any sample runs, as a misspelled one
    was found only when a failing check traced its first flipped sample. ``higher_is_better``
    (as ``assert_metric_close`` takes it) says which way the figure improves: False for a
    callable metric where lower is better (a loss); the built-in metrics are higher-is-better.
    ``scale_tolerance`` is the traced sample's scale guard, as ``check_accuracy``'s.
    ``converted_by`` (``SHAPE_FIXES``: ``ascend_model``, ``load_device_model``,
    ``--input-shape``) words the fix of a sample of another shape than ``om`` was converted at
    for the caller that converted it (default: ``load_device_model`` for a ``DeviceModel``, else
    ``ascend_model``). ``on_traced(actual, golden, verdict)`` runs while the traced sample's
    dumps can be read, once one of its operators fails (``culprit.trace_sample``).
    ``batch_axis`` is the axis of the metric's output that holds the samples (``batch_axis``:
    found from the sizes by default; None for an output with no batch axis)."""
    if converted_by is not None and converted_by not in SHAPE_FIXES:
        raise ConfigError("converted_by", f"expected one of {', '.join(SHAPE_FIXES)}, got "
                                          f"{converted_by!r}")
    if not callable(getattr(om, "outputs", None)) or not hasattr(om, "model"):
        raise ConfigError("om", f"expected a converted model (the result of ascend_model(...), or "
                                f"dataset.load_device_model(...)), got {type(om).__name__}")
    source, max_drop = check_arguments(samples, metric, max_drop, threshold, per_op, ignore,
                                       op_metric, postprocess=postprocess,
                                       higher_is_better=higher_is_better,
                                       scale_tolerance=scale_tolerance, batch_axis=batch_axis)
    check_dataset_op_names(om.model, per_op, ignore, names_where)
    given = {"labels": labels, "postprocess": postprocess, "output": output}
    refuse_unread(metric, [f"{k}=" for k in unread_options(metric, given)])
    lbls = labels.fresh() if isinstance(labels, Labels) else Labels(labels)
    lbls.check_pairing(source)
    reference = ReferenceModel(om.model, cache=cache)
    out_name = _output_for(metric, reference.output_names, output)
    refuse_joined(metric, out_name, reference.joined_outputs.get(out_name))
    index = out_name in reference.class_id_outputs
    axes = (BatchAxis(out_name, batch_axis, reference.batch_axes.get(out_name))
            if out_name is not None else None)
    if axes is None and batch_axis != AUTO:
        refuse_unread(metric, ["batch_axis="], "batch_axis")
    flips = (RowFlips(out_name, metric_name(metric), strict=not callable(metric), index=index,
                      axes=axes) if out_name is not None else None)
    scorer = _scorer(metric, out_name, lbls, flips, postprocess, index,
                     reference.class_id_classes.get(out_name), axes)
    several = callable(metric) and out_name is None  # a callable of several outputs
    total = source.count()
    first_flipped = None
    done = 0
    clock = _Throttle(progress, total)
    try:
        shapes = set()  # the sample input shapes this check ran: a per-shape model's conversions
        for sample in source:
            where = f"sample {sample.id!r}"
            shapes.add(tuple(sorted((k, np.shape(v)) for k, v in sample.inputs.items())))
            ref = reference.outputs(reference_feed(reference_inputs, sample.inputs, where), where)
            dev = as_float32(_device_outputs(om, sample.inputs, where, converted_by))
            _check_names(ref, dev, where)
            flipped = flips.add(sample, ref, dev) if flips is not None else False
            flipped = scorer.add(sample, ref, dev) or flipped
            if flipped and first_flipped is None:
                first_flipped = sample
            done += 1
            clock.tick(done)
    finally:
        reference.close()
    clock.end(done)
    if not done:
        raise ConfigError("samples", f"{source.describe()}: no samples")
    lbls.check_all_used(source.ids() or [])
    if flips is not None and flips.nonfinite_reference and not callable(metric):
        raise unscorable_reference(metric, out_name, flips.nonfinite_reference)
    ref_value, dev_value = scorer.values()
    vacuous = (vacuous_reference(scorer, ref_value, max_drop) if metric == "map" else
               None if callable(metric) else
               vacuous_score(metric, getattr(scorer, "scorer", None), ref_value, max_drop,
                             out_name))
    if vacuous is not None:
        raise vacuous
    lost = getattr(getattr(scorer, "scorer", None), "lost", [])  # top-k: right -> wrong rows
    called = scorer.scorer if callable(metric) else None  # ``CallableMetric``
    nonfinite = flips.nonfinite if flips is not None else getattr(scorer, "nonfinite", ())
    if called is not None and not nonfinite:  # NaN in an output flips were not tracked on
        nonfinite = called.nonfinite
    result = DatasetResult(
        metric=metric_name(metric), reference=ref_value, device=dev_value, max_drop=max_drop,
        samples=done, rows=flips.rows if flips is not None else done,
        flipped=tuple(flips.flipped if flips is not None else getattr(scorer, "flipped", ())),
        nonfinite=tuple(nonfinite),
        nonfinite_outputs=(tuple(called.nonfinite_outputs)
                           if called is not None and nonfinite is called.nonfinite else ()),
        nonfinite_reference=tuple(flips.nonfinite_reference) if flips is not None else (),
        positions=flips.positions if flips is not None else 1,
        positions_min=flips.positions_min if flips is not None else 0,
        positions_total=flips.positions_total if flips is not None else 0,
        flipped_positions=flips.flipped_positions if flips is not None else 0,
        untracked=(flips.untracked if flips is not None else
                   untracked_outputs(reference.output_names) if several else ""),
        track_outputs=(trackable_outputs(called.ref[0] if called.ref else {},
                                         reference.joined_outputs) if several else ()),
        lost=tuple(lost),
        model=reference.label, mode=_mode_name(om), output=out_name,
        higher_is_better=higher_is_better,
        conversions=len(shapes) if getattr(om, "per_shape", False) else 1,
        reference_cached=reference.hits, reference_runs=reference.runs,
        layout_note=axes.note() if axes is not None else "")
    compared = verdict = None
    traced, role = _traced_sample(scorer, first_flipped)
    moved = getattr(scorer, "moved", None)  # map: the sample whose scores moved most
    if not result.passed and not result.flipped and moved is not None:
        result.moved = (moved[1].id, moved[2], moved[3])
        traced, role = moved[1], "scores moved most in sample"
    elif (not result.passed and not result.flipped and not result.lost and called is not None
          and called.first_nonfinite is not None):  # (a review: not the one that "moved most")
        traced, role = called.first_nonfinite, "first NaN/Inf sample"
    elif (trace and not result.passed and not result.flipped and not result.lost
          and called is not None):  # (the metric asked again: not where nothing is traced)
        alone = called.decisive(lambda v: replace(result, device=v).drop, result.max_drop,
                                result.drop)
        if alone is not None:  # (the metric itself says which sample its drop comes from)
            traced, role = alone[0], (f"{result.metric} {result.reference:.4f} -> "
                                      f"{alone[1]:.4f} with the device outputs of sample "
                                      f"{alone[0].id} alone; sample")
    if not result.passed and trace and traced is not None:
        result.culprit, compared, verdict = trace_sample(
            om, traced, cache=cache, threshold=threshold, per_op=per_op, ignore=ignore,
            metric=op_metric, reference_inputs=reference_inputs, scale_tolerance=scale_tolerance,
            on_traced=on_traced)
        result.culprit = replace(result.culprit, role=role)
    return result, compared, verdict


def check_dataset(om, samples, *, metric="top1", labels=None, max_drop: float = 0.01,
                  **options) -> DatasetResult:
    """``run_dataset_check`` that raises ``DatasetFailure`` when the metric drops too far."""
    __tracebackhide__ = True
    result, compared, verdict = run_dataset_check(om, samples, metric=metric, labels=labels,
                                                  max_drop=max_drop, **options)
    if not result.passed:
        raise DatasetFailure(result, compared, verdict)
    return result


def check_arguments(samples, metric="top1", max_drop=0.01, threshold=0.95, per_op=None,
                    ignore=(), op_metric="cosine", *, postprocess=None, higher_is_better=True,
                    scale_tolerance=DEFAULT_SCALE_TOLERANCE, batch_axis=AUTO):
    """``(SampleSource, max_drop)`` once every argument checked before any sample runs (the CLI
    calls it before converting the model): an impossible threshold would otherwise surface only
    when a failing check traces its first flipped sample."""
    from ..compare.thresholds import Policy

    check_dataset_metric(metric)
    if postprocess is not None:
        if not callable(postprocess):
            raise ConfigError("postprocess", f"expected a callable postprocess(outputs) -> "
                                             f"detections, got {type(postprocess).__name__}")
        check_signature(postprocess, ("outputs",), "postprocess")
    max_drop = _check_max_drop(max_drop)
    check_batch_axis(batch_axis)
    check_higher_is_better(metric, higher_is_better)
    Policy.build(threshold, per_op, ignore, op_metric, scale_tolerance)
    return SampleSource(samples), max_drop


def check_higher_is_better(metric, value, where: str = "higher_is_better") -> None:
    """A bool; False only for a callable metric (a loss): every built-in figure is better
    higher, and reading one the other way round would pass the worse device."""
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(where, f"expected True or False, got {value!r}")
    if not value and not callable(metric):
        raise ConfigError(where, f"metric {metric} is better higher (a share of samples or a "
                                 f"mean precision); higher_is_better=False is for a callable "
                                 f"metric where lower is better, such as a loss")


def check_dataset_op_names(model, per_op, ignore, where: str) -> None:
    """``per_op`` and ``ignore`` entries name ops of ``model`` (``graph.op_catalogue``: node
    names, globs matching one, ``OP:output:N``), else a ``ConfigError`` at ``where`` naming the
    model as the accuracy check does and the closest names; an unreadable model is left to the
    reference run to refuse."""
    if not per_op and not ignore:
        return
    from ..graph.op_catalogue import check_entry_names, model_ops

    try:
        ops = model_ops(model)
    except ConfigError:
        return
    check_entry_names(ops, per_op, ignore, where)


#: the optional inputs each metric reads (a callable metric: the "callable" entry)
READS = {"top1": ("labels", "output"), "top5": ("labels", "output"), "agreement": ("output",),
         "map": ("labels", "postprocess"), "callable": ("labels", "output")}

#: why a metric has no use for an input, for the error that refuses it
_WHY = {"postprocess": "postprocess turns outputs into detections, for metric map only",
        "labels": "agreement compares the device's top-1 with the reference's, no labels",
        "output": "map reads the detections postprocess makes of all the outputs",
        "batch_axis": "map and a callable of several outputs read the outputs as they are"}


def unread_options(metric, given: Dict[str, object]) -> List[str]:
    """The names in ``given`` (labels, postprocess, output) holding a value that ``metric``
    would not read: given and silently ignored, they would let a mistake pass unseen."""
    # an unknown metric reads everything here: check_metric refuses it, naming the known ones
    reads = READS.get("callable" if callable(metric) else metric, tuple(given))
    return [name for name, value in given.items() if value is not None and name not in reads]


def refuse_unread(metric, names: List[str], where: str = "metric") -> None:
    """ConfigError naming the options (as the caller spells them: ``labels=``, ``--labels``)
    that ``metric`` does not read, and why; nothing when ``names`` is empty."""
    if not names:
        return
    why = "; ".join(_WHY[key] for key in ("labels", "postprocess", "output", "batch_axis")
                    if any(n.strip("-=").replace("-", "_") == key for n in names))
    them = "it" if len(names) == 1 else "them"
    name = callable_label(metric) if callable(metric) else metric
    raise ConfigError(where, f"metric {name} does not use "
                             f"{' or '.join(names)}: leave {them} out"
                             + (f" ({why})" if why else ""))


def unscorable_reference(metric, output: str, rows) -> ConfigError:
    """The error of a reference whose rows hold NaN: a top-k or agreement figure over them
    would score nothing (a 0.0000 reference passed any device), so there is none."""
    from .result import listed

    return ConfigError("reference", f"the onnxruntime fp32 reference's output {output!r} holds "
                                    f"NaN in {len(rows)} row(s): {listed(rows)}; metric {metric} "
                                    f"cannot score them, so there is no reference figure to "
                                    f"hold the device to: check these samples and the model "
                                    f"(the reference runs the original model in float32)")


def reference_feed(reference_inputs: Optional[Callable], inputs, where: str):
    """The reference network's inputs for one sample: ``reference_inputs(inputs)`` or as is."""
    if reference_inputs is None:
        return inputs
    out = reference_inputs(inputs)
    if not isinstance(out, dict):
        raise ConfigError(f"reference_inputs ({where})", f"must return a dict of input name -> "
                                                         f"array, got {type(out).__name__}")
    return out


def _output_for(metric, names, output):
    if metric in ("top1", "top5", "agreement"):
        return pick_output(names, output)
    # map and callables read what they like; flips are tracked on a named (or the only) output
    if output is not None or len(names) == 1:
        return pick_output(names, output) if metric != "map" else None
    return None


def _scorer(metric, out_name, labels, flips, postprocess, index=False, id_classes=None,
            axes=None):
    if callable(metric):
        return _Quiet(CallableMetric(metric, labels, out_name))
    if metric == "map":
        return MeanAP(postprocess, labels)
    if metric == "agreement":
        return _Quiet(Top1Agreement(flips))
    return _Quiet(TopK(5 if metric == "top5" else 1, out_name, labels, index, id_classes, axes))


def untracked_outputs(names) -> str:
    """Why a callable metric's flips were not tracked on a model of several outputs."""
    return (f"the model has {len(names)} outputs, {', '.join(names)}, and a callable metric "
            f"may read any of them")


def trackable_outputs(outputs, joined) -> Tuple[str, ...]:
    """The names of ``outputs`` (one sample's ``{name: array}``) whose top-1 ``output=`` can
    track: a single class axis (``score_layout``), not one value per row, not a detector's head
    (``joined``: ``joined_outputs``). A review: MTCNN's pnet maps and a sigmoid's [N, 1] were
    offered, and pasted they tracked nothing."""
    return tuple(name for name, value in outputs.items()
                 if score_layout(np.shape(value)) is not None
                 and index_rows(np.shape(value)) is None and name not in joined)


def _traced_sample(scorer, first_flipped):
    """(sample, role) a failing check traces: the first a top-k metric lost (right in the
    reference, wrong on the device: a flip from one wrong class to another cost nothing, and
    a top5 loss need not flip the top-1), else the first flipped one."""
    lost = getattr(getattr(scorer, "scorer", None), "first_lost", None)
    if lost is None or (first_flipped is not None and lost.id == first_flipped.id):
        return first_flipped, "first flipped sample"
    return lost, "first lost sample"


class _Quiet:
    """A scorer whose ``add`` says nothing about flips (RowFlips tracks them)."""

    def __init__(self, scorer):
        self.scorer = scorer

    def add(self, sample, ref, dev) -> bool:
        self.scorer.add(sample, ref, dev)
        return False

    def values(self):
        return self.scorer.values()


def _device_outputs(om, inputs, where: str, converted_by: Optional[str]):
    """``om.outputs(inputs)``; its ``ConfigError`` names the sample (``where``): the check
    ended with "inputs of 'dyn': input 'x' has shape [2, 8], the model declares [1, 8]", naming
    no sample. The reference took the sample, so where an input's shape is not the one ``om``
    was converted at (``om.input_shape``), the fix is said as ``converted_by`` spells it
    (``SHAPE_FIXES``); an empty array is said as the sample's (``graph.per_shape``: the model
    does not know the sample); any other refusal is said as it is."""
    from ..graph.per_shape import EmptyInputError

    try:
        return om.outputs(inputs)
    except EmptyInputError as exc:
        raise exc.retold(where, "the sample's array") from None
    except ConfigError as exc:
        if str(exc.where or "").startswith("sample "):
            raise
        of = f" ({exc.where})" if exc.where else ""
        note = _other_shape_note(om, inputs, converted_by)
        problem = getattr(exc, "run_problem", exc.problem)  # the run's words, not ascend_model's
        raise ConfigError(where, f"the model under test{of}: {problem}{note}") from None


#: how a caller converts ``om`` at each sample's shape (a dimension left open converts per
#: shape): (its conversion's shape, as it spells it; the fix), by ``converted_by``
SHAPE_FIXES = {
    "load_device_model": ("input_shape={shape}", "drop input_shape= from its "
                                                 "load_device_model(...) call"),
    "ascend_model": ("input_shape={shape}", "drop input_shape= from its ascend_model(...) call"),
    "--input-shape": ("--input-shape {text}", "run it without --input-shape"),
}


def _other_shape_note(om, inputs, converted_by: Optional[str]) -> str:
    """The fix of a sample whose input has another shape than ``om`` was converted at: "" when
    none has (a refusal of another kind), or where ``om`` takes raw images (an AIPP file)."""
    import shlex

    from ..graph.onnx_graph import parse_input_shape
    from .device import DeviceModel, PerShapeDeviceModel

    given = getattr(om, "input_shape", None)
    if not given or getattr(om, "aipp", None) is not None:
        return ""
    try:
        shapes = parse_input_shape(given)
    except ConfigError:
        return ""
    if not any(n in inputs and tuple(np.shape(inputs[n])) != tuple(d) for n, d in shapes.items()):
        return ""
    if converted_by is None:
        library = isinstance(om, (DeviceModel, PerShapeDeviceModel))
        converted_by = "load_device_model" if library else "ascend_model"
    spelled, fix = SHAPE_FIXES[converted_by]
    shape = "{" + ", ".join(f"{k!r}: {list(v)}" for k, v in shapes.items()) + "}"
    text = shlex.quote(given if isinstance(given, str)
                       else ";".join(f"{k}:{','.join(map(str, v))}" for k, v in shapes.items()))
    return (f"; the onnxruntime reference took it: the model under test was converted at one "
            f"shape for every sample, {spelled.format(shape=shape, text=text)}: {fix}, and it "
            f"converts at each sample's shape; or give every sample that shape")


def _check_names(ref, dev, where: str) -> None:
    missing = [n for n in ref if n not in dev]
    if missing:
        raise ConfigError(where, f"the device returned no output {missing[0]!r}; device outputs: "
                                 f"{', '.join(dev) or 'none'}; reference outputs: {', '.join(ref)}")


def _check_max_drop(value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
            or value < 0:
        raise ConfigError("max_drop", f"expected a finite number >= 0, got {value!r}")
    return float(value)


def _mode_name(om) -> str:
    mode = getattr(om, "mode", None)
    return str(getattr(mode, "name", mode or "default"))


class _Throttle:
    def __init__(self, progress, total):
        import time

        self.progress, self.total, self._now = progress, total, time.monotonic
        self.next = self._now() + PROGRESS_EVERY

    def tick(self, done: int) -> None:
        if self.progress is not None and self._now() >= self.next:
            self.progress(done, self.total)
            self.next = self._now() + PROGRESS_EVERY

    def end(self, done: int) -> None:
        if self.progress is not None:
            self.progress(done, self.total)

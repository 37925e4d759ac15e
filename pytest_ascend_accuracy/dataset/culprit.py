"""Why a dataset figure dropped: one flipped sample dumped on both sides and compared.

The first flipped sample (in sample order) runs once more with every operator dumped on the
device (``om.run(inputs, dump=True)``) and through the golden (onnxruntime fp32, every node
output, cached like any golden); ``compare_dumps`` and the per-operator policy name the first
operator below the threshold (the scale guard included), exactly as an ``@accuracy`` check of
that sample would.
"""
from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Callable, Optional, Tuple

from ..compare.engine import compare_dumps
from ..core.check_defaults import DEFAULT_SCALE_TOLERANCE
from ..errors import AscendAccuracyError
from ..compare.thresholds import Policy
from .result import Culprit
from .samples import Sample


def trace_sample(om, sample: Sample, *, cache=None, threshold=0.95, per_op=None, ignore=(),
                 metric: str = "cosine", reference_inputs=None,
                 scale_tolerance=DEFAULT_SCALE_TOLERANCE,
                 on_traced: Optional[Callable] = None) -> Tuple[Culprit, object, object]:
    """(Culprit, CompareResult or None, Verdict or None) for ``sample``; the golden runs on
    ``reference_inputs(sample.inputs)`` when given (raw inputs of an AIPP model). The policy
    holds ``scale_tolerance`` (the scale guard), as the accuracy check of that sample does.
    ``on_traced(actual, golden, verdict)`` runs once an operator fails, while both dumps can
    still be read (a report copies the failing tensors next to its page)."""
    import dataclasses

    from ..golden.onnxruntime_golden import golden_dump

    with tempfile.TemporaryDirectory(prefix="ascend-accuracy-dataset-golden-") as tmp:
        try:
            ref_sample = sample
            if reference_inputs is not None:
                ref_sample = dataclasses.replace(sample, inputs=reference_inputs(sample.inputs))
            golden = golden_dump(om.model, ref_sample.inputs, cache=cache,
                                 input_shape=om.input_shape) \
                if cache is not None else _uncached_golden(om, ref_sample, Path(tmp))
            actual = om.run(sample.inputs, dump=True)
            result = compare_dumps(actual, golden)  # reads every tensor: tmp may go after it
        except AscendAccuracyError as exc:
            return Culprit(sample.id, note=f"could not dump and compare it: {exc}"), None, None
        culprit, verdict = _judged(om, sample, result, threshold, per_op, ignore, metric,
                                   scale_tolerance)
        if culprit.op is not None:
            from ..report.hints import hint_for

            # what check_accuracy of this sample would say to try next (the AIPP file before
            # the op, a float16 range, a mode to compare with): a failing dataset check ended
            # at the traced op with no next step (H112)
            hint = hint_for(verdict, golden, getattr(om, "mode", None), actual=actual,
                            result=result, model=om.model)
            culprit = dataclasses.replace(culprit, next_step="\n".join(hint.lines()), hint=hint)
            if on_traced is not None:
                on_traced(actual, golden, verdict)
    return culprit, result, verdict


def _judged(om, sample: Sample, result, threshold, per_op, ignore, metric: str,
            scale_tolerance) -> Tuple[Culprit, object]:
    """The traced sample's Culprit and Verdict (None where its entries name none of its ops)."""
    # the entries name ops of the model (checked before any sample ran:
    # ``check.check_dataset_op_names``);
    # one naming none of this comparison's ops (a fused op's name in a mode that does not fuse
    # it) leaves the sample untraced: the dataset failure stands, said with its own figures
    from ..errors import ConfigError
    from ..graph.onnx_graph import model_label

    try:
        result.check_names(list(per_op or ()), ignore, None, model_label(om.model))
    except ConfigError as exc:
        why = _never_compared(result, per_op, ignore) or exc.problem
        return Culprit(sample.id, note=f"not traced to an operator: {why}"), None
    verdict = result.judge(Policy.build(threshold, per_op, ignore, metric, scale_tolerance))
    first = verdict.first
    if first is None and verdict.problem:  # nothing judged or compared: no operator to blame
        return Culprit(sample.id, note=f"no operator named: {verdict.problem}"), verdict
    if first is None:
        note = f"every operator meets the threshold ({verdict.policy.default.describe()})"
        return Culprit(sample.id, note=note + _closest(result, verdict)), verdict
    row = first.row
    return (Culprit(sample.id, op=row.label, op_type=row.op_type, reason=first.reason,
                    value=_finite(first.value), order=row.order), verdict)


def _never_compared(result, per_op, ignore) -> str:
    """Why an entry naming no compared tensor names one of the model's ops never compared (a
    constant folded at conversion), as ``check_accuracy`` says it; "" where none does. It read
    "'bias_const' is not an op of model 'spiky_c'" of a Constant node of that model."""
    for what, entry in result.uncompared_entries(list(per_op or ()), ignore):
        if result.coverage.never_compared(entry)[0]:
            # without check_accuracy's "or list a mode without fusion": this check, in this
            # mode, stays untraced whatever else the marker lists (a review)
            return result.coverage.judges_nothing(what, entry, cli=True)
    return ""


def _closest(result, verdict) -> str:
    """Where no operator fails: the op closest to the threshold and the threshold that names
    it, "" where no figure was judged. It said "the flip comes from accumulated small errors",
    also where one op's noise fault (figure above the threshold) moved the whole output (a
    dataset trial: mAP 0.2461 -> 0.0000 from a detector's head alone)."""
    thr = verdict.policy.default
    scored = [(r.metrics.value(thr.metric), r) for r in result.rows if r.metrics is not None
              and not verdict.policy.is_ignored(r.names)]
    scored = [(v, r) for v, r in scored if v is not None and math.isfinite(v)]
    if not scored:
        return ""
    value, row = (min if thr.higher_is_better else max)(scored, key=lambda vr: vr[0])
    kind = f" ({row.op_type})" if row.op_type else ""
    others = [v for v, _ in scored if (v > value if thr.higher_is_better else v < value)]
    limit = ((min(others) if others else (1.0 if thr.metric == "cosine" else math.inf))
             if thr.higher_is_better else (max(others) if others else 0.0))
    naming = _naming_threshold(value, thr.higher_is_better, limit)
    names = (f"threshold={naming} names it" if naming else
             f"no threshold of 10 decimals names it alone (the next op's {thr.metric} is "
             f"{limit:.10g})")
    return (f"; the closest to it is #{row.order} {row.label}{kind} at {thr.metric} "
            f"{value:.10g}: {names} (every op differs this little, yet the figure moved: a "
            f"near-tie that float16 rounding tips, float16's rounding summed over the samples "
            f"a metric adds up, or one op's small but systematic difference, "
            f"such as a detector's boxes moved a few pixels, which the op that threshold names "
            f"shows)")


def _naming_threshold(value: float, higher: bool, limit: float) -> Optional[str]:
    """The shortest threshold (6 to 10 decimals) that ``value`` fails and the next op's figure
    ``limit`` meets (above ``value`` and at most ``limit`` where higher is better, else below
    it and at least ``limit``), so the op it names is the one at ``value``; None where there is
    none. It said "a threshold above that names it" of a cosine printed 1.000000: 0.9999999
    named nothing, and 1.0 named the first op with any float16 rounding (a dataset trial)."""
    for digits in range(6, 11):
        scale = 10 ** digits
        t = (math.floor(value * scale) + 1) / scale if higher else (
            math.ceil(value * scale) - 1) / scale
        if (value < t <= limit) if higher else (limit <= t < value):
            return f"{t:.{digits}f}"
    return None


def _uncached_golden(om, sample: Sample, tmp: Path):
    from ..golden.onnxruntime_golden import read_entry_dump, run_golden

    run_golden(om.model, sample.inputs, tmp, input_shape=om.input_shape)
    return read_entry_dump(tmp)  # laid out as a cache entry: tensors packed, an index


def _finite(value) -> Optional[float]:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None

"""A tensor of one value per sample along a known batch axis, judged sample by sample.

The rule, in one line: for a tensor whose first axis is the batch axis, each sample of one
element is judged as a check of that sample alone would judge it. The batch fails where some
sample alone would fail, and passes where every one would pass; a batch of 1 is a one-element
tensor, judged as before (``compare.one_element``).

Why: a batch of two Smart Turn clips gave its end-of-turn probability as ``[2, 1]``, 0.0064 and
0.114 golden against 0.0064 and 0.221; as a 2-vector its cosine was 0.9996 and it passed, where
the second clip alone failed the one-element rule by relative error 0.933 (audit 35).

Which tensors: those whose axis 0 is known to be the batch axis (``graph.batch_axis``: ONNX
shape inference gives it the ``dim_param`` of a graph input's axis 0 that the run feeds with
N > 1; the golden's ``meta["batch_axis"]``), matched by their golden op and output
(``batch_pairs.mark_batched``), and whose values number N, one per sample. Told by shape alone,
a seq-first per-frame logit ``[50, 1, 1]`` of a batch-1 model failed at cosine 1.000000 (review
RB); it is not batched here, as its model's axis 0 is a fixed 50. Only such tensors pay anything.

How: the compare, where the arrays are, keeps each sample's two values and dtypes
(``sample_values.BatchSamples``, in ``TensorMetrics.samples``, saved in compare.json), so that
judging again at any threshold (``CompareResult.judge``, ``ascend-accuracy judge``) works out
each sample's metrics as a one-element compare of it would (``metrics.compute_metrics``) and
judges them as that row alone (``result.judge_row``): its cosine (its sign: 0 against a value
is NaN and fails, a golden-0 sample the batch's ``max_rel`` counted as 0, review RB finding 3),
the one-element rule with its floor below float16's smallest normal worked out per sample (a
tiny probability beside a 0.6 failed by tensor-wide figures, RB finding 2), the scale guard,
per_op and ignore entries. The failure names the sample, its index along axis 0 and its values;
its per_op fix is the threshold its largest relative error needs (``largest_error``), which
passes every sample.
Where more than ``batch_pairs.MAX_SAMPLES`` values lie along the axis they are not kept and the
tensor is judged as a whole, as before.
"""
from __future__ import annotations

from dataclasses import replace

from .sample_errors import largest_error, sample_metrics
from .sample_values import BatchSamples


def sample_text(samples: BatchSamples, i: int) -> str:
    """``sample [1] of 2 along axis 0 (the inputs' dim 'batch') (golden 0.1142, device
    0.2208)``."""
    return (f"sample [{i}] of {len(samples)} along axis 0 (the inputs' dim {samples.axis!r}) "
            f"(golden {samples.golden[i]:.4g}, device {samples.actual[i]:.4g})")


def judge_samples(row, policy, keyed, judge):
    """``judge`` (``result.judge_row``) of a row holding ``samples``: each sample judged as
    its row alone, the row failing where one fails, by the failure of the sample that decides
    it (one no per_op threshold passes first, else the largest relative error: its fix passes
    every sample), named with its index and values."""
    from .one_element import ONE_ELEMENT
    from .rows import Failure

    s = row.metrics.samples
    alone = (1,) * max(len(row.golden_shape or row.shape), 1)
    failed = []
    for i, m in enumerate(sample_metrics(s)):
        _, f = judge(replace(row, metrics=m, shape=alone, golden_shape=alone), policy, keyed)
        if f is not None:
            failed.append((i, f))
    if not failed:
        return "passed", None
    others = [(i, f) for i, f in failed if not f.reason.startswith(ONE_ELEMENT)]
    if others:
        i, f = sorted(others, key=lambda x: x[1].severity())[0]
    else:
        i, f = max(failed, key=lambda x: x[1].row.metrics.value("rel_l2"))
    where = sample_text(s, i) + (f"; {len(failed)} of the {len(s)} samples fail"
                                 if len(failed) > 1 else "") + ", judged as that sample alone"
    if f.reason.startswith(ONE_ELEMENT):
        reason = f"{ONE_ELEMENT} {where}:{f.reason[len(ONE_ELEMENT):]}"
    else:
        reason = f"{f.reason}; at {where}"
    value = f.value  # the row's own figure where it meets the threshold too
    if f.would_pass is None and f.threshold.passed(value):
        whole = row.metrics.value(f.threshold.metric)
        value = whole if f.threshold.passed(whole) else value
    return "failed", Failure(row, f.threshold, value, reason, f.would_pass)


def failed_sample_figures(failure) -> str:
    """A one-element failure of a batched row, for the ``model outputs:`` line: ``sample [1]
    of 2: one element 0.1142 -> 0.2208, relative error 0.933``; "" for any other failure."""
    from .one_element import ONE_ELEMENT

    m = failure.row.metrics
    s = getattr(m, "samples", None)
    if s is None or not failure.reason.startswith(ONE_ELEMENT):
        return ""
    i, error = largest_error(s)
    if i is None:
        return ""
    return (f"sample [{i}] of {len(s)}: one element {s.golden[i]:.4g} -> {s.actual[i]:.4g}, "
            f"relative error {error:.3g}")


__all__ = ["sample_text", "judge_samples", "failed_sample_figures"]

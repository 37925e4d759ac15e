"""A first failure no conversion mode changes: a float32 output whose golden values all lie
below float16's smallest normal (2**-14). The compare's allowance for values that small
(``compare.tiny_values``) is for a float16 actual; a float32 one is judged by its plain figure,
and a cosine over values that small measures the float32 rounding of whatever computes them on
either side (onnxruntime's float32 Sigmoid near 0 gives multiples of 2**-25), not the device.
Keeping the op "in float32" changes nothing, since the run outputs it in float32 already: a
BatchNorm with a 1e9 variance, a Conv with a bias of -19 and a Sigmoid ``prob`` (golden below
6e-08), converted ``HIGH_PRECISION | FUSION_OFF``, failed at prob (cosine 0.612952, max abs
error below 1e-07) and printed ``keep_dtype(['prob'])``, which pasted failed the same and
printed itself again. The hint judges such an op by its size instead: a per_op entry of
``max_abs`` at float16's smallest normal, the distance below which float16 tells a value from
0 only on its subnormal grid (tests/plugin/test_hint_tiny_float32.py)."""
from __future__ import annotations

from typing import Dict, List

from ..compare.result import TensorCompare, Verdict
from .printable import printable

#: the bound an op judged by its size passes: float16's smallest normal, 2**-14 (printed
#: 6.1e-05, just under it)
TINY_BOUND = 6.1e-05
#: the metric judged
TINY_METRIC = "max_abs"

REASON = ("{label}'s golden values all lie below float16's smallest normal (|{peak:.3g}|) and "
          "this run outputs {them} in float32 already, so the {metric} measures the float32 "
          "rounding of values that small on either side (max abs error {error:.3g}), which no "
          "precision mode or keep_dtype changes")


def tiny_float32_rows(verdict: Verdict) -> List[TensorCompare]:
    """The failing rows that fail only by such a figure, in graph order, where the verdict's
    first failure is one of them, else ``[]``: a float32 (or wider) output, its golden values
    all below float16's smallest normal and not all 0, failing its threshold (no NaN/Inf
    mismatch, no other reason) while within ``TINY_BOUND`` of the golden everywhere, and judged
    by another metric than ``max_abs`` (the size is the figure that passes it)."""
    from ..compare.tiny_values import FP16_TINY
    from .fp16_fix_ops import FLOAT32_UP

    found = []
    for f in verdict.failures:
        r, m = f.row, f.row.metrics
        if (m is None or f.would_pass is None or m.mismatch or r.dtype not in FLOAT32_UP
                or "float" not in (r.golden_dtype or "float") or f.threshold.metric == TINY_METRIC
                or not 0 < m.max_abs_golden < FP16_TINY or not m.max_abs <= TINY_BOUND):
            continue
        found.append(r)
    first = verdict.first
    return found if first is not None and any(r is first.row for r in found) else []


def per_op_key(row: TensorCompare) -> str:
    """The per_op key naming ``row``'s tensor as the model spells it (its golden op, with the
    output where it is not the first)."""
    from .model_spelling import row_model_name

    name = row_model_name(row) or row.op_name
    return name if row.golden_slot in ("", "output:0") else f"{name}:{row.golden_slot}"


def per_op_entries(rows) -> Dict[str, Dict[str, float]]:
    """``{key: {"max_abs": TINY_BOUND}}`` for ``rows``, as a marker's ``per_op`` takes it."""
    return {per_op_key(r): {TINY_METRIC: TINY_BOUND} for r in rows}


def reason(verdict: Verdict, rows) -> str:
    """Why no mode is offered: the first row's figures (and how many more there are)."""
    first = rows[0]
    m = first.metrics
    metric = verdict.policy.threshold_for(first.names).metric
    more = len(rows) - 1
    label = printable(first.label) + (f" (and {more} more op{'s' if more != 1 else ''} like it)"
                                      if more else "")
    return REASON.format(label=label, peak=m.max_abs_golden, metric=metric, error=m.max_abs,
                         them="them" if more else "it")


def advice(rows, *, cli: bool = False, library: bool = False) -> str:
    """Judging the rows by their size, which passes them pasted: spelled for the marker and
    YAML, for the ``ascend-accuracy`` command (``cli``), or for ``assert_accuracy``
    (``library``)."""
    many = len(rows) > 1
    what = (f"judge {'them' if many else 'it'} by {'their' if many else 'its'} size instead, "
            "at most float16's smallest normal (2**-14) from the golden")
    keys = list(per_op_entries(rows))
    if cli:
        import shlex

        return what + ": " + " ".join(
            "--per-op " + shlex.quote(f"{k}={TINY_METRIC}:{TINY_BOUND:g}") for k in keys)
    shown = ", ".join(f"{k!r}: {{{TINY_METRIC!r}: {TINY_BOUND:g}}}" for k in keys)
    if library:
        return f"{what}: assert_accuracy(..., per_op={{{shown}}})"
    yaml = ", ".join(f"{_yaml_key(k)}: {{{TINY_METRIC}: {TINY_BOUND:g}}}" for k in keys)
    return (f"{what}: @accuracy(per_op={{{shown}}}) (YAML: per_op: {{{yaml}}}; "
            "check_accuracy(actual, golden, per_op=...) takes the same entries for one check)")


def _yaml_key(name: str) -> str:
    """``name`` as a YAML flow-mapping key (quoted where YAML would read it otherwise)."""
    import json
    import re

    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_./-]*", name) else json.dumps(name)

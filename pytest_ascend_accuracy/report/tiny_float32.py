"""A first failure that is float32 rounding alone: a float32 output whose golden values all lie
below float16's smallest normal (2**-14), computed from float32 values only, and within float32's
epsilon at 1.0 (2**-23) of the golden everywhere. The compare's allowance for values that small
(``compare.tiny_values``) is for a float16 actual (or a float32 one holding float16's values
only, passed on from a float16 op); a float32 one computed in float32 is judged by its plain
figure, and a cosine over values that small measures the float32 rounding of whatever
computes them on either side (a Sigmoid computed as 1 - e near 1 leaves errors up to float32's
epsilon there; onnxruntime's float32 Sigmoid near 0 gives multiples of 2**-25), not the device.

Two things must hold before the hint judges such an op by its size:

- nothing upstream of it outputs float16 (``float16_upstream``): a BatchNorm with a 1e9
  variance, a Conv ``head`` with a bias of -19 and a Sigmoid ``prob`` (golden below 6e-08),
  converted ``HIGH_PRECISION | FUSION_OFF``, failed at prob (cosine 0.612952, max abs error
  5.96e-08) and was told no mode changes it, while ``--accuracy-diagnose`` found
  ``keep_dtype(['head'])`` restoring cosine 1.000000: head runs on the Cube unit, which high
  precision still runs in float16. Such a failure gets those producers kept in float32 instead
  (``hints.next_step``), and once they are, nothing upstream is float16;
- its error is no larger than float32 arithmetic leaves near such values: 2**-23, float32's
  epsilon at 1.0 (a bound of float16's smallest normal passed a transposed H/W layout whose
  error was 95% of the golden's peak, a review).

The entry advised is ``max_abs`` at 1.2e-07 (2**-23 rounded up), merged into the check's own
per_op entries (a printed ``per_op={'prob': ...}`` pasted over ``per_op={'head': 1e-3}`` lost
head's entry and failed there: tests/plugin/test_hint_tiny_float32.py)."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from ..compare.result import TensorCompare, Verdict
from ..compare.thresholds import per_op_flags, per_op_python, written_per_op
from ..core.yaml_text import yaml_flow_map
from .printable import printable

#: float32's epsilon at 1.0: the largest error float32 arithmetic leaves on values computed
#: near 1 (a sigmoid as 1 - e), and the most a float32 tiny output may differ by here
FLOAT32_EPS = 2.0 ** -23
#: the bound advised: ``FLOAT32_EPS`` rounded up, so that an error of it passes pasted
TINY_BOUND = 1.2e-07
#: the metric judged
TINY_METRIC = "max_abs"
#: dtypes a float16 producer outputs
FLOAT16_DTYPES = ("float16", "bfloat16")

REASON = ("{label}'s golden values all lie below float16's smallest normal (|{peak:.3g}|), this "
          "run outputs {them} in float32 and nothing upstream outputs float16, so the {metric} "
          "measures the float32 rounding of values that small on either side (max abs error "
          "{error:.3g}, within float32's epsilon at 1.0, 2**-23), which no precision mode or "
          "keep_dtype changes")

FED_REASON = ("{label}'s golden values all lie below float16's smallest normal (|{peak:.3g}|) "
              "and this run outputs it in float32, but {ops} upstream of it output{s} float16 "
              "(a Cube op stays float16 in high precision), whose rounding its {metric} may "
              "carry")


def tiny_float32_rows(verdict: Verdict) -> List[TensorCompare]:
    """The failing rows that fail only by such a figure, in graph order, where the verdict's
    first failure is one of them, else ``[]``: a float32 (or wider) output, its golden values
    all below float16's smallest normal and not all 0, failing its threshold (no NaN/Inf
    mismatch, no other reason) while within ``FLOAT32_EPS`` of the golden everywhere, and judged
    by another metric than ``max_abs`` (the size is the figure that passes it)."""
    from ..compare.tiny_values import FP16_TINY
    from .fp16_fix_ops import FLOAT32_UP

    found = []
    for f in verdict.failures:
        r, m = f.row, f.row.metrics
        if (m is None or f.would_pass is None or m.mismatch or r.dtype not in FLOAT32_UP
                or "float" not in (r.golden_dtype or "float") or f.threshold.metric == TINY_METRIC
                or not 0 < m.max_abs_golden < FP16_TINY or not m.max_abs <= FLOAT32_EPS):
            continue
        found.append(r)
    first = verdict.first
    return found if first is not None and any(r is first.row for r in found) else []


def float16_upstream(verdict: Verdict, rows: Sequence[TensorCompare], golden=None, model=None,
                     mode=None):
    """``hints.Upstream`` of the first tiny row (``tiny_float32_rows``): ``chain``, the ops
    upstream of it, by their model names in graph order, whose outputs are float16 (their
    rows' dtype, or a Cube op, which high precision still runs in float16) and that ``mode``
    does not keep already; ``cube``, the Cube ops among them. Upstream by the graph's edges
    (``compare.fp16_range.ops_upstream``, from ``model`` or ``golden``'s operand files), else
    every row before it in graph order (an op earlier need not feed it: keeping it is harmless).
    None where the first failure is no tiny row."""
    from ..core.ascend_optypes import is_cube
    from .upstream import Upstream, feeding_ops
    from .model_spelling import row_model_name

    tiny = tiny_float32_rows(verdict)
    if not tiny:
        return None
    first = next(r for r in tiny if r is verdict.first.row)
    kept = set(mode.keep_dtype) if mode is not None else set()
    every = mode is not None and mode.precision_mode == "must_keep_origin_dtype"

    def float16(name: str, op_type: str, row: Optional[TensorCompare]) -> bool:
        if name in kept or every:
            return False
        return (row is not None and row.dtype in FLOAT16_DTYPES) or (
            is_cube(op_type))

    _, up = feeding_ops(first, golden, model)
    found: Dict[str, str] = {}
    if up is not None:
        by_name = {}
        for r in rows:
            for n in (r.golden_name, *r.original_names):
                by_name.setdefault(n, r)
        for name, op_type in up.items():
            row = by_name.get(name)
            if float16(name, op_type or (row.op_type if row else ""), row):
                found[name] = op_type
    else:
        for r in rows:
            name = row_model_name(r) or r.op_name
            if r.order < first.order and r is not first and float16(name, r.op_type, r):
                found[name] = r.op_type
    return Upstream(tuple(n for n, t in found.items() if is_cube(t)),
                    tuple(found))


def per_op_key(verdict: Verdict, row: TensorCompare, keyed: frozenset = frozenset()) -> str:
    """The per_op key naming ``row``'s tensor: the check's own entry naming it exactly where it
    has one (a tensor key ``prob:output:0`` is taken before ``prob``: a new ``prob`` entry
    beside it would judge nothing), else its golden op as the model spells it, with the output
    where it is not the first, or where its op is one of ``keyed`` (``compare.result.
    tensor_keyed``: ops with other compared outputs): an op's name sets the threshold of every
    output of it (a review: silero_vad.onnx's one-element fix ``{If_0: 0.997592}`` passed
    If_0's state output too, and a split's ``{split: 0.83}`` passed its other output at cosine
    0.879)."""
    from .model_spelling import row_model_name

    others = row.op_name in keyed
    key = verdict.policy.threshold_key(row.names)
    if (key is not None and not any(ch in key for ch in "*?[")
            and not (others and ":" not in key)):  # (the op's own entry judges its others)
        return key
    name = row_model_name(row) or row.op_name  # (an exact name is taken before any glob)
    if row.golden_slot in ("", "output:0") and not others:
        return name
    return f"{name}:{row.golden_slot or 'output:0'}"


def per_op_entries(verdict: Verdict, rows) -> Dict[str, object]:
    """``with_own_entries`` of ``{key: {"max_abs": TINY_BOUND}}`` for ``rows``."""
    return with_own_entries(verdict, {per_op_key(verdict, r): {TINY_METRIC: TINY_BOUND}
                                      for r in rows})


def with_own_entries(verdict: Verdict, new: Dict[str, object]) -> Dict[str, object]:
    """The check's own per_op entries as written (a number for its metric, ``{metric: value}``
    for another), then ``new`` (an existing entry of the same key gives way to it): the
    ``per_op`` to paste in place of the check's own."""
    out: Dict[str, object] = {name: value for name, value
                              in written_per_op(verdict.policy).items() if name not in new}
    out.update(new)
    return out


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


def fed_reason(verdict: Verdict, upstream) -> str:
    """Why the float16 producers upstream of the first failure are to be kept first."""
    first = verdict.first.row
    names = upstream.chain
    ops = ", ".join(printable(n) for n in names[:3]) + (", ..." if len(names) > 3 else "")
    metric = verdict.policy.threshold_for(first.names).metric
    return FED_REASON.format(label=printable(first.label), peak=first.metrics.max_abs_golden,
                             ops=ops, s="" if len(names) > 1 else "s", metric=metric)


#: what keeping the float16 producers shows, pasted
FED_ADVICE = ("keep {them} in float32 to see whether that rounding is the cause (passes: it is; "
              "still failing, nothing upstream is float16 and the hint says how to judge it)")


def advice(verdict: Verdict, rows, *, cli: bool = False, library: bool = False) -> str:
    """Judging the rows by their size, which passes them pasted: spelled for the marker and
    YAML, for the ``ascend-accuracy`` command (``cli``: ``--per-op`` adds to the command's
    own), or for ``assert_accuracy`` (``library``); the marker's, YAML's and assert_accuracy's
    ``per_op`` hold the check's own entries too."""
    many = len(rows) > 1
    what = (f"judge {'them' if many else 'it'} by {'their' if many else 'its'} size instead, "
            "at most float32's epsilon at 1.0 (2**-23, rounded up) from the golden")
    entries = per_op_entries(verdict, rows)
    if cli:
        return what + ": " + per_op_flags({per_op_key(verdict, r): {TINY_METRIC: TINY_BOUND}
                                           for r in rows})
    shown = per_op_python(entries)
    if library:
        return f"{what}: assert_accuracy(..., per_op={{{shown}}})"
    return (f"{what}: @accuracy(per_op={{{shown}}}) (YAML: per_op: {yaml_flow_map(entries)}; "
            "check_accuracy(actual, golden, per_op=...) takes the same entries for one check)")


def text_hint(verdict: Verdict, result=None, golden=None, mode=None, *, cli: bool = False
              ) -> Optional[str]:
    """``failure_text.default_hint``'s hint for a tiny float32 first failure, else None: its
    float16 producers kept in float32 (``float16_upstream``, ``golden``'s operand files telling
    the edges), as an ``ascend-accuracy diagnose`` command (``cli``) or a mode for
    ``assert_accuracy``'s caller, or, where nothing upstream is float16, its size judged."""
    tiny = tiny_float32_rows(verdict)
    if not tiny:
        return None
    rows = result.rows if result is not None else [f.row for f in verdict.failures]
    fed = float16_upstream(verdict, rows, golden, mode=mode)
    if fed is None or not fed.chain:
        return f"{reason(verdict, tiny)}: " + advice(verdict, tiny, cli=cli, library=not cli)
    from ..core.modes import keep_dtype
    from .cli_commands import cli_diagnose, not_carried
    from .upstream import CHAIN_LIMIT

    why = fed_reason(verdict, fed)
    them = "it" if len(fed.chain) == 1 else "them"
    if cli:
        if len(fed.chain) > CHAIN_LIMIT:
            return (f"{why}: {cli_diagnose(verdict, None, result)} tries high precision and "
                    "keeping every op in float32, and where that passes names a small set of "
                    "ops to keep in float32" + not_carried(result))
        return (f"{why}: keep {them} in float32 to see whether that rounding is the cause: "
                f"{cli_diagnose(verdict, keep_dtype(list(fed.chain)), result)} passes with exit "
                "status 0 where it is" + not_carried(result))
    if len(fed.chain) > CHAIN_LIMIT:
        return (f"{why}: diagnose(model, inputs, threshold=...) tries keeping every op in "
                "float32 and names a small set to keep (from pytest_ascend_accuracy.triage.flow "
                "import diagnose)")
    kept = keep_dtype(list(fed.chain)) if mode is None else mode | keep_dtype(list(fed.chain))
    shown = kept.python_expr() + (" added to the run's own mode" if mode is None else "")
    return (f"{why}: " + FED_ADVICE.format(them=them) + f", converting in mode {shown} "
            f"(from pytest_ascend_accuracy import {', '.join(kept.python_imports())})")

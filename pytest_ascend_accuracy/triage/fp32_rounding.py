"""What the diagnosis concludes where no mode passes and keeping every op in float32 fails too:
float32 rounding the threshold is finer than, or a fault.

The flow ended every such diagnosis "check the operator implementations against the
reference". Audit 35 (pipecat's Smart Turn v3.2, a QDQ-quantised Whisper-tiny encoder, on the
emulator with no fault injected): with every op kept in float32 the run differed from the golden
from the first MatMul on by float32 rounding only (``node_linear_1``: max abs error 4.8e-06 on
values up to 4.6, about 10 float32 ulps there; the conversion folds the weights'
DequantizeLinear into constants, and onnxruntime's MatMul with a constant B sums in another
order than the golden's, whose B comes from a DequantizeLinear at run time), then one uint8
code flipped across a rounding boundary (``linear_1_QuantizeLinear``, 97 vs 96), and the QDQ
chain after it amplified that to cosine 0.91 four layers on: no operator was at fault.

So where the all-float32 run (step 2 ``keep_dtype_all``, under the flow's own mode) fails, its
differences from the golden are walked in graph order (``walk``): a float32 output within
``ROUNDING_ULPS`` float32 ulps of its largest golden value is float32 rounding (another
summation order; 64 ulps is 2**-17 of that value, 1/32 of float16's half step, which every op
run in float16 leaves), an integer output differing after such rounding is a quantiser's (or
a selection's) code flip, which rounding across a boundary makes; the first difference that is
neither is beyond rounding. Where none is, or the first one follows a code flip (the QDQ ops
after a flipped code carry a whole quantisation step), the verdict says the threshold is finer
than the model's own float32 rounding, and gives the figure the all-float32 run passes at
(``Verdict.passing_threshold``, or per_op entries for the ops it fails at where they are few),
with what it does pasted, measured on the runs at hand: the check under the flow's own mode
passes at it, or still fails there and a rerun of the diagnosis at it, where keeping every op
in float32 passes, names the ops to keep. Where the first difference is beyond rounding with
no code flip before it (a fault injected with the emulator's ``--fault``, an operator computing
something else), the operators are still blamed, and that op is named.

A fault after a code flip reads as amplification: the verdict says which op the rounding
starts at, so the chain can be checked by hand.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional, Tuple

import numpy as np

from ..compare.rows import TensorCompare
from ..report.printable import printable
from .result import PLUGIN_BUDGET_OPTION

#: float32 ulps (at a tensor's largest golden value) within which a float32 output's error is
#: float32 rounding: 2**-17 of that value, 1/32 of float16's half step there
ROUNDING_ULPS = 64
#: dtypes computed in float32 or wider
FLOAT32_UP = ("float32", "float64")
#: the ops the all-float32 run fails at that per_op entries are offered for, at most
PER_OP_LIMIT = 3
#: the flow's words where the all-float32 run differs beyond rounding (or was not run)
BLAME = "check the operator implementations against the reference"


@dataclass(frozen=True)
class Fp32Walk:
    """The all-float32 run's differences from the golden: ``first``, the first row differing;
    ``flip``, the first integer row differing after rounding; ``beyond``, the first difference
    that is neither rounding nor a flip (None: none)."""

    first: Optional[TensorCompare]
    flip: Optional[TensorCompare]
    beyond: Optional[TensorCompare]

    @property
    def rounding(self) -> bool:
        """Whether the differences are float32 rounding, amplified by code flips at most."""
        return self.first is not None and (self.beyond is None or (
            self.flip is not None and self.flip.order < self.beyond.order))


def ulps(row: TensorCompare) -> float:
    """``row``'s max abs error in float32 ulps at its largest golden value (inf where it has
    none to measure by)."""
    m = row.metrics
    peak = m.max_abs_golden
    if not (m.max_abs == m.max_abs and peak == peak and math.isfinite(peak)) or peak <= 0:
        return math.inf
    return float(m.max_abs) / float(np.spacing(np.float32(peak)))


def _differs(row: TensorCompare) -> bool:
    m = row.metrics
    return bool(m.mismatch or m.unequal or (m.max_abs == m.max_abs and m.max_abs > 0))


def _integer(row: TensorCompare) -> bool:
    return bool(row.dtype) and ("int" in row.dtype or row.dtype == "bool")


def _rounding(row: TensorCompare) -> bool:
    m = row.metrics
    return (row.dtype in FLOAT32_UP and "float" in (row.golden_dtype or "float")
            and not m.mismatch and ulps(row) <= ROUNDING_ULPS)


def walk(result) -> Fp32Walk:
    """``Fp32Walk`` of ``result`` (a ``CompareResult``: the all-float32 run against the golden),
    its output rows in graph order."""
    rows = sorted((r for r in result.rows if r.metrics is not None
                   and r.slot.startswith("output")), key=lambda r: r.order)
    first = flip = None
    for r in rows:
        if not _differs(r):
            continue
        if first is None:
            first = r
            if _rounding(r):
                continue
            return Fp32Walk(first, None, r)
        if _rounding(r):
            continue
        if _integer(r) and ("Quant" not in r.op_type or r.metrics.max_abs <= 1):
            flip = flip or r
            continue
        return Fp32Walk(first, flip, r)
    return Fp32Walk(first, flip, None)


def _kept_run(flow):
    """The all-float32 run under the flow's own mode (step 2 ``keep_dtype_all``), else None."""
    from .branch_keep import every_kept_mode

    default = flow.run.memo.get(replace(flow.base, label=None))
    if default is None:
        return None
    every = every_kept_mode(flow.base, default, flow.run.model)[0]
    return flow.run.memo.get(replace(every, label=None))


def _label(row: TensorCompare) -> str:
    kind = f" ({row.op_type})" if row.op_type else ""
    return f"{printable(row.label)}{kind}"


def _size(row: TensorCompare) -> str:
    m = row.metrics
    return (f"max abs error {m.max_abs:.3g} on values up to |{m.max_abs_golden:.3g}|, "
            f"{ulps(row):.3g} float32 ulps there")


def conclusion(flow, default) -> str:
    """The end of the NOT RESTORED verdict of ``flow`` (``flow._Flow``) whose run under its own
    mode is ``default``: the float32-rounding finding where the all-float32 run's differences
    are rounding (module docstring), else ``BLAME`` (after the op the all-float32 run
    differs at beyond rounding, where it was run: the verdict still ends with it)."""
    kept = _kept_run(flow)
    if kept is None or kept.passed or kept.verdict.first is None:
        return BLAME
    found = walk(kept.result)
    if found.first is None:
        return BLAME
    if not found.rounding:
        row = found.beyond
        from .cube_keeps import float16_cube_inputs  # its float16 inputs, not a fault
        cube = float16_cube_inputs(row, flow.run.backend, f"{_label(row)} ({_size(row)})")
        if cube:
            return cube
        return (f"keeping every op in float32, the run differs from the golden first at op "
                f"{_label(row)} beyond float32 rounding ({_size(row)}, more than "
                f"{ROUNDING_ULPS}): {BLAME}")
    from .verdict_view import _why

    fails = kept.verdict.first
    text = (f"no operator is shown at fault: keeping every op in float32 fails too, at op "
            f"{printable(fails.row.label)} ({fails.row.op_type + ': ' if fails.row.op_type else ''}"
            f"{_why(fails)}), yet that run differs from the golden first "
            f"at op {_label(found.first)} by float32 rounding only ({_size(found.first)}, "
            f"within {ROUNDING_ULPS}: float32 arithmetic in another order, such as a weight's "
            f"DequantizeLinear folded into a constant at conversion)")
    if found.flip is not None:
        text += (f", then at op {_label(found.flip)} integer codes flip across a rounding "
                 f"boundary (by up to {found.flip.metrics.max_abs:g} code), which the ops after it "
                 f"amplify (a flipped quantisation code carries a whole quantisation step)")
    text += ("; the threshold is finer than this model's own float32 rounding, which no "
             "conversion mode changes")
    return text + _figure(flow, default, kept)


def _figure(flow, default, kept) -> str:
    """``; to judge ...: a looser threshold ...`` with what it does pasted, or "": the loosest
    threshold passing the all-float32 run's failures that the default threshold judges, with
    per_op entries for the others (one-element tensors, ops of their own entry), each at the
    figure that run reaches; and per_op entries alone where the failing ops are few. Each is
    offered only where the all-float32 run, judged by it, passes."""
    verdict = kept.verdict
    out = []
    value, entries = _loosest(verdict)
    if entries is not None and (value is not None or entries):
        policy = _policy(verdict, value, entries)
        if kept.result.judge(policy).passed:
            out.append(f"a looser threshold, {_spelled(flow, verdict, value, entries)}, "
                       f"{_pasted(flow, default, policy)}")
    alone = _per_op(verdict)
    if alone is not None and alone != entries:
        policy = _policy(verdict, None, alone)
        if kept.result.judge(policy).passed:
            out.append(f"per_op entries for the op{'s' if len(alone) > 1 else ''} it fails at, "
                       f"each at the figure the all-float32 run reaches, "
                       f"{_spelled(flow, verdict, None, alone)}, "
                       f"{_pasted(flow, default, policy)}")
    if not out:
        return ""
    return "; to judge the model within its own float32 rounding: " + "; or ".join(out)


def _figure_of(f) -> Optional[float]:
    """The loosest threshold passing failure ``f``: its ``would_pass``, or a one-element
    tensor's cosine threshold its relative error needs (``compare.one_element``), else None."""
    from ..compare.one_element import ONE_ELEMENT, fix_threshold

    if f.would_pass is not None:
        return f.would_pass if f.threshold.advisable(f.would_pass) else None
    if f.reason.startswith(ONE_ELEMENT) and f.row.metrics is not None:
        return float(fix_threshold(f.row.metrics))
    return None


def _entry(verdict, f) -> dict:
    from ..report.tiny_float32 import per_op_key

    value = _figure_of(f)
    own = value if f.threshold.metric == verdict.policy.default.metric else {
        f.threshold.metric: value}
    return {per_op_key(verdict, f.row): own}


def _loosest(verdict):
    """(the loosest default threshold passing the failures it judges, or None where it judges
    none; {per_op key: figure} for the other failures), or (None, None) where a failure has
    no figure."""
    from ..compare.one_element import ONE_ELEMENT

    default = verdict.policy.default
    values, entries = [], {}
    for f in verdict.failures:
        if _figure_of(f) is None:
            return None, None
        if (verdict.policy.threshold_key(f.row.names) is None and f.fixable
                and not f.reason.startswith(ONE_ELEMENT)):
            values.append(f.would_pass)
        else:
            entries.update(_entry(verdict, f))
    if not values:
        return None, entries
    value = min(values) if default.higher_is_better else max(values)
    return (value, entries) if default.advisable(value) else (None, None)


def _policy(verdict, value, entries):
    from ..compare.thresholds import Policy
    from ..report.tiny_float32 import with_own_entries

    p = verdict.policy
    default = p.default if value is None else p.default.with_value(value)
    return Policy.build(default, with_own_entries(verdict, entries) or None, p.ignore,
                        p.default.metric, p.scale_tolerance)


def _spelled(flow, verdict, value, entries) -> str:
    """``value`` and ``entries`` as the caller pastes them: the test's @accuracy(...) and
    YAML for the plugin, the command's options (and diagnose()'s) otherwise."""
    from ..compare.thresholds import per_op_flags, per_op_python, threshold_text
    from ..core.yaml_text import yaml_flow_map
    from ..report.tiny_float32 import with_own_entries

    merged = with_own_entries(verdict, entries) if entries else {}
    python, yaml = [], []
    if value is not None:
        python.append(f"threshold={threshold_text(value)}")
        yaml.append(f"threshold: {threshold_text(value)}")
    if merged:
        python.append(f"per_op={{{per_op_python(merged)}}}")
        yaml.append(f"per_op: {yaml_flow_map(merged)}")
    if flow.budget_option == PLUGIN_BUDGET_OPTION:
        return (f"{', '.join(python)} in the test's @accuracy(...) (YAML: "
                f"{'; '.join(yaml)})")
    shell = ([f"--threshold {threshold_text(value)}"] if value is not None else []) + (
        [per_op_flags(entries)] if entries else [])
    return f"{' '.join(shell)} ({', '.join(python)} in diagnose(...))"


def _pasted(flow, default, policy) -> str:
    """What a figure does pasted, measured on the run under the flow's own mode."""
    verdict = default.result.judge(policy)
    if verdict.passed:
        return f"which the check passes under {flow.base.name} as it is"
    first = verdict.first
    where = f" (at op {printable(first.row.label)})" if first is not None else ""
    again = ("rerun the test with it and --accuracy-diagnose"
             if flow.budget_option == PLUGIN_BUDGET_OPTION else "rerun this diagnosis with it")
    return (f"at which {flow.base.name} still fails{where} but keeping every op in float32 "
            f"passes: {again} to find the ops to keep in float32")


def _per_op(verdict) -> Optional[dict]:
    """{per_op key: the figure passing it} for the ops the all-float32 run fails at, where
    there are at most ``PER_OP_LIMIT`` and each has one; else None."""
    if not verdict.failures or len(verdict.failures) > PER_OP_LIMIT:
        return None
    entries = {}
    for f in verdict.failures:
        if _figure_of(f) is None:
            return None
        entries.update(_entry(verdict, f))
    return entries


__all__: Tuple[str, ...] = ("ROUNDING_ULPS", "Fp32Walk", "conclusion", "ulps", "walk")

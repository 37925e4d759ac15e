"""The "next step" of a failed check, in the failing test's own mode, as text a user pastes.

A hint is a contract (tests/plugin/test_hints_contract.py applies each kind verbatim):

- ``keep_dtype`` (values or golden operands leave the float16 range at or before the first
  failing op (``fp16_fix_ops.explains_first``; after it only: ``modes``, no op list, the
  reason saying so, and ``--accuracy-diagnose``; an underflow only: the fallback, its
  flushes named; likewise where a kept op takes values float16 rounded already below its
  smallest normal from an op not kept, ``rounded_upstream.rounded_feeds``): past 65504, or
  flushed to 0,
  ``compare.fp16_range``, which also names the op producing an operand that flushes, and looks
  at the operands of the ops feeding the failures that are ignored, or that pass a loosened
  threshold the default check fails: the printed "threshold that would pass", pasted, must not
  hide the overflow it passed): the ops to keep in float32,
  printed as the mode to paste into ``modes=[...]`` (``FUSION_OFF | keep_dtype([...])`` when the
  test ran ``fusion_off``) and as the YAML ``modes:`` entry; with the test's mode plus
  high precision as the alternative, except where one of the ops runs on the Cube unit
  (``failure_text.high_precision_may_fix``, or a Cube op among the range findings: high
  precision still feeds it float16), or where an op whose golden values all lie below float16's
  smallest normal fails or passes only by float16's allowance for them
  (``failure_kinds.tiny_failing``: high precision outputs it in float32, judged plainly). Applied,
  the failing ops pass; where a failing op after the first loses values of its own to float16
  (``fp16_fix_ops._promise``, reading the later failing ops' findings), the reason says it may
  still fail, naming that op, and the advice adds ``--accuracy-diagnose``, whose fix passes.
  An overflowing Cube op it keeps brings the float16 ops computing its operands
  (``overflow_feeds``), the list saying it may still fail where float16 values lie further up.
  It never names an op only for its own values where the run outputs it in float32 already
  (``fp16_fix_ops.float32_already``), nor offers the test's own mode.
- ``per_op`` (the first failure a float32 output whose golden values all lie below float16's
  smallest normal, computed from float32 values only, within float32's epsilon at 1.0 of the
  golden: ``report.tiny_float32``): the check's per_op entries with one judging it by
  ``max_abs`` at 2**-23 (rounded up), for the marker and YAML; applied, it passes. Where ops
  upstream of it output float16 (a Cube op in high precision), ``modes`` instead: the test's
  mode with them kept in float32 (``--accuracy-diagnose`` past ``CHAIN_LIMIT``).
- ``modes`` (no overflow seen): the test's mode with fusion off, and with buffer reuse off, to
  compare; applied, they convert and run, and say whether a fusion pass or buffer reuse is
  the cause; where neither passes (float16 rounding under a tight threshold),
  ``--accuracy-diagnose``, whose fix passes pasted. On the emulator, which does not emulate
  buffer reuse (``emulated_probes``), the hint says buffer reuse off repeats the verdict there,
  and offers no probe where that one is all that is left (the test's fusion already off, or no
  op of the run fused: fusion off repeats it too, ``if_branches.nothing_fused``). A failing
  ``If`` the device runs as one operator has the golden tensors of the branch that ran looked
  at (``compare.branch_range``): values past float16 there name no mode (keep_dtype refuses a
  branch op's name, high precision still feeds a Cube op float16), ``--accuracy-diagnose``,
  whose fix passes pasted; a branch not read is said not looked at (``if_branches``).
  When the first failure is integer values that differ (an ArgMax index, a Cast to int:
  compared exactly), the test's mode in high precision instead, which says whether
  float16 rounding moved them; where a Cube op computes them (high precision still feeds it
  float16), the test's mode with the ops computing them kept in float32 (``--accuracy-diagnose``
  where those are more than ``CHAIN_LIMIT`` or not known). NaN/Inf where the golden stays within
  float16: high precision as a probe, or where the op turning NaN/Inf runs on the Cube unit,
  its own ops kept in float32 (``failure_kinds.cube_ops_kept``).
- ``float16_model`` (the first failing op is one the ONNX model itself computes in float16,
  ``float16_model.in_float16``, where the hint would keep ops in float32 or probe with high
  precision: neither makes a float16 op float32): no mode; export the model in float32 (or,
  where it casts to float16 before that op, drop that Cast) and check that export, whose hint
  then applies.
- ``problem`` (nothing matched): how to make the dumps comparable (``PROBLEM_ADVICE``, from
  ``failure_text``: the device dump read with ``load_dump(DIR, om_json=...)`` and passed to
  ``check_accuracy``; with ``problem_advice``, another caller's own spelling).
- ``ignore`` (every failure is an op with no golden tensor, "not compared"): the ``ignore=``
  marker argument and YAML ``ignore:`` entry that accept them; applied, the test passes.
- ``aipp`` (a model with an AIPP op fails at its first compared operator): check the
  pre-processing (step 5) before blaming that operator: ``--accuracy-diagnose``, or the shell
  command with the AIPP file named (``aipp_advice``) and what to fill in for the rest.

Names are the model's own (never the sanitized spelling of dump file names).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import List, Optional, Sequence

from .upstream import CHAIN_LIMIT, Upstream  # noqa: F401  (callers read them here too)
from .failure_text import PROBLEM_ADVICE  # (the plugin's problem hint: next_step's default)

KEEP_DTYPE, MODES, PROBLEM, AIPP, IGNORE = "keep_dtype", "modes", "problem", "aipp", "ignore"
PER_OP, FLOAT16_MODEL = "per_op", "float16_model"

#: what ``--accuracy-diagnose`` does when fusion and buffer reuse are off already (``triage.flow``:
#: high precision, every op kept in float32, then the search for a small keep_dtype set)
DIAGNOSE_ADVICE = ("run with --accuracy-diagnose: it tries high precision and keeping every op "
                   "in float32, and where that passes names a small set of ops to keep in "
                   "float32 as a mode to paste")

#: the no-overflow hint's modes and what to run where neither passes
COMPARE_ADVICE = ("compare with these modes to see whether a fusion pass or buffer reuse causes "
                  "the first failure; where neither passes (float16 rounding alone, which "
                  "neither changes), " + DIAGNOSE_ADVICE)


@dataclass(frozen=True)
class Hint:
    """A next step: ``kind``, the reason, and the modes it suggests (first one is the fix)."""

    kind: str
    reason: str
    modes: tuple = ()  # Mode values, the suggested one first
    advice: str = ""
    #: the failing model's name where its test converts other models too: the modes are then
    #: given as an argument of that model's ``ascend_model`` call, since the marker's
    #: ``modes=[...]`` converts every model with them (keep_dtype names the other models lack
    #: are refused); ``base``: the test's own mode there (``model_argument``)
    model: str = ""
    base: object = None

    def lines(self) -> List[str]:
        """The ``next step:`` block: the reason, then each mode as Python and as YAML (or as
        one model's ``ascend_model`` argument, ``model``)."""
        if not self.modes:
            return [f"next step: {self.reason}{': ' + self.advice if self.advice else ''}"]
        if self.model:
            pinned = any(model_argument(m, self.base).startswith("mode=") for m in self.modes)
            out = [f"next step: {self.reason}; {self.advice}, in the ascend_model call of "
                   f"{self.model} alone (this test converts other models too, which the "
                   "marker's modes=[...] would convert the same way"
                   + ("; mode= sets that call's mode in every parametrization of the test"
                      if pinned else "") + "):"]
        else:
            out = [f"next step: {self.reason}; {self.advice}:"]
        imported = []  # the modes given as Python expressions (keep_dtype=[...] imports nothing)
        for k, mode in enumerate(self.modes):
            lead = "  " if k == 0 else "  or "
            if self.model:
                argument = model_argument(mode, self.base)
                out.append(f"{lead}{argument}")
                if argument.startswith("mode="):
                    imported.append(mode)
                continue
            imported.append(mode)
            out.append(f"{lead}modes=[{mode.python_expr()}]")
            out.append(f"    YAML: modes: [{mode.yaml_form()}]")
        names = list(dict.fromkeys(n for m in imported for n in m.python_imports()))
        if names:
            out.append(f"  (from pytest_ascend_accuracy import {', '.join(names)})")
        return out

    def text(self) -> str:
        return "\n".join(self.lines())

    def one_line(self) -> str:
        """The same advice on one line (JUnit property, terminal summary)."""
        if not self.modes:
            return self.reason + (f": {self.advice}" if self.advice else "")
        if self.model:
            return (f"{self.reason}; {self.advice}, in the ascend_model call of {self.model} "
                    "alone: " + " or ".join(model_argument(m, self.base) for m in self.modes))
        return f"{self.reason}; {self.advice}: " + " or ".join(
            f"modes=[{m.python_expr()}]" for m in self.modes)


def model_argument(mode, base=None) -> str:
    """``mode`` as the argument of one ``ascend_model(...)`` call: ``keep_dtype=[...]`` where it
    is ``base`` (the test's own mode) with ops kept, which that argument adds to whatever mode
    the test is parametrized with (``mode=`` pinned one parametrization's mode on every other:
    a docs trial), else ``mode=...``."""
    if (base is not None and mode.with_keep_dtype(()) == base.with_keep_dtype(())
            and set(mode.keep_dtype) > set(base.keep_dtype)):
        # every name, those the call already keeps too: the argument replaces the call's own
        # list (listing only the new ones sent a call with keep_dtype=["mm1"] to ["mm2"] and
        # back: a review); names the marker's mode keeps as well are harmless repeats
        return f"keep_dtype={list(mode.keep_dtype)!r}"
    return f"mode={mode.python_expr()}"


def next_step(verdict, range_inputs: Sequence = (), mode=None, *,
              problem_advice: str = PROBLEM_ADVICE, upstream=None, rows: Sequence = (),
              dump_kind: str = "", model=None, buffer_neutral: bool = False,
              unfused: bool = False) -> Hint:
    """The hint for a failed ``verdict`` of a test converted under ``mode`` (a ``Mode``);
    ``problem_advice``: how the caller's user makes two dumps comparable; ``upstream``: an
    ``Upstream``, what feeds a first failure of integer values (``integer_upstream``) or of tiny
    float32 values (``tiny_float32.float16_upstream``); ``rows``: the compared rows, where known
    (``failure_kinds.tiny_failing`` reads the passing ones); ``dump_kind``: the actual dump's
    ``DumpSet.kind`` (``ascend``: its dtypes are the device's own, which with ``mode`` tell an
    op output in float32 already: ``fp16_fix_ops.float32_already``); ``model``: the ONNX model
    the golden ran, where known, which says whether the failing op computes in float16 there
    (``float16_model.in_float16``: no mode makes such an op match its float16 golden, a float32
    export does); ``buffer_neutral``: the run's backend cannot change its values with buffer
    reuse off (the emulator: ``emulated_probes.buffer_off_neutral``), which the no-overflow
    hint then says, or offers no such probe where it is the only one; ``unfused``: no op of
    the emulated run is fused (``if_branches.nothing_fused``), so fusion off is not offered
    either. A failing If whose branch's golden values leave the float16 range
    (``compare.branch_range``) gets ``--accuracy-diagnose``, no mode (``if_branches``)."""
    from ..core.modes import BUFFER_OFF, DEFAULT, FUSION_OFF, HIGH_PRECISION, keep_dtype
    from .failure_kinds import per_op_only
    from .failure_text import no_overflow_seen
    from .float16_model import float16_model_text, in_float16
    from .fp16_fix_ops import (STILL_FAILS, UNEXPLAINED_ADVICE, flushed_after_first,
                               high_precision_may_fix, keep_dtype_names)

    mode = mode if mode is not None else DEFAULT
    if verdict.problem:
        from ..compare.result import problem_advice as advice_for  # (a parameter's name)

        known = advice_for(verdict.problem)
        if known is not None:
            return Hint(PROBLEM, known[0], advice=known[1])
        return Hint(PROBLEM, "check that both dumps come from the same model and run",
                    advice=problem_advice)
    from ..compare.result import NOT_COMPARED
    from .ignore_spelling import ignore_spelled, not_compared_ops

    hidden = not_compared_ops(verdict)
    if hidden and all(f.reason.startswith(NOT_COMPARED) for f in verdict.failures):
        from .failure_kinds import naming_reason

        why = naming_reason(verdict) or "no golden tensor: a fault there would go unseen"
        return Hint(IGNORE, f"{len(hidden)} op{'s' if len(hidden) != 1 else ''} not compared "
                            f"({why})",
                    advice=f"to accept that, ignore them: {ignore_spelled(hidden)}")
    from .failure_kinds import unread, unread_hint

    if unread(verdict):  # no value was read: nothing to say about float16 range or modes
        reason, advice = unread_hint(verdict)
        return Hint(PROBLEM, reason, advice=advice)
    from .fp16_fix_ops import device_mode

    names, reason = keep_dtype_names(verdict, range_inputs, device_mode(mode, dump_kind),
                                     rows, model=model)
    if not set(names) - set(mode.keep_dtype):  # pasted, the test's own mode: nothing changes
        names = []
    first_row = verdict.first.row if verdict.first is not None else None
    if names and in_float16(first_row, model):  # keep_dtype keeps a float16 op float16
        reason, advice = float16_model_text(first_row.label, names.found)
        return Hint(FLOAT16_MODEL, reason, advice=advice)
    if names and names.unexplained:  # an overflow after the first failure: not its fix
        return Hint(MODES, reason, advice=UNEXPLAINED_ADVICE)
    if names:
        from ..core.whole_model import whole_model_note
        from .failure_kinds import high_precision_blocker

        suggested, note = [mode | keep_dtype(names)], ""
        if (not mode.is_high_precision and high_precision_may_fix(verdict, names)
                and not _cube_in(range_inputs)):
            # an op below float16's normal range high precision judges in float32
            note = high_precision_blocker(verdict, names, rows)
            if not note:
                suggested.append(mode | HIGH_PRECISION)
            else:
                note = f" ({note})"
        still = f" ({STILL_FAILS})" if names.partial else ""  # the reason says it may
        return Hint(KEEP_DTYPE, reason, tuple(suggested),
                    advice="keep these ops in float32" + (
                        ", or convert in high precision" if len(suggested) > 1 else note) + still
                    + whole_model_note(  # the list it prints, of every op the run names
                        len({n for n in (*mode.keep_dtype, *names)
                             if not str(n).startswith("OpType::")}),
                        len({n for r in rows for n in (r.original_names or (r.op_name,))})))
    from .if_branches import BRANCH_ADVICE, branch_reason

    branch = branch_reason(range_inputs)
    if branch:  # no mode promised: see if_branches
        return Hint(MODES, branch, advice=BRANCH_ADVICE)
    from .failure_kinds import (NONFINITE_ADVICE, NONFINITE_CUBE_ADVICE, cube_ops_kept,
                                nonfinite_failure, nonfinite_reason)

    failure = nonfinite_failure(verdict) if hasattr(range_inputs, "checked") else None
    if failure is not None:  # NaN/Inf with the golden in range (read): a probe, not the ops
        label = failure.row.label  # it ran through; never "within float16" of a branch not read
        reason = nonfinite_reason(failure.row, range_inputs)  # (or of operands read: audit 34)
        if in_float16(failure.row, model):  # high precision keeps a float16 op float16
            reason, advice = float16_model_text(label, reason)
            return Hint(FLOAT16_MODEL, reason, advice=advice)
        cube = cube_ops_kept(failure.row)
        if cube and set(cube) - set(mode.keep_dtype):  # high precision still feeds it float16
            return Hint(MODES, nonfinite_reason(failure.row, range_inputs, cube=True),
                        (mode | keep_dtype(list(cube)),), advice=NONFINITE_CUBE_ADVICE)
        if mode.is_high_precision or cube:
            return Hint(MODES, reason, advice=DIAGNOSE_ADVICE)
        return Hint(MODES, reason, (mode | HIGH_PRECISION,), advice=NONFINITE_ADVICE)
    from . import tiny_float32

    tiny = tiny_float32.tiny_float32_rows(verdict)
    if tiny:  # float32 already, below float16's normal range: float16 upstream, or no mode
        fed = upstream if upstream is not None else tiny_float32.float16_upstream(
            verdict, rows or [f.row for f in verdict.failures], mode=mode)
        if fed is not None and fed.chain:
            reason = tiny_float32.fed_reason(verdict, fed)
            if len(fed.chain) > CHAIN_LIMIT:
                return Hint(MODES, reason, advice=DIAGNOSE_ADVICE)
            them = "it" if len(fed.chain) == 1 else "them"
            return Hint(MODES, reason, (mode | keep_dtype(list(fed.chain)),),
                        advice=tiny_float32.FED_ADVICE.format(them=them))
        return Hint(PER_OP, tiny_float32.reason(verdict, tiny),
                    advice=tiny_float32.advice(verdict, tiny))
    first = verdict.first  # the failure the verdict line names (a not-compared row may lead)
    metrics = first.row.metrics if first is not None else None
    flipped = metrics is not None and metrics.exact and metrics.unequal
    if flipped and upstream is not None and upstream.cube:
        return _cube_fed_integers(first, upstream, mode)
    if flipped and not mode.is_high_precision:
        # an index, id or count that changed: float16 rounding of what it ranks or casts (two
        # scores a float16 makes equal, a value on a rounding edge) moves it; fusion is rarely
        # the cause, the precision is the first thing to rule out
        return Hint(MODES, f"integer values differ at {first.row.label} (an index, id or count "
                           "computed from float16-rounded values)", (mode | HIGH_PRECISION,),
                    advice="convert in high precision to see whether float16 rounding moves "
                           "them (--accuracy-diagnose then names the ops to keep in float32)")
    compare = [m for m in (mode | FUSION_OFF, mode | BUFFER_OFF) if m != mode]
    from .failure_kinds import member_entry, member_entry_text
    from .kept_already import kept_already

    only = per_op_only(verdict)  # (it says member_entry's consequence, where there is one)
    seen = (no_overflow_seen(range_inputs) + flushed_after_first(verdict, range_inputs)
            + (only or member_entry_text(verdict)) + kept_already(verdict, mode))
    if member_entry(verdict) is not None and mode | FUSION_OFF != mode:  # (audit 34)
        return Hint(MODES, seen, advice="keyed so, a failure's hint compares fusion on and off "
                                        "on that same output (fusion_off now judges another "
                                        "tensor under this entry)")
    if unfused and buffer_neutral and mode | FUSION_OFF in compare:  # it repeats the verdict
        from .if_branches import plugin_nothing_fused

        buffer = mode | BUFFER_OFF
        return Hint(MODES, seen + plugin_nothing_fused(
            buffer.python_expr() if buffer != mode else ""), advice=DIAGNOSE_ADVICE)
    if not compare:
        return Hint(MODES, f"{seen}, and fusion and buffer reuse are already off",
                    advice=DIAGNOSE_ADVICE)
    if buffer_neutral and mode | BUFFER_OFF in compare:  # the emulator: buffer_off repeats it
        from . import emulated_probes as emulated

        buffer = (mode | BUFFER_OFF).python_expr()
        if compare == [mode | BUFFER_OFF]:
            return Hint(MODES, seen + emulated.PLUGIN_ONLY_BUFFER.format(mode=buffer),
                        advice=DIAGNOSE_ADVICE)
        return Hint(MODES, seen, (mode | FUSION_OFF,),
                    advice=emulated.PLUGIN_FUSION_ONLY.format(mode=buffer) + DIAGNOSE_ADVICE)
    # plain float16 rounding under a tight threshold fails under both as well (a PP-OCRv4
    # trial at 0.9999: both pasted, both failed): the flow that keeps ops in float32 follows
    return Hint(MODES, seen, tuple(compare), advice=COMPARE_ADVICE)


def _cube_fed_integers(first, upstream: Upstream, mode) -> Hint:
    """A flipped integer output a Cube op computes from: high precision still feeds that op
    float16 (it failed as the default did, which read as "float16 rounding is not the cause"),
    so the probe keeps the ops computing the output in float32, or, where they are many or not
    known, ``--accuracy-diagnose`` searches for them."""
    from ..core.modes import keep_dtype

    cube = ", ".join(repr(n) for n in upstream.cube[:3]) + (
        ", ..." if len(upstream.cube) > 3 else "")
    many = len(upstream.cube) > 1
    reason = (f"integer values differ at {first.row.label} (an index, id or count computed "
              f"from float16-rounded values); the Cube op{'s' if many else ''} computing them "
              f"({cube}) take{'' if many else 's'} float16 inputs even in high precision")
    if not upstream.chain or len(upstream.chain) > CHAIN_LIMIT:
        return Hint(MODES, reason, advice=DIAGNOSE_ADVICE)
    return Hint(MODES, reason, (mode | keep_dtype(list(upstream.chain)),),
                advice="keep the ops computing them in float32 to see whether float16 rounding "
                       "moves them (passes: it does, and --accuracy-diagnose names a smaller "
                       "set; still fails at this op: float16 rounding is not the cause; fails "
                       "at a later op instead: it moved them, and that op's own float16 "
                       "inputs may too, which --accuracy-diagnose searches)")


def _cube_in(range_inputs: Sequence) -> bool:
    """Whether a finding's op runs on the Cube unit: high precision still rounds its operands
    and outputs to float16 (a producer whose output underflows need not be a failing op, which
    ``high_precision_may_fix`` looks at)."""
    from ..core.ascend_optypes import is_cube

    return any(is_cube(getattr(f, "op_type", "")) for f in range_inputs)


def aipp_first_op(actual, verdict, result) -> Optional[Hint]:
    """When a model with an ``Aipp`` op fails at its first compared operator: check the
    pre-processing (step 5) before blaming that operator; else None."""
    if not any(op.op_type == "Aipp" for op in getattr(actual, "ops", ())):
        return None
    first = verdict.first
    orders = [r.order for r in result.compared_rows]
    if first is None or not orders or first.row.order != min(orders):
        return None
    from .printable import printable

    return Hint(AIPP, f"the first operator after AIPP ({printable(first.row.label)}) already "
                      f"fails: check the pre-processing before blaming it",
                advice=aipp_advice(_aipp_file(actual, result)))


#: the AIPP advice's first clause, and how it reads where --accuracy-diagnose was given (the
#: diagnosis's verdict follows the failure: "rerun with" the option given sent users round)
AIPP_RERUN = "rerun with --accuracy-diagnose: step 5 compares"
AIPP_DIAGNOSED = "the diagnosis below (--accuracy-diagnose, step 5) compares"
#: the AIPP hint's advice (``aipp_advice``): ``{file}`` the AIPP file as pasted where pytest ran
AIPP_ADVICE = (
    AIPP_RERUN + " the device's Aipp output with the golden "
    "inputs, names the fields of {file} to correct and prints an ascend-accuracy diagnose "
    "command that runs pasted; or check {file} against your own pre-processing: "
    "check_preprocessing(om, images, reference=fn), or from the shell: ascend-accuracy diagnose "
    "--aipp {file} --images FRAMES.npy --reference MODULE:FN, where FRAMES.npy is one .npy of "
    "the raw uint8 images the test ran (N x H x W x C; NV12: N x H*3/2 x W) and MODULE:FN your "
    "pre-processing function (FN(image) -> float CHW; path/to/file.py:FN also works)")


def diagnosis_below(text: str, ran: bool = True) -> str:
    """A hint's advice (or its lines) as said in a failure --accuracy-diagnose was given for:
    the AIPP advice points at the diagnosis that follows (``ran``) instead of asking for a
    rerun with it, or, where it did not run (it says why), keeps its other way only."""
    if ran:
        return text.replace(AIPP_RERUN, AIPP_DIAGNOSED)
    import re

    return re.sub(re.escape(AIPP_RERUN) + r"[^\n]*?; or ", "", text)


def aipp_advice(path: str = "") -> str:
    """``AIPP_ADVICE`` naming ``path`` (the AIPP file the model was converted with, relative to
    where pytest ran, or absolute further up), shell-quoted; without one, ``F`` and what it
    is. The hint once ended in ``diagnose --aipp F --images DIR --reference MODULE:FN``, all
    placeholders, though the plugin knew the file (an AIPP trial)."""
    import shlex

    from ..core.locations import shown

    if not path:
        return AIPP_ADVICE.format(file="F").replace(
            " --images FRAMES.npy", " --images FRAMES.npy (F: the AIPP file the model was "
            "converted with, ATC's --insert_op_conf)", 1)
    return AIPP_ADVICE.format(file=shlex.quote(shown(path, os.getcwd())))


def _aipp_file(actual, result) -> str:
    """The AIPP file of ``actual``'s conversion (``--insert_op_conf`` of the ATC command line
    its om json records), or ""."""
    from ..core.atc_cmdline import atc_options

    meta = dict(getattr(actual, "meta", None) or {})
    cmdline = meta.get("atc_cmdline") or ((getattr(result, "meta", None) or {}).get(
        "actual") or {}).get("atc_cmdline") or ""
    found = [v for k, v in atc_options(str(cmdline)) if k == "insert_op_conf" and v]
    return found[-1] if found else ""


def hint_for(verdict, golden, mode=None, *, actual=None, result=None,
             problem_advice: str = PROBLEM_ADVICE, model=None) -> Hint:
    """The one hint of a failed check (every rendering shows it): the AIPP pointer when
    ``actual`` has an AIPP op that fails first, else ``next_step`` with the golden operands of
    the failing ops, and of the ignored or loosely passing ops upstream of them, checked for
    float16 range (found through ``model``, the ONNX model the golden ran, where the golden
    holds outputs only)."""
    from ..compare.branch_range import failing_ops_and_branches, run_inside_ops
    from ..compare.fp16_range import ModelEdges

    if actual is not None and result is not None:
        aipp = aipp_first_op(actual, verdict, result)
        if aipp is not None:
            return aipp
    rows = result.rows if result is not None else [f.row for f in verdict.failures]
    types = {r.golden_name: r.op_type for r in rows if r.golden_name and r.op_type}
    model = ModelEdges(model) if model is not None else None  # its graph read once
    ranges = failing_ops_and_branches(golden, verdict, rows, inside=run_inside_ops(
        actual, result), model=model, op_types=types)
    from .tiny_float32 import float16_upstream

    upstream = integer_upstream(verdict, golden, rows, model)
    if upstream is None:  # a tiny float32 first failure: which of its producers are float16
        upstream = float16_upstream(verdict, rows, golden, model, mode)
    kind = getattr(actual, "kind", "") or ((getattr(result, "meta", None) or {}).get(
        "actual_kind") or "")
    from .after_selection import selection_advice
    from .emulated_probes import buffer_off_neutral, run_meta
    from .if_branches import nothing_fused

    # a first failure after a TopK that only reordered near ties (T2): say so, and what helps
    selection = selection_advice(verdict, golden, rows, model, mode, ranges, kind)
    if selection is not None and not selection.lead:
        return Hint(MODES, selection.reason, selection.modes, advice=selection.advice)
    hint = next_step(verdict, ranges, mode, problem_advice=problem_advice, upstream=upstream,
                     rows=rows, dump_kind=kind, model=model,
                     buffer_neutral=buffer_off_neutral(run_meta(actual, result)),
                     unfused=result is not None and nothing_fused(result.rows, True))
    return hint if selection is None else replace(hint, reason=f"{selection.lead}; {hint.reason}")


def integer_upstream(verdict, golden, rows, model=None) -> Optional[Upstream]:
    """``Upstream`` of the first failure where it is integer values that differ (compared
    exactly), else None. The ops feeding it come from the graph's edges
    (``compare.fp16_range.ops_upstream``); where those are unknown, the rows before it in graph
    order only say whether a Cube op may feed it."""
    from ..core.ascend_optypes import is_cube
    from .upstream import feeding_ops

    first = verdict.first
    m = first.row.metrics if first is not None else None
    if m is None or not (m.exact and m.unequal):
        return None
    own, up = feeding_ops(first.row, golden, model)
    if up is None:
        cube = [r.label for r in rows if r.order < first.row.order
                and is_cube(r.op_type)]
        return Upstream(tuple(dict.fromkeys(cube)))
    known = {n for r in rows for n in (r.golden_name, *r.original_names) if n}
    chain = [n for n in up if n in known] + [n for n in own if n not in up]
    return Upstream(tuple(n for n, t in up.items() if is_cube(t)),
                    tuple(dict.fromkeys(chain)))

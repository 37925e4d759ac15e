"""The precision-debugging flow as one function: ``diagnose(model, ...) -> Diagnosis``.

Engineers walk these steps by hand, one conversion at a time; here each step is one cached
conversion, a budget caps the conversions, and a rerun resumes from the cache. The steps are
numbered as the developers' guide numbers them (``result.GUIDE_STEPS``; README, docs and the
renderings use the same numbers); step 5 runs right after step 1:

1. default conversion, every operator dumped and compared with the golden fp32 run; stop if it
   passes, or fails on coverage alone (every failing op "not compared": no mode changes what
   the golden holds, ``triage.coverage``); where such ops fail beside value failures, every
   run is judged with them set aside (ignored) and the verdict names them with the check's
   remedy, to paste beside the fix;
2. high precision; if that passes, the operators whose cosine drops between the two runs seed a
   search for a minimal ``keep_dtype`` set that restores accuracy under the default mode
   (``triage_search``: seeds first, then op types, then names inside the types that matter);
3. buffer optimisation off; the operators that change between the two runs are named;
4. fusion off; when that restores accuracy, a search over the individual fusion rules names
   the rule(s) to switch off; when buffer or fusion off fails elsewhere instead, at an op whose
   values leave the float16 range (a BatchNorm variance past it hides while folded into its
   Conv), step 2 is repeated under that mode (steps ``fusion_off+high_precision``, ...), and
   when that restores accuracy under fusion off, the fusion rules are searched with fusion back
   on and the set found kept (``fusion_rules+keep_dtype``; ``triage.fusion_rules``); where
   buffer and fusion off each help (fix an op, lift the first failure's value, or change the
   ops after it), the two are tried together, and step 2 is repeated under the mode that got
   furthest; where step 2 moved the first failure later, steps 3 and 4 are tried under it
   (``triage.combos``);
5. pre-processing and configuration (no conversion, so run right after step 1): the model's
   input tensors as the device saw them (the inputs of the ops that consume a graph input, or
   an ``Aipp`` op's output) against the golden inputs -- a pre-processing or AIPP mismatch
   makes every other step pointless;
6. the final per-operator comparison with the golden network names the operators that differ.

The result names the step that restored accuracy, its fix files and the conversions spent.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..compare.engine import compare_dumps
from ..compare.result import CompareResult, Verdict
from ..compare.thresholds import Policy, check_metric
from ..core.ascend_optypes import IF_TYPES
from ..core.modes import BUFFER_OFF, DEFAULT, FUSION_OFF, HIGH_PRECISION, Mode
from ..graph.op_catalogue import model_ops, with_real_names
from .combos import Combos
from .coverage import aside_note, aside_policy, coverage_verdict, ignore_to_paste, set_aside
from .branch_keep import branch_ops, every_kept_mode, kept_words
from .fp32_rounding import conclusion as fp32_conclusion
from .fusion_rules import rules_off, search_rules, unfused
from .hp_wording import every_kept_label, high_precision_fails
from .inputs import input_check
from .model_float16 import no_mode_verdict, stopped_note
from .cube_keeps import with_notes
from .result import (CLI_BUDGET_OPTION, PLUGIN_BUDGET_OPTION, Diagnosis, OpLine,  # noqa: F401
                     StepResult, fmt as _fmt, rerun_with_budget)
from .runner import Evaluation, Runner, framework_ops, range_ops
from .kept_share import with_whole_model
from .search import BudgetExhausted, CountingPredicate, minimal_subset
from .verdict_view import (TABLE_ROWS, _failing_names, _first_label, _moved,  # noqa: F401
                           _names, _same, _table, _why, _worst_value, restored_text)

STEPS = ("default", "data", "high_precision", "keep_dtype", "buffer_off", "fusion_off",
         "fusion_rules", "golden")


def diagnose(model, inputs: Optional[Mapping[str, np.ndarray]] = None, backend=None,
             threshold: Optional[float] = None, *, budget: int = 32, cache=None, input_shape=None,
             golden=None, metric: str = "cosine", per_op=None, ignore=(), seed: int = 0,
             out_dir=None, progress: Optional[Callable[[str], None]] = None,
             mode: Optional[Mode] = None,
             atc_options: Optional[Mapping[str, object]] = None,
             scale_tolerance: Optional[float] = None,
             budget_option: str = CLI_BUDGET_OPTION,
             golden_inputs: Optional[Mapping[str, np.ndarray]] = None) -> Diagnosis:
    """Walk the debugging flow for ``model`` and return what restores accuracy.

    ``backend`` defaults to the CPU emulator over ``cache`` (default ``.ascend-accuracy/``);
    ``inputs`` default to seeded ``make_inputs(model, seed=seed)``; ``golden`` defaults to the
    cached onnxruntime fp32 dump. ``budget`` caps new conversions (cache hits are free, so a
    rerun resumes where the last one stopped). With ``out_dir`` the fix files and reports are
    written there (``triage_report.write_all``). Every step varies ``mode`` (the failing
    test's; default ``DEFAULT``), so the fix is that mode plus a change. ``atc_options`` are
    the test's own ATC options (``ascend_model(m, input_format="ND")``): every conversion gets
    them, and the fix's ATC options (``atc_args.txt``) hold them with the mode's, spelled as
    the backend passes them (``triage.atc_args``). ``scale_tolerance``: the scale guard the
    failing check judged with (``check_accuracy``'s default 2.0; None: off), so a check that
    failed on scale alone is not called passing here. ``budget_option``: how the caller's user
    raises the budget, ``{n}`` for the number (the CLI's ``--budget {n}``, the plugin's
    ``--accuracy-diagnose-budget={n}``), named where the budget runs out. ``golden_inputs``:
    the model inputs the golden runs on where the device is fed others (raw images an AIPP file,
    ``atc_options``' ``insert_op_conf``, pre-processes): step 5 compares the device's ``Aipp``
    output with them, and the golden (when not given) and the shapes come from them."""
    from ..core.cache import Cache
    from ..golden.onnxruntime_golden import golden_dump
    from ..graph.onnx_graph import make_inputs, model_label

    from ..compare.thresholds import Threshold
    from ..errors import ConfigError

    if budget < 1:  # the CLI's --budget: a usage error, never a traceback
        raise ConfigError("budget", f"must allow at least one conversion, got {budget}")
    check_metric(metric, "diagnose")  # before its default threshold is looked for
    if threshold is None:  # cosine's 0.95; another metric was judged at it silently
        from ..core.check_defaults import default_threshold_for

        threshold = default_threshold_for(metric, where="diagnose", fix="; pass threshold=")
    Threshold(threshold, metric)  # an unknown metric or a bad threshold before any conversion
    from ..core.modes import resolve_mode
    from ..graph.op_catalogue import check_model_settings

    mode = resolve_mode(mode, "diagnose mode")  # a preset's name too, as convert takes it
    check_model_settings(model, per_op, ignore, mode, "diagnose")  # typos judged nothing
    if cache is None:
        cache = getattr(backend, "cache", None) or Cache(Path(".ascend-accuracy"))
    if backend is None:
        from ..backends.emulator import EmulatorBackend
        backend = EmulatorBackend(cache)
    if inputs is None:
        inputs = make_inputs(model, seed=seed, input_shape=input_shape)
    else:  # dimensions left dynamic convert at the inputs' sizes, as the golden runs them
        from ..graph.shape_from_inputs import shape_from_inputs
        input_shape = shape_from_inputs(model, input_shape, golden_inputs or inputs)
    if golden is None:  # under the model's own op names (file names hold sanitized ones)
        golden = with_real_names(golden_dump(model, golden_inputs or inputs, cache=cache,
                                             input_shape=input_shape), model_ops(model))

    # the test's own names, checked where it was set up; a mode's run may fuse some away
    policy = Policy.build(threshold, per_op, ignore, metric, scale_tolerance)

    def judge(result: CompareResult) -> Verdict:
        return result.judge(policy)

    dump_root = Path(tempfile.mkdtemp(prefix="ascend-accuracy-triage-"))
    runner = Runner(backend, model, inputs, golden, judge=judge, budget=budget,
                    input_shape=input_shape, dump_root=dump_root,
                    progress=progress or (lambda _: None),
                    atc_options=atc_options, kl="kl" in policy.metrics)
    flow = _Flow(runner, threshold, metric, mode, budget_option, golden_inputs)
    try:
        outcome = flow.walk()
    finally:
        shutil.rmtree(dump_root, ignore_errors=True)
    diagnosis = Diagnosis(
        model=model_label(model), backend=backend.describe(), threshold=float(threshold),
        metric=metric, steps=tuple(flow.steps), conversions=runner.conversions,
        cache_hits=runner.cache_hits, budget=budget, final=flow.final,
        budget_option=budget_option, **outcome)
    if diagnosis.fix_mode is not None and diagnosis.restored_by != "default":
        from .atc_args import fix_atc

        diagnosis = replace(diagnosis, fix_atc=fix_atc(backend, model, diagnosis.fix_mode,
                                                       input_shape=input_shape,
                                                       atc_options=runner.atc_options))
    if out_dir is not None:
        from .report import write_all
        diagnosis = replace(diagnosis, fix_files=write_all(diagnosis, out_dir))
    return diagnosis


class _Flow(Combos):
    """The step sequence; ``walk`` returns the Diagnosis fields that depend on the outcome;
    going on from a mode that got further is ``Combos``'."""

    def __init__(self, runner: Runner, threshold: float, metric: str, base: Mode = DEFAULT,
                 budget_option: str = CLI_BUDGET_OPTION, golden_inputs=None):
        self.run, self.threshold, self.metric, self.base = runner, threshold, metric, base
        self.budget_option = budget_option
        self.golden_inputs = golden_inputs  # None: the inputs the device runs on
        self.steps: List[StepResult] = []
        self.final: Optional[CompareResult] = None
        self.repeated: set = set()  # modes the precision step was repeated under (``Combos``)
        self.aside: List[str] = []  # ops not compared, set aside (``_set_aside``)
        self.first_verdict: Optional[Verdict] = None

    def walk(self) -> dict:
        outcome = with_whole_model(self._walk(), self.run, self.base)  # "RESTORED only by ..."
        if self.aside:  # the fix alone leaves them failing: said, with their remedy
            outcome["verdict"] += aside_note(self.first_verdict, self.aside, self.budget_option,
                                             outcome["restored_by"] is not None)
            outcome.update(set_aside=tuple(self.aside),
                           ignore_with_fix=tuple(ignore_to_paste(self.first_verdict, self.aside)))
        return with_notes(outcome, self.run)  # its quantisation ops; kept Cube ops (cube_keeps)

    def _walk(self) -> dict:
        spent = self.run.conversions
        try:
            default = self.run.evaluate(self.base)
            self.final = default.result
            self._add("default", default, spent)
            if default.passed:
                return self._outcome("default", f"mode {self.base.name} already meets the "
                                                f"threshold" if self.base.name != "default" else
                                     "the default conversion already meets the threshold")
            if default.verdict.problem:  # nothing to judge or compare: no mode can change that
                return self._outcome(None, f"not diagnosed: {default.verdict.problem}")
            coverage = coverage_verdict(default.verdict, self.budget_option)
            if coverage:  # every failing op not compared: no mode changes what the golden holds
                return self._outcome(None, coverage)
            self._set_aside(default)
            data = input_check(default.converted, self.run.dump_of(default),
                               self.golden_inputs or self.run.inputs)
            self.steps.append(data)
            if data.passed is False:
                return self._outcome(None, f"the device saw different inputs than the golden run: "
                                           f"{data.summary}; fix the pre-processing / AIPP "
                                           f"configuration before debugging operators")
            restored = (self._precision(default) or self._buffer(default)
                        or self._fusion(default) or self._uncovered(default)
                        or self._combined(default)
                        or self._past_precision(default) or self._last_pair(default))
            if restored:
                return restored
        except BudgetExhausted as exc:
            return self._outcome(None, f"stopped: {exc} after {len(self.steps)} step(s); "
                                       f"{self._rerun()} to continue from the cache"
                                 + stopped_note(self), exhausted=True)
        return self._golden_step()

    def _set_aside(self, default: Evaluation) -> None:
        """Where ops not compared fail beside value failures, judge every run without them:
        they fail under any mode, so none could pass (F6); the first run is judged again."""
        aside = set_aside(default.verdict)
        if not aside:
            return
        self.aside, self.first_verdict = aside, default.verdict
        policy = aside_policy(default.verdict.policy, aside)
        self.run.judge = lambda result: result.judge(policy)
        default.verdict = self.run.judge(default.result)

    # -- steps --------------------------------------------------------------------------------
    def _mode_step(self, step: str, mode: Mode, default: Evaluation):
        """Convert, run and judge ``mode``; record the step with the ops that differ from the
        default run. Returns (evaluation, differing ops)."""
        spent = self.run.conversions
        ev = self.run.evaluate(mode)
        differing = self._differing(default, ev)
        self._add(step, ev, spent, differing=differing)
        return ev, differing

    def _precision(self, default: Evaluation, base: Optional[Mode] = None, lead: str = "",
                   prefix: str = "") -> Optional[dict]:
        """High precision, else every op kept, then a small ``keep_dtype`` set, all under
        ``base`` (the flow's own, or buffer/fusion off for ``_uncovered``: then ``default`` is
        that mode's run, ``lead`` says how it failed and ``prefix`` names its steps)."""
        base = self.base if base is None else base
        lead = lead or f"{base.name} fails at op {_first_label(default.verdict)}"
        if _same(base | HIGH_PRECISION, base):  # the base is high precision: step 1 measured it
            hp, drops, hp_says = default, [], ""
        else:
            hp, drops = self._mode_step(prefix + "high_precision", base | HIGH_PRECISION, default)
            hp_says = "high precision passes"
        if not hp.passed:
            # high precision still feeds cube ops (Conv, MatMul and what fuses into them)
            # float16; keep_dtype keeps an op wholly in its original dtype. Keeping every op
            # may pass where high precision does not -- values out of the float16 range, or
            # plain float16 rounding under a tight threshold: then search a small set.
            # every op: the dump's and, by type, those inside If branches (BranchOps.every)
            every, names, branch = every_kept_mode(base, default, self.run.model)
            every = replace(every, label=every_kept_label(base, len(names), branch))
            kept, _ = self._mode_step(prefix + "keep_dtype_all", every, default)
            if not kept.passed:
                return None
            hp_says = (f"{high_precision_fails(hp.verdict, branch, self.run)}; keeping every op in "
                       f"float32 does"
                       if hp_says else "keeping every op in float32 passes")
        spent = self.run.conversions
        where = "fp16" if _same(base, DEFAULT) else f"mode {base.name}"
        unsearched = False
        try:
            keep, note, cut_short = self._keep_dtype_search(default, drops, base,
                                                            every_passed=not hp.passed)
        except BudgetExhausted:
            if not hp.passed:
                raise
            # high precision measured passing: its fix stands (the diagnosis said NOT RESTORED
            # and printed none, though its own step 2 passed)
            keep, unsearched = [], True
        if keep:
            mode = base | Mode(keep_dtype=tuple(keep))
            ev = self.run.evaluate(mode)  # memoised: the search measured it
            self.final = ev.result
            value = restored_text(ev, default.verdict, self.metric)  # (a per_op's figure too)
            self.steps.append(StepResult(
                prefix + "keep_dtype", mode.name, True,
                f"keeping {kept_words(keep)} in float32 restores {value} under mode "
                f"{base.name} ({note})",
                conversions=self.run.conversions - spent, differing=tuple(keep)))
            return self._outcome(
                prefix + "keep_dtype",
                f"{lead}; {hp_says}; keep_dtype {{{_names(keep)}}} restores {value} under "
                f"{where}"
                + (f" (the budget ran out before a smaller set was found: {self._rerun()} "
                   f"to search further)" if cut_short else ""),
                fix_mode=mode, keep=tuple(keep), exhausted=cut_short)
        self.steps.append(StepResult(prefix + "keep_dtype", "", None,
                                     "the budget ran out before a keep_dtype set was searched"
                                     if unsearched else f"no smaller keep_dtype set found ({note})",
                                     conversions=self.run.conversions - spent))
        if not hp.passed:
            return None
        self.final = hp.result
        return self._outcome(prefix + "high_precision",
                             f"{lead}; high precision passes; convert with "
                             f"--precision_mode=allow_fp32_to_fp16"
                             + ("" if where == "fp16" else f" ({where} with high precision)")
                             + (f" (the budget ran out before a keep_dtype set was searched: "
                                f"{self._rerun()} to keep fewer ops in float32 instead)"
                                if unsearched else ""),
                             fix_mode=base | HIGH_PRECISION, exhausted=unsearched)

    def _keep_dtype_search(self, default: Evaluation, drops: Sequence[str], base: Mode,
                           every_passed: bool = False) -> Tuple[List[str], str, bool]:
        """Seeds (fp16-range ops, then ops whose cosine drops first) are tried together first;
        then op types, then names inside the types that matter. Returns (names, note, cut
        short): where the budget runs out once a passing set is measured (every op, or the
        ops of the types that matter), that set, which pastes and passes, with cut short
        True. The ops inside If branches are candidates by ``OpType::`` (``branch_keep``);
        ``every_passed``: keeping every op was measured passing (``_precision``)."""
        names, types = framework_ops(default)
        branch = branch_ops(self.run.model)
        names, inside_first = branch.candidates(names, types, default.verdict)
        ranged, drops = (branch.as_entries(x) for x in (
            range_ops(default, self.run.golden, self.run.model), drops))
        ranged, drops = [n for n in ranged if n in types], [n for n in drops if n in types]
        seeds = list(dict.fromkeys(ranged + drops + inside_first))
        rank = {n: i for i, n in enumerate(seeds + [n for n in names if n not in seeds])}
        ordered = sorted(names, key=rank.__getitem__)
        pred = CountingPredicate(lambda s: self.run.evaluate(
            base | Mode(keep_dtype=tuple(sorted(s, key=rank.__getitem__))),
            keep_dump=False).passed)
        pred.know([], default.passed)
        if every_passed or not any(t in IF_TYPES for t in types.values()):
            pred.know(names, True)  # measured, or assumed: what high precision passing does
        # as the manual flow does: the fp16-range ops and the first op whose cosine drops are
        # the likeliest fix (often one conversion); then every seed together
        first = drops[:1] + inside_first
        seed_if = " (or kept by type inside the If failing first)" if inside_first else ""

        def by_rank(chosen):  # the order the search converted them in (the memo's key)
            return sorted(chosen, key=rank.__getitem__)

        # the smallest set known to pass so far: every op (measured, or what high precision
        # passing stands for), then the seeds or types found; a spent budget returns it
        passing = names
        needed: List[str] = []  # ops the name search found needed before a budget cut
        try:
            if not pred(names):  # naming an If keeps none of its branch ops: by type
                return [], ("keeping every op the dump names fails" + (
                    ", and by type the ops inside If branches" if branch else "")), False
            for trial in (list(dict.fromkeys(ranged + first)), seeds):
                if trial and pred(trial):
                    passing = trial
                    keep = minimal_subset(trial, pred, needed=needed)
                    return by_rank(keep), (f"seeded with {len(trial)} op(s) out of fp16 range or "
                                           f"dropping first{seed_if}, {pred.calls} "
                                           f"conversion(s) in the search"), False
            groups: Dict[str, List[str]] = {}
            for n in ordered:
                groups.setdefault(types.get(n, ""), []).append(n)
            type_pred = CountingPredicate(lambda chosen: pred(frozenset(
                n for t in chosen for n in groups[t])))
            type_pred.know([], default.passed)
            needed_types = minimal_subset(list(groups), type_pred)
            passing = [n for t in needed_types for n in groups[t]]
            keep = minimal_subset(passing, pred, needed=needed)
        except BudgetExhausted:
            return self._cut_short(base, pred, passing, needed, by_rank)
        return by_rank(keep), (f"types {', '.join(needed_types) or '-'} narrowed to names, "
                               f"{pred.calls} conversion(s) in the search"), False

    def _cut_short(self, base: Mode, pred: CountingPredicate, passing: Sequence[str],
                   needed: Sequence[str], by_rank) -> Tuple[List[str], str, bool]:
        """The search's answer where the budget ran out: the smallest set it measured passing
        (it returned the set it started from, so a rerun with twice the budget gave the
        PP-OCRv4 recogniser's same 106 ops and asked for more again), cut short unless no op
        of it can go (each one left out was measured failing: a bigger budget finds nothing
        smaller)."""
        known = sorted((k for k, ok in pred.memo.items() if ok and k <= frozenset(passing)),
                       key=len)
        for chosen in known + [frozenset(passing)]:
            for order in (by_rank(chosen), [n for n in passing if n in chosen]):
                ev = self.run.memo.get(replace(base | Mode(keep_dtype=tuple(order)), label=None))
                if ev is None or not ev.passed:
                    continue
                if all(pred.memo.get(chosen - {n}) is False for n in chosen):
                    return order, (f"each op of it measured needed, {pred.calls} conversion(s) "
                                   f"in the search"), False
                found = f"; {len(needed)} of them found needed so far" if needed else ""
                return order, (f"the budget ran out in the search, {pred.calls} conversion(s) "
                               f"in it{found}"), True
        raise BudgetExhausted(f"conversion budget of {self.run.budget} spent")  # (every op
        # assumed from high precision passing, never converted)

    def _buffer(self, default: Evaluation) -> Optional[dict]:
        ev, differing = self._mode_step("buffer_off", self.base | BUFFER_OFF, default)
        if not ev.passed:
            return None
        self.final = ev.result
        return self._outcome(
            "buffer_off",
            f"{self.base.name} fails at op {_first_label(default.verdict)}; buffer optimisation off "
            f"restores accuracy; ops that change: {_names(differing)}; convert with "
            "--buffer_optimize=off_optimize", fix_mode=self.base | BUFFER_OFF)

    def _fusion(self, default: Evaluation) -> Optional[dict]:
        ev, differing = self._mode_step("fusion_off", self.base | FUSION_OFF, default)
        if not ev.passed:
            return None
        spent = self.run.conversions
        rules, found, _ = search_rules(self.run, default, self.base, default.passed)
        if found:
            mode = rules_off(self.base, rules, found)
            rules_ev = self.run.evaluate(mode)  # memoised: the search measured it
            self.final = rules_ev.result
            self.steps.append(StepResult(
                "fusion_rules", mode.name, True,
                f"switching off {_names(found)} restores accuracy with the other fusion rules on",
                conversions=self.run.conversions - spent, differing=tuple(found)))
            return self._outcome(
                "fusion_rules",
                f"{self.base.name} fails at op {_first_label(default.verdict)}; fusion off "
                f"restores accuracy; the fusion rule(s) to switch off: {_names(found)} "
                f"({self._fused_ops(default, rules_ev, found)})",
                fix_mode=mode, rules=tuple(found))
        self.steps.append(StepResult("fusion_rules", "", None,
                                     "no single set of named rules restores accuracy; switch all "
                                     "fusion off" if rules else "the backend names no fusion rules",
                                     conversions=self.run.conversions - spent))
        self.final = ev.result
        return self._outcome(
            "fusion_off",
            f"{self.base.name} fails at op {_first_label(default.verdict)}; fusion off restores "
            f"accuracy (ops whose results change with fusion off: {_names(differing)})",
            fix_mode=self.base | FUSION_OFF)

    def _golden_step(self) -> dict:
        default = self.run.memo[replace(self.base, label=None)]
        failing, self.final = _failing_names(default.verdict), default.result
        tried = [st.mode for st in self.steps if st.mode and st.step != "default"]
        self.steps.append(StepResult(
            "golden", self.base.name, False,
            f"{len(failing)} op(s) differ from the golden network under {self.base.name}, and "
            f"no mode tried passes ({', '.join(tried) or 'none'})",
            first_failure=_first_label(default.verdict), failing=tuple(failing),
            table=_table(default.verdict)))
        return self._outcome(None, no_mode_verdict(self, default.verdict, failing, tried) or (
            f"no conversion mode restores accuracy: under {self.base.name} the model "
            f"differs from the golden network from op {_first_label(default.verdict)} on "
            f"({len(failing)} op(s): {_names(failing)}), and no mode tried passes"
            f"{self._together()} (the diagnosis's steps: list says where each fails); "
            + fp32_conclusion(self, default)))

    # -- helpers ------------------------------------------------------------------------------
    def _rerun(self) -> str:
        """How to rerun with a larger budget, in the caller's own option (``budget_option``)."""
        return rerun_with_budget(self.budget_option, self.run.budget)

    def _add(self, step: str, ev: Evaluation, spent_before: int, *, differing=()) -> None:
        v = ev.verdict
        first = v.first
        if ev.passed:
            summary = "passes"
        elif first is None:  # failed as a whole (``Verdict.problem``): no op to name
            summary = f"fails: {v.problem}"
        else:
            summary = f"fails at op {_first_label(v)} ({_why(first)})"
        self.steps.append(StepResult(
            step, ev.mode.name, ev.passed, summary,
            first_failure=None if first is None else first.row.label,
            first_value=None if first is None else first.value,
            failing=tuple(_failing_names(v)), differing=tuple(differing),
            conversions=self.run.conversions - spent_before, table=_table(v)))

    def _fused_ops(self, default: Evaluation, rules_ev: Evaluation, rules) -> str:
        """What switching ``rules`` off changed: the ops the default conversion fused and the
        one with them off does not (from the om json of both), else the ops whose results
        change."""
        them = "it" if len(rules) == 1 else "them"
        groups = unfused(default.converted, rules_ev.converted)
        if groups:
            return f"ops fused under {self.base.name}, not with {them} off: {_names(groups)}"
        return (f"ops whose results change with {them} off: "
                f"{_names(self._differing(default, rules_ev))}")

    def _differing(self, base: Evaluation, other: Evaluation) -> List[str]:
        """Ops whose output differs between two device runs (first drop first)."""
        result = compare_dumps(self.run.dump_of(base), self.run.dump_of(other),
                               kl=self.metric == "kl")
        verdict = result.judge(self.threshold, metric=self.metric)
        return _failing_names(verdict)

    def _outcome(self, restored_by, verdict, *, fix_mode=None, keep=(), rules=(), exhausted=False):
        return dict(restored_by=restored_by, verdict=verdict, fix_mode=fix_mode, keep_dtype=keep,
                    fusion_rules_off=rules, budget_exhausted=exhausted)

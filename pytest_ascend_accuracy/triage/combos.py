"""Going on from a mode of steps 3 and 4 that got further than the flow's own (``triage.flow``).

Buffer optimisation off or fusion off may fix the ops the flow's own mode fails at and fail at a
later op instead, or each fix another of the ops that fail: two causes, each fixed by its own
mode. Neither passes alone, and the diagnosis said "no conversion mode restores accuracy ...
check the operator implementations" where the modes together passed (a trial: a faulty fusion
rule plus a buffer fault, fixed by ``buffer_off+fusion_off``; a faulty fusion rule plus float16
rounding at a later op, fixed by fusion off and two ops kept in float32). So, within the budget:

- ``_uncovered``: a mode failing later at an op whose values leave float16's range (a BatchNorm
  variance past it hides while folded into its Conv) repeats the precision step under it;
- ``_combined``: where both modes fix some of the ops that fail, buffer and fusion off are
  tried together; then the precision step (high precision, every op kept, the ``keep_dtype``
  search) is repeated under the mode that got furthest (its first failure latest in graph
  order), the modes together included;
- ``_rules_under``: a fix with fusion off in it names the fusion rules instead, searched with
  fusion back on and the rest of the fix kept.

A mixin of ``flow._Flow``: its methods use the flow's runner, steps and outcome.
"""
from __future__ import annotations

from dataclasses import replace
from typing import List, Optional, Tuple

from ..core.modes import BUFFER_OFF, FUSION_OFF, Mode
from .fusion_rules import rules_off, search_rules
from .result import StepResult, fmt as _fmt
from .runner import Evaluation, range_ops
from .search import BudgetExhausted
from .verdict_view import _first_label, _moved, _names, _same, _why, _worst_value

#: the modes of steps 3 and 4, by the names their steps (and the steps under them) carry
OFFS = (("buffer_off", BUFFER_OFF), ("fusion_off", FUSION_OFF))


def _covers(failure) -> Tuple[str, ...]:
    """The framework ops a failing row stands for (a fused row: each of its members)."""
    return tuple(failure.row.original_names or (failure.row.op_name,))


def fixed_ops(default: Evaluation, ev: Evaluation) -> List[str]:
    """The ops ``default`` fails at (labels, graph order) none of whose framework ops fail in
    ``ev``: the ``conv1relu1`` that fails fused is fixed where ``conv1``, ``bn1`` and ``relu1``
    pass unfused, not where ``conv1`` still fails."""
    failing = {n for f in ev.verdict.failures for n in _covers(f)}
    return list(dict.fromkeys(f.row.label for f in default.verdict.failures
                              if not set(_covers(f)) & failing))


class Combos:
    """Steps 2 and 4 repeated under a mode that got further (mixed into ``flow._Flow``)."""

    def _uncovered(self, default: Evaluation) -> Optional[dict]:
        """Buffer or fusion off that fails elsewhere, or for another reason, at an op whose
        values leave float16's range, has uncovered a precision problem the default conversion
        hid (a BatchNorm variance past float16's range is harmless while folded into its Conv):
        the precision step again, under that mode."""
        for name, off in OFFS:
            mode = self.base | off
            ev = self.run.memo.get(replace(mode, label=None))
            if ev is None or ev.passed or _same(mode, self.base) or not _moved(default, ev):
                continue
            first = ev.verdict.first
            if first is None or not set(_covers(first)) & set(
                    range_ops(ev, self.run.golden, self.run.model)):
                continue  # not a float16 range problem: the operators are blamed as before
            lead = (f"{self.base.name} fails at op {_first_label(default.verdict)}; {mode.name} "
                    f"fails at op {_first_label(ev.verdict)} instead ({_why(first)}), where "
                    f"values leave the float16 range")
            restored = self._repeat(default, ev, mode, lead, name)
            if restored:
                return restored
        return None

    def _combined(self, default: Evaluation) -> Optional[dict]:
        """Buffer and fusion off together where each fixes some of the ops the flow's own mode
        fails at; then the precision step under the mode that got furthest."""
        helped = []  # (step name, mode, evaluation, the ops it fixes)
        for name, off in OFFS:
            mode = self.base | off
            ev = self.run.memo.get(replace(mode, label=None))
            if ev is None or ev.passed or _same(mode, self.base) or ev.verdict.first is None:
                continue
            fixed = fixed_ops(default, ev)
            if fixed:
                helped.append((name, mode, ev, fixed))
        if not helped:
            return None
        lead = f"{self.base.name} fails at op {_first_label(default.verdict)}; " + "; ".join(
            f"{mode.name} fixes {_names(fixed)} and fails at op {_first_label(ev.verdict)}"
            for _, mode, ev, fixed in helped)
        if len(helped) == 2:
            both = self.base | BUFFER_OFF | FUSION_OFF
            ev, _ = self._mode_step("buffer_off+fusion_off", both, default)
            if ev.passed:
                self.final = ev.result
                value = _fmt(_worst_value(ev.verdict, ev.result, self.metric))
                return self._rules_under(default, self._outcome(
                    "buffer_off+fusion_off",
                    f"{lead}; the two together restore {self.metric} {value}: convert with "
                    f"--buffer_optimize=off_optimize and fusion off", fix_mode=both))
            if ev.verdict.first is not None:
                helped.append(("buffer_off+fusion_off", both, ev, fixed_ops(default, ev)))
                lead += (f"; {both.name} fails at op {_first_label(ev.verdict)} "
                         f"({_why(ev.verdict.first)})")
        fresh = [h for h in helped if replace(h[1], label=None) not in self.repeated]
        if not fresh:
            return None
        _, (name, mode, ev, _) = max(enumerate(fresh), key=lambda h: (self._reach(h[1][2]), h[0]))
        if len(fresh) > 1:
            lead += f"; {mode.name} got furthest"
        return self._repeat(default, ev, mode, lead, name)

    def _repeat(self, default: Evaluation, ev: Evaluation, mode: Mode, lead: str,
                name: str) -> Optional[dict]:
        """The precision step under ``mode`` (``ev`` its run), its steps named ``name+...``; a
        fix with fusion off in it names the fusion rules instead where they pass."""
        self.repeated.add(replace(mode, label=None))
        restored = self._precision(ev, mode, lead, prefix=f"{name}+")
        if restored and not mode.fusion:  # the rules one by one, with the set found kept
            return self._rules_under(default, restored)
        return restored

    def _reach(self, ev: Evaluation) -> Tuple[int, int]:
        """How far a failing run got: its first failure's place in graph order (the golden
        run's), then the fewer failing ops."""
        order = {n: i for i, n in enumerate(self.run.golden.names)}
        first = ev.verdict.first
        at = min((order.get(n, len(order)) for n in _covers(first)), default=len(order))
        return at, -len(ev.verdict.failures)

    def _rules_under(self, default: Evaluation, restored: dict) -> dict:
        """Fusion off passed only with something more (a ``keep_dtype`` set, high precision,
        buffer optimisation off): the fusion rules are searched with fusion back on and the
        rest kept; the rules and the rest are the fix when they pass, ``restored`` otherwise."""
        fix = restored["fix_mode"]
        on = replace(fix, fusion=self.base.fusion, label=None)
        keep = restored["keep_dtype"]
        step = restored["restored_by"].replace("fusion_off", "fusion_rules")
        what = " and ".join(
            (["buffer optimisation off"] if fix.buffer_optimize != self.base.buffer_optimize
             else []) + ([f"keep_dtype {{{_names(keep)}}}"] if keep else ["high precision"]
                         if fix.precision_mode != self.base.precision_mode else []))
        spent = self.run.conversions
        try:
            # the rest alone: measured (buffer off), else failing as the flow's own mode did
            alone = self.run.memo.get(on)
            rules, found, _ = search_rules(self.run, default, on, bool(alone and alone.passed))
        except BudgetExhausted:
            self.steps.append(StepResult(step, "", None, f"the budget ran out before the fusion "
                                         f"rules were searched with {what}",
                                         conversions=self.run.conversions - spent))
            return dict(restored, budget_exhausted=True, verdict=(
                f"{restored['verdict']} (the budget ran out before the fusion rules were searched "
                f"with {what}: {self._rerun()} to name the rules instead of all fusion off)"))
        if not found:
            self.steps.append(StepResult(
                step, "", None, f"no set of named rules restores accuracy with {what}; switch "
                                f"all fusion off" if rules else "the backend names no fusion rules",
                conversions=self.run.conversions - spent))
            return restored
        mode = rules_off(on, rules, found)
        ev = self.run.evaluate(mode)  # memoised: the search measured it
        self.final = ev.result
        value = _fmt(_worst_value(ev.verdict, ev.result, self.metric))
        self.steps.append(StepResult(
            step, mode.name, True, f"switching off {_names(found)} with {what} restores "
                                   f"{self.metric} {value} with the other fusion rules on",
            conversions=self.run.conversions - spent, differing=tuple(found)))
        return self._outcome(
            step, f"{restored['verdict']}; with fusion back on, switching off only the fusion "
                  f"rule(s) {_names(found)} ({self._fused_ops(default, ev, found)}) with {what} "
                  f"restores {self.metric} {value} too",
            fix_mode=mode, keep=keep, rules=tuple(found), exhausted=restored["budget_exhausted"])

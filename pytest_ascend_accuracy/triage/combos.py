"""Going on from a mode of steps 3 and 4 that got further than the flow's own (``triage.flow``).

Buffer optimisation off or fusion off may fix the ops the flow's own mode fails at and fail at a
later op instead, or each fix another of the ops that fail: two causes, each fixed by its own
mode. Neither passes alone, and the diagnosis said "no conversion mode restores accuracy ...
check the operator implementations" where the modes together passed (a trial: a faulty fusion
rule plus a buffer fault, fixed by ``buffer_off+fusion_off``; a faulty fusion rule plus float16
rounding at a later op, fixed by fusion off and two ops kept in float32). So, within the budget:

- ``_uncovered``: a mode failing later at an op whose values leave float16's range (a BatchNorm
  variance past it hides while folded into its Conv) repeats the precision step under it;
- ``_combined``: where both modes help (``_helps``: fix some of the ops that fail, lift the
  value at the first failure, or, with it unchanged, change the ops after it -- a review, H69:
  a faulty fusion rule's error reaching a buffer fault's op, or both faults on one fused op,
  fixed by neither mode alone), buffer and fusion off are tried together; then the precision
  step (high precision, every op kept, the ``keep_dtype`` search) is repeated under the mode
  that got furthest (its first failure latest in graph order), the modes together included;
- ``_past_precision``: where step 2 moved the first failure later and failed there, steps 3
  and 4 are tried under it, and the two together where each helps; a pass is narrowed to a
  ``keep_dtype`` set under buffer/fusion off (float16 rounding before a buffer fault);
- ``_rules_under``: a fix with fusion off in it names the fusion rules instead, searched with
  fusion back on and the rest of the fix kept.

A mixin of ``flow._Flow``: its methods use the flow's runner, steps and outcome.
"""
from __future__ import annotations

from dataclasses import replace
from typing import List, Optional, Tuple

from ..core.modes import BUFFER_OFF, FUSION_OFF, HIGH_PRECISION, Mode
from .fusion_rules import rules_off, search_rules
from .branch_keep import branch_ops
from .hp_wording import every_kept_label
from .result import StepResult, fmt as _fmt
from .runner import Evaluation, framework_ops, range_ops
from .search import BudgetExhausted
from .verdict_view import _first_label, _moved, _names, _same, _why, _worst_value

#: the modes of steps 3 and 4, by the names their steps (and the steps under them) carry
OFFS = (("buffer_off", BUFFER_OFF), ("fusion_off", FUSION_OFF))
#: the part of the way to the threshold a value at the same first failure must move to count
#: as lifted (both faults on conv1relu1, buffer off: cosine 0.37 -> 0.70 of 0.95, 0.57 of the
#: way; an op fault that fusion off moves from conv2relu2 to conv2: 0.707 -> 0.717, 0.04)
LIFT = 0.25
#: a first failure's value unchanged (keeping every op in float32 moved one by 2e-6)
NOISE = 1e-3


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
            if first is None or not self._ranged(ev):
                continue  # not a float16 range problem: the operators are blamed as before
            lead = (f"{self.base.name} fails at op {_first_label(default.verdict)}; {mode.name} "
                    f"fails at op {_first_label(ev.verdict)} instead ({_why(first)}), where "
                    f"values leave the float16 range")
            restored = self._repeat(default, ev, mode, lead, name)
            if restored:
                return restored
        return None

    def _combined(self, default: Evaluation) -> Optional[dict]:
        """Buffer and fusion off together where each helps (``_helps``: fixes an op, changes
        the run or lifts the value at the first failure); then the precision step under the
        mode that got furthest."""
        helped = []  # (step name, mode, evaluation, how it helped)
        for name, off in OFFS:
            mode = self.base | off
            ev = self.run.memo.get(replace(mode, label=None))
            if ev is None or ev.passed or _same(mode, self.base) or ev.verdict.first is None:
                continue
            how = self._helps(default, ev)
            if how:
                helped.append((name, mode, ev, how))
        if not helped:
            return None
        lead = f"{self.base.name} fails at op {_first_label(default.verdict)}; " + "; ".join(
            f"{mode.name} {how} and fails at op {_first_label(ev.verdict)}"
            for _, mode, ev, how in helped)
        if len(helped) == 2:
            both, ev, lead, restored = self._pair(default, lead)
            if restored:
                return restored
            if ev.verdict.first is not None:
                helped.append(("buffer_off+fusion_off", both, ev, ""))
        fresh = [h for h in helped if replace(h[1], label=None) not in self.repeated]
        if not fresh:
            return None
        _, (name, mode, ev, _) = max(enumerate(fresh), key=lambda h: (self._reach(h[1][2]), h[0]))
        if len(fresh) > 1:
            lead += f"; {mode.name} got furthest"
        return self._repeat(default, ev, mode, lead, name)

    def _last_pair(self, default: Evaluation) -> Optional[dict]:
        """Buffer and fusion off together, and the precision step under them, where nothing
        else restored and each alone failed, whether or not either seemed to help: that is a
        guess, and two reviews found cases every guess missed (a fault of one part small
        beside the other's; a float16 range problem fusion off uncovers at a BatchNorm, with a
        buffer fault after it). Only a diagnosis that would end NOT RESTORED pays for it."""
        both = self.base | BUFFER_OFF | FUSION_OFF
        if replace(both, label=None) in self.run.memo:
            return None  # tried already (``_combined``)
        alone = [self.run.memo.get(replace(self.base | off, label=None)) for _, off in OFFS]
        if any(ev is None or ev.passed or ev.verdict.first is None for ev in alone) \
                or any(_same(self.base | off, self.base) for _, off in OFFS):
            return None
        both, ev, lead, restored = self._pair(default, (
            f"{self.base.name} fails at op {_first_label(default.verdict)}; buffer_off and "
            f"fusion_off each fail alone"))
        if restored:
            return restored
        first = ev.verdict.first
        if first is None or replace(both, label=None) in self.repeated:
            return None
        before = default.verdict.first
        inside = before is not None and set(_covers(first)) <= set(_covers(before))
        if not self._ranged(ev) and (inside or self._reach(ev)[0] <= self._reach(default)[0]):
            # not further (an unfused member of the op that failed is the same op), and not a
            # float16 range problem: an operator's own fault
            return None
        return self._repeat(default, ev, both, lead, "buffer_off+fusion_off")

    def _pair(self, default: Evaluation, lead: str):
        """Buffer and fusion off together: ``(mode, evaluation, lead, restored)``, the lead
        saying where it failed, ``restored`` the outcome where it passed (else None)."""
        both = self.base | BUFFER_OFF | FUSION_OFF
        ev, _ = self._mode_step("buffer_off+fusion_off", both, default)
        if ev.passed:
            return both, ev, lead, self._passes_together(default, lead, both, ev)
        if ev.verdict.first is not None:
            lead += (f"; {both.name} fails at op {_first_label(ev.verdict)} "
                     f"({_why(ev.verdict.first)})")
        return both, ev, lead, None

    def _ranged(self, ev: Evaluation) -> bool:
        """Whether ``ev``'s first failure covers an op whose values leave float16's range."""
        return bool(set(_covers(ev.verdict.first))
                    & set(range_ops(ev, self.run.golden, self.run.model)))

    def _passes_together(self, default: Evaluation, lead: str, both: Mode,
                         ev: Evaluation) -> dict:
        """Buffer and fusion off together passed: the fix, narrowed to the fusion rules."""
        self.final = ev.result
        value = _fmt(_worst_value(ev.verdict, ev.result, self.metric))
        return self._rules_under(default, self._outcome(
            "buffer_off+fusion_off",
            f"{lead}; the two together restore {self.metric} {value}: convert with "
            f"--buffer_optimize=off_optimize and fusion off", fix_mode=both))

    def _helps(self, before: Evaluation, ev: Evaluation) -> str:
        """How a mode's failing run ``ev`` helped against ``before``: it fixes some of the ops
        that failed; its first failure is later in graph order; at the same first failure (or
        a member of that fused op) the value is lifted; or, with that value unchanged, later
        ops change (their values differ between the two runs past the threshold: a buffer
        fault at ``head`` that a faulty fusion rule's error upstream keeps failing). "" where
        none holds: an op fault that fusion off moves from ``conv1relu1`` to ``conv1`` changes
        the ops after it, and fixes nothing."""
        fixed = fixed_ops(before, ev)
        if fixed:
            return f"fixes {_names(fixed)}"
        a, b = before.verdict.first, ev.verdict.first
        if a is None or b is None:
            return ""
        inside = set(_covers(b)) <= set(_covers(a))  # the same op, or a member of it
        if not inside and self._reach(ev)[0] > self._reach(before)[0]:
            return f"gets further (from op {a.row.label} to op {b.row.label})"
        if not inside or a.value != a.value or b.value != b.value:
            return ""
        gap = b.threshold.value - a.value  # how far the value was from passing (signed)
        if gap and (b.value - a.value) / gap >= LIFT:
            return (f"lifts {b.threshold.metric} at op {b.row.label} from {_fmt(a.value)} to "
                    f"{_fmt(b.value)}")
        if a.row.label != b.row.label or abs(b.value - a.value) > NOISE:  # moved inside its
            return ""  # fused op, or changed: the ops after it change with it
        differing = self._differing(before, ev)
        return f"changes op(s) {_names(differing)}" if differing else ""

    def _past_precision(self, default: Evaluation) -> Optional[dict]:
        """Step 2 (high precision, else every op kept) moved the first failure later, and
        failed there: steps 3 and 4 under it, and where each helps, the two together; a mode
        that passes is narrowed as the flow does (the precision step under buffer/fusion off:
        a ``keep_dtype`` set instead of high precision; the fusion rules instead of all fusion
        off). Float16 rounding before a buffer fault: high precision fails at the fault,
        ``buffer_off+high_precision`` passes, and so does ``buffer_off`` with two ops kept."""
        got = self._precision_further(default)
        if got is None:
            return None
        step, p_mode, p_ev, kept = got
        branch = branch_ops(self.run.model) if kept else None

        def under(*offs: Mode) -> Mode:  # step 2's mode with ``offs``, labelled as step 2 does
            mode = self.base
            for off in offs:
                mode = mode | off
            return replace(p_mode | mode, label=every_kept_label(mode, kept, branch)
                           if kept else None)
        lead = (f"{self.base.name} fails at op {_first_label(default.verdict)}; {p_mode.name} "
                f"fails at op {_first_label(p_ev.verdict)} instead ({_why(p_ev.verdict.first)})")
        helped = 0
        for name, off in OFFS:
            mode = under(off)
            if _same(mode, p_mode):
                continue
            ev = self.run.memo.get(replace(mode, label=None))
            if ev is None:
                ev, _ = self._mode_step(f"{step}+{name}", mode, p_ev)
            if ev.passed:
                return self._narrow(default, self.base | off, f"{lead}; {name} fixes it", name)
            # each alone failed: the two together, whether or not either seemed to help
            # (a review: a small rule fault beside a big buffer fault, after float16 rounding)
            helped += ev.verdict.first is not None
        both = under(BUFFER_OFF, FUSION_OFF)
        if helped < 2 or replace(both, label=None) in self.run.memo:
            return None
        ev, _ = self._mode_step(f"{step}+buffer_off+fusion_off", both, p_ev)
        if not ev.passed:
            return None
        return self._narrow(default, self.base | BUFFER_OFF | FUSION_OFF,
                            f"{lead}; buffer_off and fusion_off together fix it",
                            "buffer_off+fusion_off")

    def _precision_further(self, default: Evaluation
                           ) -> Optional[Tuple[str, Mode, Evaluation, int]]:
        """(step name, mode, run, ops kept: 0 for high precision; the ops the dump names, for
        every op kept, which keeps the ops inside If branches by type too) of step 2's run whose
        first failure is latest in graph order, later than the default's; None where neither
        got further."""
        names, _ = framework_ops(default)
        every = tuple(names) + branch_ops(self.run.model).entries  # as ``_precision`` keeps
        tried = [("high_precision", self.base | HIGH_PRECISION, 0),
                 ("keep_dtype_all", self.base | Mode(keep_dtype=every), len(names))]
        found = []
        for step, mode, kept in tried:
            ev = self.run.memo.get(replace(mode, label=None))
            if (ev is not None and not _same(mode, self.base) and not ev.passed
                    and ev.verdict.first is not None
                    and self._reach(ev)[0] > self._reach(default)[0]):
                found.append((self._reach(ev)[0], -len(found), step, ev.mode, ev, kept))
        if not found:
            return None
        return max(found, key=lambda f: f[:2])[2:]

    def _narrow(self, default: Evaluation, mode: Mode, lead: str, name: str) -> Optional[dict]:
        """Step 2 under ``mode`` (buffer and/or fusion off) where step 2's mode with it passed:
        a ``keep_dtype`` set (or high precision), then the fusion rules."""
        # the step that passed: the precision step under ``mode`` measures it again (from the
        # memo), so it is listed there once, with the conversion it cost
        at, passed = len(self.steps) - 1, self.steps.pop()
        ev = self.run.memo.get(replace(mode, label=None))
        if ev is None:
            ev, _ = self._mode_step(name, mode, default)
        restored = (self._passes_together(default, lead, mode, ev) if ev.passed  # (measured
                    else self._repeat(default, ev, mode, lead, name))  # failing: cannot be)
        again = [i for i, st in enumerate(self.steps) if st.mode == passed.mode]
        if again:
            self.steps[again[0]] = replace(self.steps[again[0]], conversions=(
                self.steps[again[0]].conversions + passed.conversions))
        else:
            self.steps.insert(at, passed)
        return restored

    def _untried(self) -> List[str]:
        """The combinations of high precision, buffer off and fusion off never converted."""
        out = []
        for combo in ((HIGH_PRECISION, BUFFER_OFF), (HIGH_PRECISION, FUSION_OFF),
                      (BUFFER_OFF, FUSION_OFF), (HIGH_PRECISION, BUFFER_OFF, FUSION_OFF)):
            mode = self.base
            for part in combo:
                mode = mode | part
            if (replace(mode, label=None) not in self.run.memo and not any(
                    _same(mode, self.base | part) for part in combo)):
                out.append(mode.name)
        return out

    def _together(self) -> str:
        """``, alone or in the combinations tried (...); not tried: ...``: the modes tried on
        top of another (``Combos``), and those of high precision, buffer and fusion off never
        converted; "" where none was combined."""
        together = [st.mode for st in self.steps if "+" in st.step and st.mode]
        if not together:
            return ""
        untried = self._untried()
        return (f", alone or in the combinations tried ({_names(together)})"
                + (f"; not tried, as a part of each changed nothing or got no further: "
                   f"{_names(untried)}" if untried else ""))

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

"""Out of budget, the keep_dtype search returns the smallest set it measured passing, and the
"rerun with a bigger budget" advice holds: the PP-OCRv4 recogniser's diagnosis at budget 32
returned the same 106-op set as at 16 (the set it started from: what the search had narrowed was
dropped) and asked for 64. Followed as printed, each rerun now gives a smaller set or more ops
found needed, and the advice stops where the search ends."""
import re
from dataclasses import dataclass, replace

from pytest_ascend_accuracy.core.modes import DEFAULT
from pytest_ascend_accuracy.triage import flow as triage_flow
from pytest_ascend_accuracy.triage.branch_keep import BranchOps
from pytest_ascend_accuracy.triage.search import BudgetExhausted

NAMES = [f"conv{i}" for i in range(16)]
NEEDED = {"conv3", "conv9", "conv12"}  # float16 rounding: these three in float32 pass


@dataclass
class _Ev:
    mode: object
    passed: bool
    verdict: object = None  # (read for the If it fails at, where the model has branches)


class _Runner:
    """Converts a mode once per cache (``converted``, shared by reruns: free there), charges new
    conversions to the budget as ``triage.runner.Runner`` does."""

    def __init__(self, budget, converted):
        self.budget, self.converted, self.conversions = budget, converted, 0
        self.memo, self.golden, self.model = {}, None, None

    def evaluate(self, mode, keep_dump=True):
        key = replace(mode, label=None)
        if key in self.memo:
            return self.memo[key]
        if self.conversions >= self.budget:
            raise BudgetExhausted(f"conversion budget of {self.budget} spent")
        if key not in self.converted:
            self.converted.add(key)
            self.conversions += 1
        self.memo[key] = _Ev(mode, NEEDED <= set(mode.keep_dtype))
        return self.memo[key]


def _search(budget, converted, monkeypatch):
    monkeypatch.setattr(triage_flow, "framework_ops",
                        lambda ev: (list(NAMES), {n: "Conv2D(fused)" for n in NAMES}))
    monkeypatch.setattr(triage_flow, "range_ops", lambda ev, golden, model: [])
    # this runner has no model file: no If branches (branch_keep reads the model's catalogue)
    monkeypatch.setattr(triage_flow, "branch_ops", lambda model: BranchOps())
    run = _Runner(budget, converted)
    walk = triage_flow._Flow(run, 0.9999, "cosine")
    every = run.evaluate(DEFAULT | triage_flow.Mode(keep_dtype=tuple(NAMES)))  # keep_dtype_all
    return walk, walk._keep_dtype_search(_Ev(DEFAULT, False), [], DEFAULT), every


def test_each_rerun_the_advice_asks_for_narrows_the_set_and_it_stops_at_the_end(monkeypatch):
    converted, budget, seen = set(), 4, []
    while True:
        walk, (keep, note, cut), every = _search(budget, converted, monkeypatch)
        assert NEEDED <= set(keep)
        found = re.search(r"(\d+) of them found needed so far", note)
        seen.append((len(keep), int(found.group(1)) if found else 0))
        if not cut:
            break
        assert "the budget ran out in the search" in note
        budget = int(re.search(r"--budget (\d+)", walk._rerun()).group(1))  # as printed
        assert len(seen) < 8, seen
    assert set(keep) == NEEDED and "measured needed" not in note
    # every rerun it asked for got further: a smaller set, or more of it found needed
    assert all(b[0] < a[0] or (b[0] == a[0] and b[1] > a[1]) for a, b in zip(seen, seen[1:])), seen
    assert len(seen) > 2  # (the case: cut more than once)


def test_a_set_whose_every_op_was_measured_needed_is_not_called_cut_short():
    """No advice where a bigger budget cannot find a smaller set: each op left out failed."""
    from pytest_ascend_accuracy.triage.search import CountingPredicate

    run = _Runner(1, set())
    walk = triage_flow._Flow(run, 0.9999, "cosine")
    three = sorted(NEEDED)
    run.evaluate(DEFAULT | triage_flow.Mode(keep_dtype=tuple(three)))
    pred = CountingPredicate(lambda s: NEEDED <= s).know(three, True).know(NAMES, True)
    for n in three:
        pred.know(set(three) - {n}, False)
    keep, note, cut = walk._cut_short(DEFAULT, pred, NAMES, [], sorted)
    assert keep == three and not cut and note.startswith("each op of it measured needed")
    pred.memo.pop(frozenset(three[1:]))  # one op not known needed: a bigger budget may drop it
    assert walk._cut_short(DEFAULT, pred, NAMES, [], sorted)[2] is True

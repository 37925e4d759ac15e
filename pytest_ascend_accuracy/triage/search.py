"""Minimal-set search used by triage: which ops to keep in fp32, which fusion rules to turn off.

``minimal_subset`` works over a monotone predicate (keeping more ops in fp32 never hurts):
given candidates C such that ``passes(C)`` holds, it returns a subset S that still passes and from
which no single element can be removed. A single culprit among n ops costs at most
ceil(log2 n) + 1 checks; two interacting ops that only pass together are both found. Every call of the predicate is one conversion, so the search counts them and stops
with ``BudgetExhausted`` when the budget is spent (the caller reports what it had).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple


class BudgetExhausted(RuntimeError):
    """The conversion budget ran out before the search finished."""


@dataclass
class CountingPredicate:
    """Wraps ``passes(frozenset) -> bool``: memoises answers and counts real evaluations."""

    passes: Callable[[FrozenSet[str]], bool]
    budget: Optional[int] = None
    calls: int = 0
    memo: Dict[FrozenSet[str], bool] = field(default_factory=dict)

    def know(self, subset, result: bool) -> "CountingPredicate":
        """Record an answer already measured (e.g. the default mode's verdict for the empty set)."""
        self.memo[frozenset(subset)] = bool(result)
        return self

    def __call__(self, subset) -> bool:
        key = frozenset(subset)
        if key in self.memo:
            return self.memo[key]
        if self.budget is not None and self.calls >= self.budget:
            raise BudgetExhausted(f"conversion budget of {self.budget} spent")
        self.calls += 1
        result = bool(self.passes(key))
        self.memo[key] = result
        return result


def minimal_subset(candidates: Sequence[str], passes: Callable[[FrozenSet[str]], bool],
                   *, base: Sequence[str] = (), assume_full_passes: bool = True,
                   needed: Optional[List[str]] = None) -> List[str]:
    """A 1-minimal subset S of ``candidates`` with ``passes(base + S)``, order preserved.

    Prefix bisection: find the shortest prefix of the remaining candidates that passes (binary
    search, at most ceil(log2 n) checks); its last element is needed, so it joins S and the
    search repeats on the candidates before it until ``base + S`` passes. k needed elements cost
    at most k * (ceil(log2 n) + 1) checks; a single culprit ceil(log2 n) + 1. The result is
    1-minimal: element x_j was added when ``base + S_<j + (everything before x_j)`` failed, and
    every later element comes from that set, so dropping x_j fails (monotone predicate).
    Raises ValueError when even all candidates fail (checked unless ``assume_full_passes``).
    ``needed``: a list the elements found needed so far are appended to as they are (what a
    search cut short by ``BudgetExhausted`` had established).
    """
    remaining = list(dict.fromkeys(candidates))
    chosen: List[str] = []
    base_list = list(base)
    if not assume_full_passes and not passes(frozenset(base_list + remaining)):
        raise ValueError("the predicate fails even with every candidate included")
    while not passes(frozenset(base_list + chosen)):
        if not remaining:  # only reachable when the full-set assumption was wrong
            raise ValueError("the predicate fails even with every candidate included")
        lo, hi = 1, len(remaining)  # invariant: prefix of length hi passes
        while lo < hi:
            mid = (lo + hi) // 2
            if passes(frozenset(base_list + chosen + remaining[:mid])):
                hi = mid
            else:
                lo = mid + 1
        chosen.append(remaining[hi - 1])
        if needed is not None:
            needed.append(remaining[hi - 1])
        remaining = remaining[:hi - 1]
    rank = {name: i for i, name in enumerate(candidates)}
    return sorted(chosen, key=rank.__getitem__)


def grouped_minimal_subset(groups: Sequence[Tuple[str, Sequence[str]]],
                           passes: Callable[[FrozenSet[str]], bool]) -> Tuple[List[str], List[str]]:
    """Two-level search: first over groups (op types), then over members of the groups needed.

    ``groups`` is [(group name, [members])]; ``passes`` takes member names. Returns
    (groups needed, members needed).
    """
    members_of = {g: list(m) for g, m in groups}

    def group_passes(chosen: FrozenSet[str]) -> bool:
        return passes(frozenset(m for g in chosen for m in members_of[g]))

    needed_groups = minimal_subset([g for g, _ in groups], group_passes)
    pool = [m for g in needed_groups for m in members_of[g]]
    return needed_groups, minimal_subset(pool, passes)

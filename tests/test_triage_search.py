import math
import random

import pytest

from pytest_ascend_accuracy.triage.search import (
    BudgetExhausted, CountingPredicate, grouped_minimal_subset, minimal_subset)


def needs(*required):
    req = set(required)
    return lambda subset: req <= set(subset)


@pytest.mark.parametrize("n", [1, 2, 7, 16, 100, 1000])
def test_single_culprit_costs_about_log2_n_checks(n):
    ops = [f"op{i}" for i in range(n)]
    for culprit in {ops[0], ops[n // 2], ops[-1]}:
        pred = CountingPredicate(needs(culprit)).know([], False)  # default mode already failed
        assert minimal_subset(ops, pred) == [culprit]
        assert pred.calls <= math.ceil(math.log2(n)) + 1, (n, culprit, pred.calls)


def test_two_interacting_ops_are_both_found():
    ops = [f"op{i}" for i in range(64)]
    pred = CountingPredicate(needs("op5", "op50")).know([], False)
    assert minimal_subset(ops, pred) == ["op5", "op50"]
    assert pred.calls <= 2 * (math.ceil(math.log2(64)) + 1)


def test_result_is_one_minimal_on_random_monotone_predicates():
    rng = random.Random(7)
    for _ in range(50):
        ops = [f"o{i}" for i in range(rng.randint(1, 40))]
        required = set(rng.sample(ops, rng.randint(0, min(4, len(ops)))))
        found = minimal_subset(ops, needs(*required))
        assert set(found) == required


def test_or_predicate_returns_one_sufficient_alternative():
    # either a or b alone fixes it: the result passes and is 1-minimal
    pred = lambda s: "a" in s or "b" in s  # noqa: E731
    found = minimal_subset(["x", "a", "y", "b"], pred)
    assert len(found) == 1 and pred(set(found))


def test_empty_base_that_passes_needs_nothing():
    assert minimal_subset(["a", "b"], lambda s: True) == []


def test_all_failing_is_reported_when_not_assumed():
    with pytest.raises(ValueError, match="fails even with every candidate"):
        minimal_subset(["a"], lambda s: False, assume_full_passes=False)


def test_budget_stops_the_search():
    pred = CountingPredicate(needs("op3"), budget=2)
    with pytest.raises(BudgetExhausted):
        minimal_subset([f"op{i}" for i in range(32)], pred)
    assert pred.calls == 2


def test_grouped_search_narrows_types_then_names():
    groups = [("Conv", ["c1", "c2", "c3"]), ("Mul", ["m1", "m2"]), ("Exp", ["e1", "e2", "e3", "e4"])]
    pred = CountingPredicate(needs("e3"))
    types, names = grouped_minimal_subset(groups, pred)
    assert types == ["Exp"] and names == ["e3"]

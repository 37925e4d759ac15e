"""Hypothesis properties of the metrics (small arrays, a bounded number of examples)."""
import math

import numpy as np
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from pytest_ascend_accuracy.compare.metrics import compute_metrics

SETTINGS = settings(max_examples=60, deadline=None)
finite32 = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False, width=32)
dtypes = st.sampled_from([np.float16, np.float32, np.float64])


@st.composite
def pairs(draw, min_size=2):
    n = draw(st.integers(min_size, 300))
    y = draw(hnp.arrays(np.float32, n, elements=finite32))
    x = draw(hnp.arrays(np.float32, n, elements=finite32))
    dtype = draw(dtypes)
    return x.astype(dtype), y, draw(st.sampled_from([3, 64, 1 << 16]))


def _finite(x):
    return np.all(np.isfinite(x.astype(np.float64)))


@SETTINGS
@given(pairs())
def test_cosine_lies_in_minus_one_one_or_is_nan_for_a_zero_side(p):
    x, y, chunk = p
    m = compute_metrics(x, y, chunk_size=chunk)
    if m.actual_zero != m.golden_zero:
        assert math.isnan(m.cosine)
    else:
        assert -1.0 <= m.cosine <= 1.0


@SETTINGS
@given(hnp.arrays(np.float32, st.integers(2, 300), elements=finite32), dtypes,
       st.sampled_from([5, 1 << 16]))
def test_identical_tensors_are_perfect(y, dtype, chunk):
    x = y.astype(dtype)
    y = x.astype(np.float32) if dtype is np.float16 else y  # the same values on both sides
    m = compute_metrics(x, y, chunk_size=chunk)
    assert m.max_abs == 0 and m.mean_abs == 0 and m.rmse == 0 and m.rel_l2 == 0
    assert m.max_rel == 0 and m.mean_rel == 0 and m.acc_rel == 0 and m.kl == 0
    assert m.mismatch == 0
    if not m.all_zero:
        assert m.cosine == 1.0 or abs(m.cosine - 1.0) < 1e-6


@SETTINGS
@given(pairs(), st.floats(0.01, 100))
def test_cosine_is_invariant_to_positive_scaling(p, k):
    x, y, chunk = p
    x = x.astype(np.float64)
    a = compute_metrics(x, y, chunk_size=chunk)
    b = compute_metrics(x * k, y, chunk_size=chunk)
    if not (a.actual_zero or a.golden_zero):
        assert abs(a.cosine - b.cosine) < 1e-6


@SETTINGS
@given(pairs())
def test_cosine_is_symmetric_and_error_orderings_hold(p):
    x, y, chunk = p
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    a = compute_metrics(x64, y64, chunk_size=chunk)
    b = compute_metrics(y64, x64, chunk_size=chunk)
    if not (a.actual_zero or a.golden_zero):
        assert abs(a.cosine - b.cosine) < 1e-9
    assert a.max_abs >= a.mean_abs - 1e-12
    assert a.rmse >= a.mean_abs * (1 - 1e-9) - 1e-12
    assert a.max_rel >= a.mean_rel * (1 - 1e-9)
    assert a.acc_rel == a.mean_rel * a.size or math.isclose(a.acc_rel, a.mean_rel * a.size)
    assert a.kl >= -1e-9


@SETTINGS
@given(pairs(min_size=1), st.sampled_from([7, 1 << 16]))
def test_chunk_size_does_not_change_results(p, chunk):
    x, y, _ = p
    a = compute_metrics(x, y, chunk_size=chunk)
    b = compute_metrics(x.astype(np.float64), y.astype(np.float64), chunk_size=1 << 16)
    for k in ("max_abs", "rmse", "mean_abs", "rel_l2"):
        assert math.isclose(getattr(a, k), getattr(b, k), rel_tol=2e-5, abs_tol=1e-6), k


@SETTINGS
@given(pairs(), st.data())
def test_injected_nonfinite_values_are_counted_exactly(p, data):
    x, y, chunk = p
    x = x.astype(np.float32)
    n = len(x)
    idx = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    kinds = [data.draw(st.sampled_from(["nan", "inf", "-inf", "both_inf"])) for _ in idx]
    y = y.copy()
    for i, kind in zip(idx, kinds):
        if kind == "nan":
            x[i] = np.nan
        elif kind == "inf":
            x[i] = np.inf
        elif kind == "-inf":
            y[i] = -np.inf
        else:
            x[i] = y[i] = np.inf
    m = compute_metrics(x, y, chunk_size=chunk)
    assert m.nan_actual == kinds.count("nan")
    assert m.posinf_actual == kinds.count("inf") + kinds.count("both_inf")
    assert m.neginf_golden == kinds.count("-inf")
    assert m.matched_inf == kinds.count("both_inf")
    assert m.mismatch == len(kinds) - kinds.count("both_inf")
    assert m.finite == n - len(kinds)
    assert _finite(np.array([m.max_abs, m.mean_abs])) or m.finite == 0

"""Metric values: hand-computed cases, msaccucmp edge cases, and our deliberate deviations."""
import math

import numpy as np
import pytest

from pytest_ascend_accuracy.compare.fp16 import f16_min_max, widen_f16
from pytest_ascend_accuracy.compare.metrics import (
    TensorMetrics, compute_metrics, format_metric)

F32_EPS = float(np.finfo(np.float32).eps)


def test_hand_computed_values():
    x = np.array([1, 2, 3, 4], np.float32)
    y = np.array([1, 2, 3, 5], np.float32)
    m = compute_metrics(x, y)
    assert m.cosine == pytest.approx(34 / math.sqrt(30 * 39), abs=1e-7)
    assert m.max_abs == 1.0
    assert m.mean_abs == 0.25
    assert m.rmse == 0.5
    assert m.max_rel == pytest.approx(0.2, abs=1e-7)
    assert m.acc_rel == pytest.approx(0.2, abs=1e-7)
    assert m.mean_rel == pytest.approx(0.05, abs=1e-7)
    assert m.rel_l2 == pytest.approx(math.sqrt(1 / 39), abs=1e-7)
    assert m.std == "(2.500;1.118),(2.750;1.479)"
    # KL: min-max normalised, clamped at float32 eps, as pdfs; by the formula
    px = [max(v, F32_EPS) for v in (0, 1 / 3, 2 / 3, 1)]
    qy = [max(v, F32_EPS) for v in (0, 0.25, 0.5, 1)]
    p = [v / sum(px) for v in px]
    q = [v / sum(qy) for v in qy]
    assert m.kl == pytest.approx(sum(a * math.log(a / b) for a, b in zip(p, q)), abs=1e-7)
    assert m.kl == pytest.approx(0.010309643542723124, abs=1e-7)
    assert (m.size, m.finite, m.mismatch, m.matched_inf) == (4, 4, 0, 0)
    assert not (m.all_zero or m.actual_zero or m.golden_zero)
    assert (m.max_abs_actual, m.max_abs_golden) == (4.0, 5.0)


def test_relative_error_skips_golden_zeros_but_counts_them_in_the_mean():
    # msaccucmp: r_i = |x/y - 1| where |y| > eps else 0; mean over all n
    m = compute_metrics(np.array([2.0, 7.0, 3.0, 0.0]), np.array([1.0, 0.0, 1e-17, 0.0]))
    assert m.max_rel == 1.0
    assert m.acc_rel == 1.0
    assert m.mean_rel == 0.25
    m32 = compute_metrics(np.array([2.0, 7.0, 3.0, 0.0], np.float32),
                          np.array([1.0, 0.0, 1e-17, 0.0], np.float32))
    assert (m32.max_rel, m32.acc_rel, m32.mean_rel) == (1.0, 1.0, 0.25)


def test_fp16_against_fp32_is_compared_exactly_not_in_float32_rounding():
    x = np.full(10, 0.1, np.float16)  # 0.0999755859375
    y = np.full(10, 0.1, np.float32)  # 0.100000001490116...
    m = compute_metrics(x, y)
    expected = float(np.float32(0.1)) - 0.0999755859375
    assert m.max_abs == pytest.approx(expected, rel=1e-6)
    assert m.mean_abs == pytest.approx(expected, rel=1e-6)


def test_widen_f16_is_bit_exact_for_every_finite_value():
    allh = np.arange(65536, dtype=np.uint16).view(np.float16)
    finite = np.isfinite(allh)
    out = widen_f16(allh, np.empty(65536, np.float32))
    ref = allh.astype(np.float32)
    assert np.array_equal(out[finite].view(np.uint32), ref[finite].view(np.uint32))
    assert np.all(np.abs(out[~finite]) >= 65536)  # detected by the caller's min/max


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nan_on_one_side_is_a_mismatch_and_the_rest_is_compared(dtype):
    y = np.arange(1, 9, dtype=np.float32)
    x = y.astype(dtype)
    x[3] = np.nan
    m = compute_metrics(x, y)
    assert (m.nan_actual, m.nan_golden, m.mismatch, m.finite) == (1, 0, 1, 7)
    assert m.cosine == pytest.approx(1.0)
    assert m.max_abs == 0.0
    assert any("differ" in n for n in m.notes)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_same_infinity_on_both_sides_counts_as_equal(dtype):
    y = np.array([1.0, -np.inf, 2.0, np.inf, 3.0], np.float32)
    x = np.array([1.0, -np.inf, 2.0, np.inf, 3.5], dtype)
    m = compute_metrics(x, y)
    assert (m.matched_inf, m.mismatch, m.finite) == (2, 0, 3)
    assert (m.neginf_actual, m.posinf_actual, m.neginf_golden, m.posinf_golden) == (1, 1, 1, 1)
    assert m.max_abs == 0.5
    assert m.mean_abs == pytest.approx(0.5 / 3)


@pytest.mark.parametrize("x_val,y_val", [(np.inf, -np.inf), (np.inf, 1.0), (np.nan, 1.0),
                                         (1.0, np.nan), (np.nan, np.inf), (1.0, np.inf)])
def test_other_nonfinite_positions_are_mismatches(x_val, y_val):
    x = np.array([1.0, x_val, 3.0], np.float32)
    y = np.array([1.0, y_val, 3.0], np.float32)
    m = compute_metrics(x, y)
    assert m.mismatch == 1 and m.matched_inf == 0 and m.matched_nan == 0 and m.finite == 2


def test_nan_at_the_same_position_on_both_sides_compares_as_equal():
    """docs/design.md: only a NaN/Inf on one side fails. A Softmax over an attention row masked
    out whole is NaN in the golden and on the device: it failed whatever the mode (user trial)."""
    x = np.array([1.0, np.nan, 3.0, np.nan], np.float32)
    m = compute_metrics(x, x.astype(np.float16))
    assert (m.mismatch, m.matched_nan, m.finite) == (0, 2, 2) and m.cosine == pytest.approx(1.0)
    assert "2 position(s) hold NaN on both sides (compared as equal)" in m.notes
    every = compute_metrics(np.full(3, np.nan, np.float32), np.full(3, np.nan, np.float32))
    assert (every.mismatch, every.matched_nan, every.cosine) == (0, 3, 1.0)


def test_all_nonfinite_identical_infinities():
    x = np.array([np.inf, -np.inf], np.float32)
    m = compute_metrics(x, x.copy())
    assert (m.cosine, m.max_abs, m.rel_l2, m.matched_inf, m.finite) == (1.0, 0.0, 0.0, 2, 0)


def test_all_zero_pair_is_reported_not_silent():
    m = compute_metrics(np.zeros(6, np.float16), np.zeros(6, np.float32))
    assert m.cosine == 1.0 and m.all_zero and m.actual_zero and m.golden_zero
    assert "both tensors are all zero" in m.notes
    assert (m.max_abs, m.rel_l2, m.kl) == (0.0, 0.0, 0.0)


def test_zero_on_one_side_gives_nan_cosine_with_a_note():
    m = compute_metrics(np.zeros(4, np.float32), np.ones(4, np.float32))
    assert math.isnan(m.cosine) and m.actual_zero and not m.golden_zero
    assert m.rel_l2 == 1.0
    assert any("actual tensor is all zero" in n for n in m.notes)
    m = compute_metrics(np.ones(4, np.float32), np.zeros(4, np.float32))
    assert math.isnan(m.cosine) and m.golden_zero
    assert m.rel_l2 == math.inf  # msaccucmp would say 0.0 here
    assert any("golden tensor is all zero" in n for n in m.notes)


def test_one_element_tensor_has_cosine_one_like_msaccucmp():
    m = compute_metrics(np.array([[2.0]], np.float32), np.array([[5.0]], np.float32))
    assert m.cosine == 1.0
    assert m.max_abs == 3.0 and m.rel_l2 == pytest.approx(0.6)
    assert any("one-element" in n for n in m.notes)


def test_zero_size_tensors():
    m = compute_metrics(np.zeros((0, 3), np.float16), np.zeros((0, 3), np.float32))
    assert m.size == 0 and m.cosine == 1.0 and m.max_abs == 0.0
    assert "zero-size tensors: nothing to compare" in m.notes


def test_bool_tensors_compare_as_zero_one_without_relative_errors():
    x = np.array([True, False, True, True])
    y = np.array([True, False, False, True])
    m = compute_metrics(x, y)
    assert m.cosine == pytest.approx(2 / math.sqrt(3 * 2))
    assert m.rel_l2 == pytest.approx(math.sqrt(1 / 2))
    assert m.max_abs == 1.0 and m.mean_abs == 0.25
    assert set(m.not_applicable) == {"max_rel", "mean_rel", "acc_rel", "kl"}
    assert math.isnan(m.max_rel) and math.isnan(m.kl)


def test_integer_tensors_take_the_float64_path():
    x = np.array([2 ** 40 + 1, 5], np.int64)
    y = np.array([2 ** 40, 5], np.int64)
    m = compute_metrics(x, y)
    assert m.max_abs == 1.0


def test_float32_overflow_of_the_dot_falls_back_to_float64():
    y = np.full(1000, 3e30, np.float32)
    x = y * np.float32(1.001)
    m = compute_metrics(x, y)
    assert m.cosine == pytest.approx(1.0)
    assert m.rel_l2 == pytest.approx(0.001, rel=1e-4)
    assert m.mismatch == 0


def test_large_mean_small_spread_std_is_accurate():
    rng = np.random.default_rng(1)
    y = (1000 + rng.standard_normal(200_000)).astype(np.float32)
    m = compute_metrics(y, y, chunk_size=4096)
    mean, std = float(np.mean(y, dtype=np.float64)), float(np.std(y, dtype=np.float64))
    assert m.std == "(%.3f;%.3f),(%.3f;%.3f)" % (mean, std, mean, std)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_chunking_does_not_change_the_values(dtype):
    rng = np.random.default_rng(2)
    y = rng.standard_normal(5000).astype(np.float32)
    y[::11] = 0
    x = (y + 0.01 * rng.standard_normal(5000)).astype(dtype)
    whole = compute_metrics(x, y, chunk_size=1 << 16)
    small = compute_metrics(x, y, chunk_size=97)
    for k in ("cosine", "max_abs", "max_rel", "mean_rel", "acc_rel", "rel_l2", "rmse",
              "mean_abs", "kl"):
        assert getattr(small, k) == pytest.approx(getattr(whole, k), rel=1e-5, abs=1e-9), k
    assert small.std == whole.std


def test_fast_and_exact_paths_agree():
    rng = np.random.default_rng(3)
    y = rng.standard_normal(3000).astype(np.float32)
    x = (y * 1.01).astype(np.float16)
    fast = compute_metrics(x, y)
    exact = compute_metrics(x.astype(np.float64), y.astype(np.float64))
    for k in ("cosine", "max_abs", "max_rel", "mean_rel", "rel_l2", "rmse", "mean_abs", "kl"):
        assert getattr(fast, k) == pytest.approx(getattr(exact, k), rel=2e-6, abs=1e-9), k


def test_nonfinite_in_one_chunk_keeps_the_other_chunks_fast_and_correct():
    rng = np.random.default_rng(4)
    y = rng.standard_normal(1000).astype(np.float32)
    x = (y * 1.01).astype(np.float16)
    x[500] = np.inf
    m = compute_metrics(x, y, chunk_size=128)
    keep = np.arange(1000) != 500
    ref = compute_metrics(x[keep].astype(np.float64), y[keep].astype(np.float64))
    assert m.mismatch == 1 and m.posinf_actual == 1
    for k in ("cosine", "max_abs", "rel_l2", "mean_abs", "kl"):
        assert getattr(m, k) == pytest.approx(getattr(ref, k), rel=2e-6), k


def test_kl_can_be_skipped():
    m = compute_metrics(np.ones(3), np.ones(3) * 2, kl=False)
    assert math.isnan(m.kl) and "kl" in m.not_applicable


def test_size_mismatch_is_refused():
    with pytest.raises(ValueError, match="element counts differ: 3 vs 4"):
        compute_metrics(np.ones(3), np.ones(4))


def test_metrics_round_trip_through_dict():
    m = compute_metrics(np.array([1.0, np.nan, 2.0]), np.array([0.0, 0.0, 0.0]))
    back = TensorMetrics.from_dict(m.to_dict())
    assert back.to_dict() == m.to_dict()
    assert m.to_dict()["rel_l2"] == "inf" and m.to_dict()["cosine"] is None


def test_format_metric():
    assert format_metric(0.5) == "0.500000"
    assert format_metric(float("nan")) == "NaN"
    assert format_metric(None) == "NaN"
    assert format_metric(float("inf")) == "inf"


def test_f16_min_max_matches_numpy_on_every_pattern_mix():
    rng = np.random.default_rng(5)
    allh = np.arange(65536, dtype=np.uint16).view(np.float16)
    finite = allh[np.isfinite(allh)]
    for size in (1, 2, 7, 1000):
        for _ in range(50):
            x = rng.choice(finite, size)
            assert f16_min_max(x) == (float(x.astype(np.float32).min()),
                                      float(x.astype(np.float32).max()))
    for sign_case in ([-1.0, -2.0], [0.5, 3.0], [-0.0, 2.0], [-0.0, -1.0], [-0.0]):
        x = np.array(sign_case, np.float16)
        assert f16_min_max(x) == (min(sign_case), max(sign_case))
    for bad in (np.inf, -np.inf, np.nan):
        assert f16_min_max(np.array([1.0, bad], np.float16)) is None
    assert f16_min_max(np.array([], np.float16)) is None


def test_float16_on_both_sides_and_float32_actual():
    rng = np.random.default_rng(6)
    y = rng.standard_normal(5000).astype(np.float32)
    x = y * 1.01
    ref = compute_metrics(x.astype(np.float16).astype(np.float64), y.astype(np.float16).astype(np.float64))
    both16 = compute_metrics(x.astype(np.float16), y.astype(np.float16), chunk_size=512)
    for k in ("cosine", "max_abs", "rel_l2", "mean_rel", "kl"):
        assert getattr(both16, k) == pytest.approx(getattr(ref, k), rel=2e-6, abs=1e-9), k
    ref = compute_metrics(x.astype(np.float64), y.astype(np.float64))
    f32 = compute_metrics(x, y, chunk_size=512)
    for k in ("cosine", "max_abs", "rel_l2", "mean_rel"):
        assert getattr(f32, k) == pytest.approx(getattr(ref, k), rel=2e-6, abs=1e-9), k
    # float32 rounding of ratios near 1 is biased (grid spacing differs below and above 1):
    # the fast path's KL is good to ~2e-8 absolute, far below the 6 decimals reported
    assert f32.kl == pytest.approx(ref.kl, abs=5e-8)


def test_kl_rounding_residue_below_zero_is_zero_not_minus_zero_in_a_report():
    # a float16-rounded softmax of 15 values: the fast path's float32 ratios left -1.0e-8,
    # printed "-0.000000" in compare.csv (a reports trial); KL is never below zero
    rng = np.random.default_rng(212)
    g = rng.standard_normal(int(rng.integers(5, 2000))).astype(np.float32)  # 15 values
    g = np.exp(g) / np.exp(g).sum()
    m = compute_metrics(g.astype(np.float16).astype(np.float32), g)
    assert m.kl == 0.0 and f"{m.kl:.6f}" == "0.000000"
    # a real divergence stays
    assert compute_metrics(g[::-1].copy(), g).kl > 1e-3

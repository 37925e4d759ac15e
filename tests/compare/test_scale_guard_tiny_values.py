"""The scale guard judges the positions the judged metric compares (audit H324: a random-init
MobileNetV3's SE Mul, all below float16's smallest normal, read cosine 1.000000 with its 2304
positions counted as equal by ``compare/tiny_values.py`` and failed the guard at an L2 norm of
0.4068x, the device having flushed its subnormals, which that rule allows). Where the judged
figure counts float16's close subnormals as equal, the guard takes the norm of the actual with
the golden's values there (``scale_guard.guard_ratio``); a device scaled by 0.4 (cosine is blind to
it) still fails, all tiny or mixed with flushed values. Small error figures print with
significant digits, not as 0.000000 (the same failure block read ``max abs error 0.000000``
for an error of 3e-8)."""
import json

import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.result import CompareResult
from pytest_ascend_accuracy.compare.scale_guard import guard_ratio
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.failure_text import failure_text

TINY = 2.0 ** -14  # float16's smallest normal


def _result(device, golden):
    return compare_dumps(DumpSet.from_arrays({"se_mul": [device]}),
                         DumpSet.from_arrays({"se_mul": [golden]}))


def _as_judged(device, golden):
    """‖x'‖/‖y‖ computed from the arrays: x' the device with the golden's values where both
    sides lie below float16's smallest normal, have one sign and are within 2**-22 + 1/8 of the
    golden value (``tiny_values``' rule)."""
    x, y = device.astype(np.float64).ravel(), golden.astype(np.float64).ravel()
    close = ((np.abs(x) < TINY) & (np.abs(y) < TINY) & (x * y >= 0)
             & (np.abs(x - y) <= 2.0 ** -22 + np.abs(y) / 8))
    judged = np.where(close, y, x)
    return float(np.linalg.norm(judged) / np.linalg.norm(y))


def _flushed(seed=0, size=(1, 144, 4, 4)):
    """H324's SE Mul: golden values of a few 1e-8 (the real one's max 2.97e-8), the device's
    float16 output, which holds them as 0 or one step of its subnormal grid (6e-8)."""
    golden = np.random.default_rng(seed).uniform(0.0, 3.0e-8, size).astype(np.float32)
    return golden.astype(np.float16), golden


def _mixed(scale=1.0, seed=0, low=1.5e-8, high=2.5e-8):
    """Values of ``low``-``high`` the device flushes (close: counted as equal) beside values of
    3e-6 it computes ``scale`` times the golden's (apart, for 0.4 or 2.5): the flushed ones keep
    the plain cosine below the rule's bound, the others hold most of the norm."""
    rng = np.random.default_rng(seed)
    golden = rng.uniform(low, high, 4096).astype(np.float32)
    golden[:64] = rng.uniform(2.5e-6, 3.5e-6, 64)
    device = (golden * np.float32(scale)).astype(np.float16)
    return device, golden


def test_a_tensor_of_flushed_subnormals_passes_the_guard_as_its_cosine_does():
    device, golden = _flushed()
    r = _result(device, golden)
    m = r.rows[0].metrics
    assert m.value("cosine") == 1.0 and m.cosine < 0.6 and m.norm_ratio < 0.5  # H324's figures
    assert guard_ratio(m, "cosine") == (1.0, True)
    assert r.judge(0.99, scale_tolerance=2).passed
    assert r.judge(0.1, metric="rel_l2", scale_tolerance=2).passed
    # a metric judged over every position keeps the plain ratio, and so fails the guard
    assert guard_ratio(m, "max_abs") == (m.norm_ratio, False)
    f = r.judge(1e-6, metric="max_abs", scale_tolerance=2).first
    assert f.reason.startswith(f"scale: L2 norm {m.norm_ratio:.4g}x the golden's, outside")


def test_a_tensor_all_tiny_scaled_by_0_4_fails_the_guard():
    golden = np.random.default_rng(1).uniform(1e-6, 5e-5, 4096).astype(np.float32)
    device = (golden * np.float32(0.4)).astype(np.float16)
    assert device.max() < TINY
    r = _result(device, golden)
    m = r.rows[0].metrics
    assert m.value("cosine") > 0.99999 and 0.39 < guard_ratio(m, "cosine")[0] < 0.41
    f = r.judge(0.99, scale_tolerance=2).first
    assert f is not None and f.reason.startswith("scale: L2 norm 0.4")


def test_flushed_values_beside_values_scaled_by_0_4_fail_and_the_reason_says_over_what():
    device, golden = _mixed(0.4)
    r = _result(device, golden)
    m = r.rows[0].metrics
    assert m.normal_rel_l2 is not None and m.tiny_equal > 4000
    ratio, tiny = guard_ratio(m, "rel_l2")  # judged with those positions as equal: 0.599556
    assert tiny and ratio == pytest.approx(_as_judged(device, golden), rel=1e-6)
    assert 0.4 < ratio < 0.45 and ratio != pytest.approx(m.norm_ratio, rel=1e-3)
    f = r.judge(0.7, metric="rel_l2", scale_tolerance=2).first
    assert f.reason == (
        f"scale: L2 norm {ratio:.4g}x the golden's with the {m.tiny_equal} positions the rel_l2 "
        f"judged counts as equal (every position: {m.norm_ratio:.4g}x), outside 0.5-2x (rel_l2 "
        f"{m.normal_rel_l2:.6g} meets its threshold; msaccucmp's rel_l2 {m.rel_l2:.6f}; "
        "scale_tolerance= tunes this, --scale-tolerance on the command line)")
    # the cosine judged here is msaccucmp's (with those positions equal it reads lower): so is
    # the ratio, over every position
    assert m.value("cosine") == m.cosine > m.normal_cosine
    assert guard_ratio(m, "cosine") == (m.norm_ratio, False)
    f = r.judge(0.99, scale_tolerance=2).first
    assert f.reason.startswith(f"scale: L2 norm {m.norm_ratio:.4g}x the golden's, outside 0.5-2x "
                               f"(the cosine judged, {m.cosine:.6f}, is blind to scale;")


def test_flushed_values_beside_values_scaled_by_2_5_fail_by_the_cosine_judged():
    device, golden = _mixed(2.5, low=4e-9, high=1.1e-8)  # 2.5x: still flushed
    r = _result(device, golden)
    m = r.rows[0].metrics
    assert m.value("cosine") == m.normal_cosine > m.cosine
    ratio, tiny = guard_ratio(m, "cosine")
    assert tiny and ratio == pytest.approx(_as_judged(device, golden), rel=1e-6) and ratio > 2
    f = r.judge(0.99, scale_tolerance=2).first
    assert f.reason == (
        f"scale: L2 norm {ratio:.4g}x the golden's with the {m.tiny_equal} positions the cosine "
        f"judged counts as equal (every position: {m.norm_ratio:.4g}x), outside 0.5-2x (the "
        f"cosine judged, {m.normal_cosine:.6f}, is blind to scale; msaccucmp's cosine "
        f"{m.cosine:.6f}; scale_tolerance= tunes this, --scale-tolerance on the command line)")


def test_the_same_mix_computed_right_passes():
    device, golden = _mixed(1.0)
    r = _result(device, golden)
    assert guard_ratio(r.rows[0].metrics, "cosine")[1]
    assert r.judge(0.99, scale_tolerance=2).passed


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scale", [0.3, 0.45, 0.7, 1.0, 1.6, 2.5])
def test_the_ratio_judged_is_the_one_of_the_arrays_with_those_positions_equal(seed, scale):
    """Tiny tensors of every kind of mix (flushed values, values on the subnormal grid, a few
    normal ones, signs), scaled: where the guard takes the judged positions its ratio is the one
    computed from the arrays, else the plain one."""
    rng = np.random.default_rng(seed)
    golden = (rng.uniform(1e-8, 3e-8, 2048) * rng.choice([-1, 1], 2048)).astype(np.float32)
    k = rng.integers(1, 200)
    golden[:k] = rng.uniform(1e-7, 10 ** rng.uniform(-6, -3.9), k)
    device = (golden * np.float32(scale)).astype(np.float16)
    m = _result(device, golden).rows[0].metrics
    for metric in ("cosine", "rel_l2"):
        ratio, tiny = guard_ratio(m, metric)
        if tiny:
            assert ratio == pytest.approx(_as_judged(device, golden), rel=1e-6, abs=1e-9)
        else:
            assert ratio == m.norm_ratio


def test_a_double_root_split_by_rounding_is_one_root():
    """An all-subnormal tensor, part of it flushed, the rest float16's rounding of the golden:
    the guard's two roots coincide in real numbers (c*c - 1 + d*d is 0) and rounding split them
    by 1e-8 (3.5e-17 under the root), both fell within reach of the plain ratio and the guard
    judged the plain one (a review, H339: 0.4447x failed a tensor whose judged ratio was 0.9918).
    They are one root now: the judged positions' ratio, on every draw."""
    for seed in range(40):
        rng = np.random.default_rng(seed)
        golden = (rng.random(182) * 2.8e-7).astype(np.float32) * rng.choice([1, -1], 182)
        device = golden.astype(np.float16)
        device[rng.random(182) < 0.3] = 0
        m = _result(device, golden).rows[0].metrics
        ratio, tiny = guard_ratio(m, "cosine")
        assert tiny, (seed, m.norm_ratio)
        assert ratio == pytest.approx(_as_judged(device, golden), rel=1e-6, abs=1e-9), seed


def _both_roots_near():
    """A golden below 3.3e-7 beside one value of 9.5e-7, the device 0.3x: every position but
    that one counted as equal (the judged cosine 0.99), whose ratio is 0.987x, over every
    position 0.31x; from the cosine and rel_l2 judged alone its roots are 0.987 and 0.999, both
    within reach of 0.31 (A1's random-init YOLOv8n, a map float16 had rounded: 0.1497x beside
    a judged cosine of 0.998815)."""
    golden = np.random.default_rng(0).uniform(-1.35e-7, 3.3e-7, 1078).astype(np.float32)
    golden[0] = 9.5e-7
    return (golden * np.float32(0.3)).astype(np.float16), golden


def test_the_ratio_judged_is_read_where_two_roots_would_be_near_the_plain_one():
    device, golden = _both_roots_near()
    r = _result(device, golden)
    m = r.rows[0].metrics
    assert m.value("cosine") == m.normal_cosine > 0.99 > m.cosine and m.norm_ratio < 0.35
    ratio, tiny = guard_ratio(m, "cosine")
    assert tiny and ratio == pytest.approx(_as_judged(device, golden), rel=1e-6)
    assert 0.98 < ratio < 0.99
    assert r.judge(0.99, scale_tolerance=2).passed  # before: scale 0.3132x, failed
    assert r.judge(0.995, scale_tolerance=2).first.reason.startswith("cosine 0.993234 fails")


def test_a_compare_json_written_before_the_judged_ratio_was_says_what_the_figure_counts():
    """A compare.json of a version that did not store ``normal_norm_ratio`` (the field left
    out) is judged by the two roots, and where both are near the plain ratio, by that: its
    reason says the cosine judged counts the positions below float16's smallest normal as
    equal, which is why it passes where msaccucmp's does not (it read "the cosine judged,
    0.998815, is blind to scale; msaccucmp's cosine 0.044796", as though scale-blindness had
    made the cosine high)."""
    device, golden = _both_roots_near()
    d = json.loads(_result(device, golden).to_json())
    for row in d["rows"]:
        del row["metrics"]["normal_norm_ratio"]
    r = CompareResult.from_dict(d)
    m = r.rows[0].metrics
    assert m.normal_norm_ratio is None and guard_ratio(m, "cosine") == (m.norm_ratio, False)
    assert r.judge(0.99, scale_tolerance=2).first.reason == (
        f"scale: L2 norm {m.norm_ratio:.4g}x the golden's, outside 0.5-2x (the cosine judged, "
        f"{m.normal_cosine:.6f}, counts the 1077 positions below float16's smallest normal on "
        "both sides, of one sign and within 2**-22 + 1/8 of the golden value of each other, as "
        f"equal and is blind to scale; msaccucmp's cosine {m.cosine:.6f}; scale_tolerance= "
        "tunes this, --scale-tolerance on the command line)")
    # one root near the plain ratio: that one, as the stored ratio gives it
    device, golden = _mixed(2.5, low=4e-9, high=1.1e-8)
    d = json.loads(_result(device, golden).to_json())
    stored = d["rows"][0]["metrics"].pop("normal_norm_ratio")
    m = CompareResult.from_dict(d).rows[0].metrics
    assert guard_ratio(m, "cosine") == (pytest.approx(stored, rel=1e-9), True)


def test_a_failure_block_prints_small_errors_with_significant_digits():
    device, golden = _mixed(0.4)
    r = _result(device, golden)
    m = r.rows[0].metrics
    assert 1e-7 < m.max_abs < 1e-5
    text = failure_text(r, r.judge(0.99, scale_tolerance=2))
    assert f"  max abs error  {m.max_abs:.4g}\n" in text
    assert "max abs error  0.000000" not in text
    # a metric judged that meets its threshold and fails the guard: its figure
    text = failure_text(r, r.judge(1e-4, metric="max_abs", scale_tolerance=2))
    assert f"  max_abs        {m.max_abs:.4g} (meets 0.0001; fails the scale guard)\n" in text

"""The compiled pass of the float16 tiny-value rule (compare/_tiny_pass.c) and the compiled
judged error metrics give what the numpy loops give: the same counts, the same sums to the
last bits, the same verdict figures."""
import math

import numpy as np
import pytest

from pytest_ascend_accuracy.compare import tiny_values as tv
from pytest_ascend_accuracy.compare.metrics import compute_metrics
from pytest_ascend_accuracy.compare.pair_sums import NUMPY_KERNEL_ENV

pytestmark = pytest.mark.skipif(tv.pass_extension() is None,
                                reason="the _tiny_pass extension is not built here")


def _pair(seed: int, n: int, golden=np.float32):
    """A float16 actual against a golden with every case of the rule: 0 against 0, close and
    far subnormal pairs, opposite signs, normal values, NaN and Inf on either side."""
    rng = np.random.default_rng(seed)
    y = (rng.standard_normal(n) * 10.0 ** rng.integers(-9, 1, n)).astype(np.float32)
    y[rng.random(n) < 0.2] = 0.0
    x = y.astype(np.float16)
    kind = rng.integers(0, 6, n)
    x[kind == 1] = (y[kind == 1] * 1.05).astype(np.float16)   # close, differing
    x[kind == 2] = (-y[kind == 2]).astype(np.float16)          # opposite sign
    x[kind == 3] = (y[kind == 3] * 3.0).astype(np.float16)     # far
    x[kind == 4] = 0.0                                        # flushed
    for side in (x, y):
        side[rng.integers(0, n, 3)] = np.nan
        side[rng.integers(0, n, 2)] = np.inf
    return x, y.astype(golden)


@pytest.mark.parametrize("golden", [np.float32, np.float16])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 1000, 65_537])
def test_the_compiled_tally_is_the_numpy_one(golden, n):
    x, y = _pair(n, n, golden)
    fast = tv._compiled_tally(x, y)
    slow = tv._numpy_tally(x, y, 4096)
    assert fast[5:] == slow[5:]  # equal, tiny, apart: the same positions
    for a, b in zip(fast[:5], slow[:5]):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-300)
    assert fast[5] > 0 or n < 1000  # (a long pair holds positions the rule counts)


def test_a_tensor_without_tiny_positions_tallies_nothing():
    y = np.linspace(1.0, 2.0, 10_000, dtype=np.float32)
    assert tv._compiled_tally(y.astype(np.float16), y) == (0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0)
    zeros = np.zeros(10_001, np.float32)  # 0 against 0: tiny, nothing to correct
    assert tv._compiled_tally(zeros.astype(np.float16), zeros)[5:] == (0, 10_001, 0)


def test_pairs_the_compiled_pass_cannot_take_go_to_numpy():
    x, y = _pair(1, 1000)
    assert tv._compiled_tally(x, y.astype(np.float64)) is None
    assert tv._compiled_tally(x[::2], y[::2]) is None


@pytest.mark.parametrize("kl", [False, True])
def test_the_compiled_judged_errors_are_the_numpy_ones(kl):
    rng = np.random.default_rng(7)
    y = (rng.random(200_003) * 2.5e-5).astype(np.float32)  # a map below float16's smallest normal
    y[:1000] = rng.random(1000).astype(np.float32)          # and some normal values
    x = (y * (1 + rng.standard_normal(y.size) * 0.01)).astype(np.float16)
    fast = tv._compiled_judged(x, y, 4096, kl)
    slow = tv._numpy_judged(x, y, 4096, kl)
    assert fast is not None
    assert fast.max_rel == slow.max_rel  # float32 terms, bit for bit
    for name in ("sdd", "syy", "sum_rel"):
        assert getattr(fast, name) == pytest.approx(getattr(slow, name), rel=1e-6)
    if kl:
        assert fast.kl() == pytest.approx(slow.kl(), rel=1e-4, abs=1e-9)


def test_a_tensor_longer_than_whole_max_takes_the_numpy_chunks(monkeypatch):
    x, y = _pair(3, 1000)
    monkeypatch.setattr(tv, "WHOLE_MAX", 999)
    assert tv._compiled_judged(np.nan_to_num(x), np.nan_to_num(y), 4096, False) is None


def test_the_metrics_verdict_is_the_same_either_way(monkeypatch):
    """compute_metrics with the compiled passes and with them turned off: the judged figures
    agree (the plain ones are pair_sums' own affair)."""
    rng = np.random.default_rng(11)
    y = (rng.random(300_000) * 2.5e-5).astype(np.float32)
    x = (y * (1 + rng.standard_normal(y.size) * 0.05)).astype(np.float16)
    fast = compute_metrics(x, y)
    monkeypatch.setenv(NUMPY_KERNEL_ENV, "1")
    monkeypatch.setattr(tv, "_MODULE", [])
    assert tv.pass_extension() is None
    slow = compute_metrics(x, y)
    assert fast.tiny_equal == slow.tiny_equal > 0
    for name in ("normal_cosine", "normal_rel_l2", "normal_mean_rel", "normal_acc_rel"):
        a, b = getattr(fast, name), getattr(slow, name)
        assert a is not None and b is not None and not math.isnan(a)
        assert a == pytest.approx(b, rel=1e-6, abs=1e-12), name
    assert fast.normal_max_rel == slow.normal_max_rel


@pytest.mark.parametrize("golden", [np.float32, np.float16])
def test_the_compiled_replacement_is_the_numpy_one(golden):
    x, y = _pair(5, 10_007, golden)
    out = x.astype(np.float32)
    tv.pass_extension().replace(x, y, golden == np.float16, x.size, out)
    expected = tv._replaced(x, y)
    assert np.array_equal(out, expected, equal_nan=True)
    assert not np.array_equal(out, x.astype(np.float32), equal_nan=True)  # (it replaced some)

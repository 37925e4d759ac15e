"""float16's allowance for values below its smallest normal (``compare/tiny_values.py``) was
worked out for a float16 actual only. A float32 op that moves a float16 op's values on (a
Transpose after a float16 MatMul under high precision) outputs the same values in float32, and
its plain cosine failed the op that only copied them: T1's random-init ConvNeXt, whose layer
scale's float16 Mul passed by the rule while the float32 Transpose after it failed at 0.333783
with the same values, so high precision failed where the default passed. A float32 actual whose
every value float16 holds exactly is now read as float16 by the rule (``float16_values``); one
computed in float32 keeps its plain figures."""
import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.tiny_values import FLOAT32_HELD_NOTE, float16_values
from pytest_ascend_accuracy.dump.model import DumpSet


def _metrics(actual, golden):
    r = compare_dumps(DumpSet.from_arrays({"t": [actual]}), DumpSet.from_arrays({"t": [golden]}))
    return r, r.rows[0].metrics


def _layer_scale(seed=0, n=8192):
    """A golden of a few 1e-8 (the layer scale's output: at most 4.1e-8) and float16's rounding
    of it, which holds most of it as 0 or one step of the subnormal grid."""
    golden = np.random.default_rng(seed).uniform(-4e-8, 4.1e-8, n).astype(np.float32)
    return golden.astype(np.float16), golden


def test_a_float32_copy_of_float16_values_is_judged_as_the_float16_op_was():
    half, golden = _layer_scale()
    _, in_half = _metrics(half, golden)
    r, copied = _metrics(half.astype(np.float32), golden)
    assert in_half.cosine < 0.8 and in_half.value("cosine") == 1.0
    assert copied.cosine == in_half.cosine and copied.value("cosine") == in_half.value("cosine")
    assert copied.tiny_equal == in_half.tiny_equal == golden.size
    assert copied.normal_norm_ratio == in_half.normal_norm_ratio
    assert copied.notes[0] == FLOAT32_HELD_NOTE and FLOAT32_HELD_NOTE not in in_half.notes
    assert r.judge(0.99).passed


def test_a_float32_tensor_computed_in_float32_keeps_its_plain_figures():
    half, golden = _layer_scale()
    computed = half.astype(np.float32)
    computed[17] = np.float32(3.3e-8)  # one value float16 does not hold: computed in float32
    assert float(np.float16(computed[17])) != float(computed[17])
    r, m = _metrics(computed, golden)
    assert m.normal_cosine is None and m.tiny_equal == 0 and m.value("cosine") == m.cosine < 0.8
    assert not r.judge(0.99).passed


@pytest.mark.parametrize("chunk", [7, 4096, 1 << 20])
def test_every_chunk_is_read_before_a_float32_tensor_counts_as_float16s(chunk):
    half, _ = _layer_scale(n=10000)
    held = half.astype(np.float32)
    assert float16_values(held, chunk).dtype == np.float16
    assert np.array_equal(float16_values(held, chunk), half)
    held[-1] = np.float32(1e-9)  # the last chunk's last value
    assert float16_values(held, chunk) is None
    assert float16_values(half, chunk) is half
    assert float16_values(half.astype(np.float64), chunk) is None


def test_non_finite_values_float16_holds_are_float16s_and_a_float32_past_its_range_is_not():
    held = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 2.0 ** -24, 65504.0], np.float32)
    assert np.array_equal(float16_values(held, 4), held.astype(np.float16), equal_nan=True)
    assert float16_values(np.array([1.0, 70000.0], np.float32), 4) is None  # float16: inf


def test_the_rule_still_fails_a_wrong_copy():
    """The rule's own bounds hold for a float32 copy as for float16: values moved into the
    normal range, or flipped in sign, count in full."""
    half, golden = _layer_scale()
    flipped = -half.astype(np.float32)
    r, m = _metrics(flipped, golden)
    assert m.value("cosine") < 0 and not r.judge(0.99).passed
    offset = half.astype(np.float32) + np.float32(2.0 ** -10)  # into the normal range
    r, m = _metrics(offset, golden)
    assert not r.judge(0.99, scale_tolerance=2).passed

"""8-bit integer codes at a wrong scale (a quantisation trial): their cosine was taken around
the golden's mean (a zero point such as 128 kept any plain cosine near 1), their norm ratio,
which the scale guard judges, was not: codes at twice the golden's scale around 128 read 1.00.
Both are taken around the golden's mean now; and the README's advice for quantised models, a
tighter ``scale_tolerance``, fails a 1.5x scale where the default 2x lets it pass."""
import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy

RNG = np.random.default_rng(1)
X = RNG.normal(0, 0.8, (1, 4, 16, 16)).astype(np.float32)


def _codes(scale, zero_point=128):
    return np.clip(np.round(X / scale) + zero_point, 0, 255).astype(np.uint8)


def _dumps(actual, golden):
    return (DumpSet.from_arrays({"act_quant": [actual]}),
            DumpSet.from_arrays({"act_quant": [golden]}))


def test_the_norm_ratio_of_8_bit_codes_is_taken_around_the_golden_s_mean():
    row = compare_dumps(*_dumps(_codes(0.04), _codes(0.02))).rows[0]
    assert row.metrics.norm_ratio == pytest.approx(0.5, abs=0.02)  # 1.00 around zero
    assert any("norm ratio taken around the golden's mean" in n for n in row.metrics.notes)


@pytest.mark.parametrize("factor", [1.5, 1 / 1.5])
def test_a_tighter_scale_tolerance_fails_a_wrong_scale_the_default_passes(factor):
    actual, golden = _dumps(_codes(0.02 * factor), _codes(0.02))
    assert_accuracy(actual, golden, threshold=0.99)  # the default 2x guard: passes
    with pytest.raises(AccuracyFailure, match="scale guard"):
        assert_accuracy(actual, golden, threshold=0.99, scale_tolerance=1.1)


def test_one_code_of_rounding_passes_the_tighter_tolerance():
    golden = _codes(0.02)
    actual = golden.astype(np.int16)
    flip = RNG.random(golden.shape) < 0.3
    actual[flip] += RNG.choice([-1, 1], size=int(flip.sum()))
    assert_accuracy(*_dumps(np.clip(actual, 0, 255).astype(np.uint8), golden), threshold=0.99,
                    scale_tolerance=1.1)

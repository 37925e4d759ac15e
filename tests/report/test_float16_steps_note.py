"""A max_abs threshold within a few float16 steps of the values judged is said to be so: NudeNet's
boxes "within 0.5 px" near x = 316, where float16's step is 0.25, failed by 0.956 on one photo
and passed by 0.471 on an equally plausible float16 run (audit 34); the block never said that
0.5 was 2 steps of float16 there."""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.failure_text import failure_text


def _block(golden_peak, threshold, off=0.6):
    g = np.linspace(1.0, golden_peak, 64).astype(np.float32)
    a = g.copy()
    a[-1] += off
    golden = DumpSet.from_arrays({"boxes": [g]})
    actual = DumpSet.from_arrays({"boxes": [a]}, op_types={"boxes": "Mul"})
    result = compare_dumps(actual, golden)
    return failure_text(result, result.judge(threshold, metric="max_abs"))


def test_a_threshold_of_two_float16_steps_is_named_so():
    text = _block(316.0, 0.5)
    assert ("; 0.5 is 2 float16 steps at |golden| up to 316 (step 0.25): float16 rounding alone "
            "moves such values by up to half a step") in text, text


def test_a_threshold_well_above_float16_resolution_gets_no_note():
    assert "float16 step" not in _block(3.0, 0.5)

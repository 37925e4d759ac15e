"""The scale guard: cosine is blind to scale, so check_accuracy also bounds the L2 norm ratio."""
import json

import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.metrics import TensorMetrics, compute_metrics
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.errors import ConfigError

G = np.random.default_rng(0).standard_normal((4, 32)).astype(np.float32)


def _result(scale):
    golden = DumpSet.from_arrays({"conv": [G], "fc": [G[:2]]})
    actual = DumpSet.from_arrays({"conv": [G * scale], "fc": [G[:2]]})
    return compare_dumps(actual, golden)


def test_norm_ratio_is_measured_and_survives_json():
    m = compute_metrics(G * 3400, G)
    assert m.cosine == pytest.approx(1.0) and m.norm_ratio == pytest.approx(3400, rel=1e-6)
    again = TensorMetrics.from_dict(json.loads(json.dumps(m.to_dict())))
    assert again.norm_ratio == pytest.approx(3400, rel=1e-6)
    assert np.isnan(TensorMetrics.from_dict({}).norm_ratio)  # results saved before the field


@pytest.mark.parametrize("scale", [3400.0, 0.3])
def test_off_scale_tensor_fails_with_a_scale_reason_though_cosine_passes(scale):
    verdict = _result(scale).judge(0.95, scale_tolerance=2.0)
    assert not verdict.passed and verdict.first.row.op_name == "conv"
    assert verdict.first.reason.startswith("scale: L2 norm")
    assert _result(scale).judge(0.95).passed  # off by default outside check_accuracy


def test_within_the_bound_passes():
    assert _result(1.5).judge(0.95, scale_tolerance=2.0).passed
    assert _result(1.5).judge(0.95, scale_tolerance=2.0).policy.to_dict()["scale_tolerance"] == 2.0


@pytest.mark.parametrize("bad", [1.0, 0.5, -2, "2", True])
def test_bad_tolerance_is_a_config_error(bad):
    with pytest.raises(ConfigError, match="scale_tolerance"):
        _result(1.0).judge(0.95, scale_tolerance=bad)


CHECKS = '''
import numpy as np
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.dump.model import DumpSet

G = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)

def dumps(scale):
    return DumpSet.from_arrays({"norm": [G * scale]}), DumpSet.from_arrays({"norm": [G]})

def test_guard_on_by_default(check_accuracy):
    check_accuracy(*dumps(58.4))

@accuracy(scale_tolerance=100)
def test_guard_tuned(check_accuracy):
    check_accuracy(*dumps(58.4))

@accuracy(scale_tolerance=None)
def test_guard_off(check_accuracy):
    check_accuracy(*dumps(58.4))

def test_healthy(check_accuracy):
    check_accuracy(*dumps(1.001))
'''


def test_check_accuracy_guard_on_by_default_and_tunable(pytester):
    pytester.makepyfile(test_scale=CHECKS, test_bad_marker="""
        from pytest_ascend_accuracy import accuracy

        @accuracy(scale_tolerance=0.5)
        def test_bad_marker(check_accuracy):
            pass
    """)
    result = pytester.runpytest("-q", "--continue-on-collection-errors")
    result.assert_outcomes(passed=3, failed=1, errors=1)
    out = result.stdout.str()
    assert "scale: L2 norm 58.4x the golden's, outside 0.5-2x" in out
    assert "scale_tolerance: expected a factor > 1" in out

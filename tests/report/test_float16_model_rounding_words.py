"""``report.float16_model``'s rounding case, as library code: a failure within float16's own
rounding at an op the ONNX model computes in float16 (``rounding_failures``), the metric line's
way out for such an op (``model_rounding_note``), and the hint the command line and the Python
API print where a stored golden records its model (``failure_text.default_hint``). Audit 35 F5:
IMG.LY's ISNet, float16 weights, ``/Sigmoid`` 3 float16 steps off against a bound of 0.41."""
import numpy as np
import pytest

pytest.importorskip("onnx")

from pytest_ascend_accuracy import DumpSet  # noqa: E402
from pytest_ascend_accuracy.compare.engine import compare_dumps  # noqa: E402
from pytest_ascend_accuracy.compare.thresholds import Policy  # noqa: E402
from pytest_ascend_accuracy.report import float16_model as f16  # noqa: E402
from pytest_ascend_accuracy.report.failure_text import default_hint, failure_text  # noqa: E402
from tests.plugin.test_float16_model_rounding import half_conv  # noqa: E402

STEP = 2.0 ** -11  # float16's step in [0.5, 1)


def _result(steps, dtype=np.float16):
    """A sigmoid output near 0.9 and the device's, ``steps`` float16 steps off at one place."""
    golden = np.linspace(0.55, 0.95, 64).astype(dtype)
    actual = golden.astype(np.float64)
    actual[10] += steps * STEP
    return compare_dumps(DumpSet.from_arrays({"sigmoid": [actual.astype(dtype)]},
                                             op_types={"sigmoid": "Sigmoid"}),
                         DumpSet.from_arrays({"sigmoid": [golden]},
                                             op_types={"sigmoid": "Sigmoid"}))


def _verdict(result, bound=1e-5, metric="max_abs"):
    return result.judge(Policy.build(0.99, {"sigmoid": {metric: bound}}))


@pytest.fixture
def models(tmp_path):
    half_conv(tmp_path / "half.onnx")
    half_conv(tmp_path / "f32.onnx", half=False)
    return str(tmp_path / "half.onnx"), str(tmp_path / "f32.onnx")


def test_rounding_failures_needs_the_model_computing_the_op_in_float16(models):
    half, f32 = models
    verdict = _verdict(_result(2))
    assert not verdict.passed
    assert f16.rounding_failures(verdict, half)
    assert not f16.rounding_failures(verdict, None)  # a float16 golden alone is no proof (H341)
    assert not f16.rounding_failures(verdict, f32)  # the model says float32


def test_rounding_failures_is_float16s_own_rounding_only(models):
    half, _ = models
    assert not f16.rounding_failures(_verdict(_result(6)), half)  # 6 steps: beyond rounding
    assert not f16.rounding_failures(_verdict(_result(2), bound=5 * STEP), half)  # a loose bound
    assert not f16.rounding_failures(_verdict(_result(40), 0.9999, "cosine"), half)


def test_the_metric_lines_way_out_names_the_export_for_such_an_op():
    note = "...: allow more, or " + f16.KEEP_TAIL
    assert f16.model_rounding_note(note, True) == "...: allow more, or " + f16.MODEL_TAIL
    assert f16.model_rounding_note(note, False) == note


def test_a_stored_goldens_model_gives_the_command_line_the_same_words(models):
    """``ascend-accuracy compare`` / ``judge`` record the golden's model in
    ``meta["diagnose"]``: the failure there says what the plugin's does."""
    half, f32 = models
    result = _result(2)
    verdict = _verdict(result)
    assert "itself computes" not in default_hint(verdict, (), result, cli=True)
    result.meta["diagnose"] = {"model": half}
    hint = default_hint(verdict, (), result, cli=True)
    assert ("the ONNX model itself computes sigmoid in float16 (its golden is float16), and its "
            "max_abs is 2 float16 steps there") in hint, hint
    assert "so no mode is offered: allow max_abs up to the threshold that would pass" in hint
    assert "diagnose" not in hint, hint
    text = failure_text(result, verdict, cli=True)
    assert f16.MODEL_TAIL in text and f16.KEEP_TAIL not in text, text
    result.meta["diagnose"] = {"model": f32}  # a float32 model: the probe as before
    assert "itself computes" not in default_hint(verdict, (), result, cli=True)

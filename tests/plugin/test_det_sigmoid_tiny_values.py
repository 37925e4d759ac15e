"""The real PP-OCRv4 detector at 160x160 (its last op a Sigmoid whose output, on the
deterministic inputs, is all below 4.5e-7: float16 subnormals) checked at threshold 0.999 on the
emulator's default float16 conversion. Its cosine, 0.883263 (msaccucmp's own function gives
the same), measured float16's subnormal grid, and the check failed at p2o.Sigmoid.0 with
``next step: ... modes=[FUSION_OFF]``, which cannot help; positions below float16's smallest
normal on both sides, of one sign and within 2**-22 + 1/8 of the golden value, now count as equal
(``compare/tiny_values.py``; faults of such a map that still fail are tested there, in
``tests/compare/test_tiny_sigmoid_judging.py``). Needs the
``ocr`` test extra (``pip install rapidocr-onnxruntime``: only its model file is used);
skipped without it."""

import pytest

from pytest_ascend_accuracy.testing.ocr_models import MISSING, ocr_model_path

DET = ocr_model_path("det")
pytestmark = pytest.mark.skipif(DET is None, reason=MISSING)

TEST = '''
from pytest_ascend_accuracy import accuracy

DET = {det!r}
SHAPE = {{"x": [1, 3, 160, 160]}}


@accuracy(threshold=0.999)
def test_det(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(DET, input_shape=SHAPE)
    actual = ascend_model(DET, input_shape=SHAPE).run(inputs)
    check_accuracy(actual, golden_dump(DET, inputs, input_shape=SHAPE))
'''


def test_the_detectors_subnormal_probability_map_passes_at_0_999(pytester):
    pytester.makepyfile(test_det=TEST.format(det=DET))
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep")
    run.assert_outcomes(passed=1)
    from pytest_ascend_accuracy.compare.result import CompareResult

    saved = CompareResult.load(next((pytester.path / "rep").rglob("compare.json")))
    m = saved.row("p2o.Sigmoid.0").metrics
    assert m.max_abs_golden < 2.0 ** -14 and m.cosine < 0.9
    assert m.normal_cosine == 1.0 and not saved.judge(0.999).failures

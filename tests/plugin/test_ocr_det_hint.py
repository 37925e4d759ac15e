"""The issue-12 walk-through on a real model: PP-OCRv4 det (node names like
``p2o.BatchNormalization.1``) in fusion_off at 320x320. The printed hint, pasted verbatim, makes
the test pass; the sanitized spelling is refused naming the real op. Needs the ``ocr`` test extra
(``pip install rapidocr-onnxruntime``: only its model file is used); skipped without it."""
import re
import xml.etree.ElementTree as ET

import pytest

from pytest_ascend_accuracy.testing.ocr_models import MISSING, ocr_model_path

DET = ocr_model_path("det")
pytestmark = pytest.mark.skipif(DET is None, reason=MISSING)

TEST = '''
from pytest_ascend_accuracy import accuracy, {imports}

DET = {det!r}
SHAPE = {{"x": [1, 3, 320, 320]}}


@accuracy(modes=[{modes}])
def test_det(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(DET, input_shape=SHAPE)
    actual = ascend_model(DET, input_shape=SHAPE).run(inputs)
    check_accuracy(actual, golden_dump(DET, inputs, input_shape=SHAPE))
'''


def test_pp_ocr_det_hint_pasted_verbatim_passes(pytester):
    pytester.makepyfile(test_det=TEST.format(imports="FUSION_OFF", det=DET, modes="FUSION_OFF"))
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep",
                             "--junitxml=junit.xml", "-o", "junit_family=xunit1")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    block = text[text.index("next step:"):]
    first = re.search(r"^  modes=\[(.+)\]$", block, re.M).group(1)
    imports = re.search(r"\(from pytest_ascend_accuracy import (.+)\)", block).group(1)
    assert first == "FUSION_OFF | keep_dtype(['p2o.BatchNormalization.1'])"
    assert "p2o_BatchNormalization" not in text
    props = {p.get("name"): p.get("value")
             for p in ET.parse(str(pytester.path / "junit.xml")).iter("property")}
    assert f"modes=[{first}]" in props["accuracy_hint"]
    page = next((pytester.path / "rep").rglob("report.html")).read_text(encoding="utf-8")
    assert "p2o.BatchNormalization.1" in page and "p2o_BatchNormalization_1" not in page

    pytester.makepyfile(test_det=TEST.format(imports=imports, det=DET, modes=first))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

    sanitized = first.replace("p2o.BatchNormalization.1", "p2o_BatchNormalization_1")
    pytester.makepyfile(test_det=TEST.format(imports=imports, det=DET, modes=sanitized))
    refused = pytester.runpytest("-p", "no:cacheprovider")
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines(["*keep_dtype entry 'p2o_BatchNormalization_1' is not an op of "
                                  "model 'ch_PP-OCRv4_det_infer'*closest: "
                                  "'p2o.BatchNormalization.1'*"])

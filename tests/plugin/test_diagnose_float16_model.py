"""``--accuracy-diagnose`` on a test of a model that itself computes in float16 (a
``model.half()`` export, a Cast to float16 before an overflowing Mul), as a user sees it: it
walked high precision, keep_dtype of every op, buffer and fusion off, none of which can change a
float16 op's precision, and ended "... check the operator implementations against the
reference". It says which modes it tried, that none can, and the next step in the plugin's
spelling; done as it says (the test pointed at the float32 export, rerun with
--accuracy-diagnose), the diagnosis names a fix that passes pasted."""

import pytest

pytest.importorskip("onnxruntime")

from tests.test_triage_float16_model import (  # noqa: E402
    ADVICE, MODELS, REASON, PLUGIN_TEST as TEST)
from pasted_fix_lines import FIX  # noqa: E402


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_the_diagnosis_sends_to_the_float32_export_whose_fix_passes_pasted(kind, pytester):
    build, half, f32 = MODELS[kind]
    (pytester.path / "models").mkdir()
    build(pytester.path / "models" / half, True)
    build(pytester.path / "models" / f32, False)
    pytester.makepyfile(test_model=TEST.format(imports="", modes="", name=half))
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    line = next(ln for ln in text.splitlines() if "diagnosis (--accuracy-diagnose" in ln)
    assert ("no conversion mode restores accuracy, and none can: under default the model "
            "differs from the golden network from op softmax on") in line, line
    assert REASON in line and "no mode tried passes (high_precision, keep_dtype(all " in line
    assert line.endswith(f"{ADVICE}; point the test's ascend_model and golden_dump calls at that "
                         "export and rerun it with --accuracy-diagnose"), line
    assert "check the operator implementations" not in text
    assert "fix: modes=" not in text
    # done as it says: the test pointed at the float32 export, rerun with --accuracy-diagnose
    pytester.makepyfile(test_model=TEST.format(imports="", modes="", name=f32))
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    assert "float16 (its golden" not in text
    expr, _, imports = FIX.search(text).groups()
    assert expr.startswith("keep_dtype(["), text
    # its fix, pasted verbatim, passes
    pytester.makepyfile(test_model=TEST.format(imports=", " + imports, modes=f", modes=[{expr}]",
                                               name=f32))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

"""``--accuracy-diagnose`` on a check failing by plain float16 rounding, as a user sees it.

The hint of a test whose fusion and buffer reuse are off already sends the user to
``--accuracy-diagnose``; it said "no conversion mode restores accuracy" without ever keeping an
op in float32 where no value left the float16 range, although keeping the MatMuls passes. Its
fix, pasted verbatim into ``modes=[...]`` and into a YAML suite, must pass. Out of budget, it
named the CLI's ``--budget``; pasted as printed, the plugin's own option continues the search.
"""
import re

from pytest_ascend_accuracy.report.hints import DIAGNOSE_ADVICE
from pasted_fix_lines import FIX

TEST = '''
from pytest_ascend_accuracy import accuracy, {imports}
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.9999999, modes=[{expr}])
def test_mlp(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/passing_mlp.onnx")
    actual = ascend_model("models/passing_mlp.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/passing_mlp.onnx", inputs))
'''

SUITE = '''
models:
  - name: mlp
    model: models/passing_mlp.onnx
    threshold: 0.9999999
    modes: [{yaml}]
'''


def _failing(pytester):
    pytester.makepyfile(test_mlp=TEST.format(imports="BUFFER_OFF, FUSION_OFF",
                                             expr="BUFFER_OFF | FUSION_OFF"))


def test_the_diagnosis_keeps_ops_in_float32_and_its_fix_passes_pasted(pytester, models_dir):
    _failing(pytester)
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    # the hint promises what the diagnosis then does
    assert ("next step: no float16 overflow seen, and fusion and buffer reuse are already off: "
            + DIAGNOSE_ADVICE) in text
    assert "high precision does not pass" in text and "keeping every op in float32 does" in text
    assert "no conversion mode restores accuracy" not in text
    expr, yaml, imports = FIX.search(text).groups()
    assert expr.startswith("BUFFER_OFF | FUSION_OFF | keep_dtype([")
    assert "'fc1/MatMul'" in expr  # a small set: the Cube ops, not every op
    assert "relu1" not in expr
    pytester.makepyfile(test_mlp=TEST.format(imports=imports, expr=expr))
    pytester.makefile(".yaml", accuracy_mlp=SUITE.format(yaml=yaml))
    fixed = pytester.runpytest("-p", "no:cacheprovider")
    fixed.assert_outcomes(passed=2)


def test_out_of_budget_it_names_the_plugins_option_and_pasting_it_continues(pytester, models_dir):
    _failing(pytester)
    options = ["--accuracy-diagnose-budget=1"]
    seen = []
    for _ in range(6):
        run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose", *options)
        run.assert_outcomes(failed=1)
        text = run.stdout.str()
        assert "--budget" not in text.replace("--accuracy-diagnose-budget", "")
        rerun = re.search(r"; rerun with (--accuracy-diagnose-budget=\d+) to continue from the "
                          r"cache", text)
        if rerun is None:
            break
        seen.append(rerun.group(1))
        options = [rerun.group(1)]  # pasted as printed
        # the files it wrote say the same
        diagnosis = next((pytester.path / ".ascend-accuracy" / "diagnoses").rglob("diagnosis.txt"))
        assert f"the budget ran out: rerun with {rerun.group(1)}" in diagnosis.read_text()
    assert seen[0] == "--accuracy-diagnose-budget=2"
    assert FIX.search(text) is not None, text  # continued from the cache to the fix

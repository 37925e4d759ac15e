"""The overflow model's advice followed verbatim, step after step, as a user pastes it.

Its failure at norm (cosine 0.396693, L2 norm 0.3998x) offered "threshold=0.396693 with
scale_tolerance=2.51"; pasted, norm passed and fc2 failed, and the new hint said "no float16
overflow seen" (norm's 1e9 variance was no longer looked at: only ignored ops upstream were),
offering fusion and buffer modes that change nothing, while --accuracy-diagnose named
keep_dtype(['norm']). The hint after the paste names norm, and that, pasted, passes.
"""
import re

from test_hints_contract import parse_hint

TEST = '''
from pytest_ascend_accuracy import accuracy, {imports}
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy({marker})
def test_model(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/overflow.onnx")
    actual = ascend_model("models/overflow.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/overflow.onnx", inputs))
'''


def _run(pytester, marker, imports="accuracy", name="test_model"):
    pytester.makepyfile(**{name: TEST.format(marker=marker, imports=imports)})
    return pytester.runpytest("-p", "no:cacheprovider", f"{name}.py")


def test_the_scale_guard_advice_then_the_keep_dtype_advice_pasted_pass(pytester, models_dir):
    first = _run(pytester, "threshold=0.95")
    first.assert_outcomes(failed=1)
    line = next(x for x in first.outlines if x.strip().startswith("cosine "))
    pasted = re.search(r"(threshold=[0-9.]+) with (scale_tolerance=[0-9.]+) \(or None\)", line)
    assert pasted, line

    marker = f"{pasted[1]}, {pasted[2]}"  # the printed line, pasted into the marker
    second = _run(pytester, marker)
    second.assert_outcomes(failed=1)
    text = second.stdout.str()
    second.stdout.fnmatch_lines(["*first failure in graph order: fc2/MatMul (#4)*"])
    assert "no float16 overflow seen" not in text
    second.stdout.fnmatch_lines([
        "next step: golden operands leave the float16 range (norm input:4 reaches |1e+09|; norm "
        "meets the loosened threshold (the default check fails it) but feeds the failing ops)*"])
    exprs, _, imports = parse_hint(text)
    assert exprs == ["keep_dtype(['norm'])", "HIGH_PRECISION"]

    for k, expr in enumerate(exprs):  # each printed mode, pasted: the test passes
        _run(pytester, f"{marker}, modes=[{expr}]", f"accuracy, {imports}",
             f"test_pasted_{k}").assert_outcomes(passed=1)

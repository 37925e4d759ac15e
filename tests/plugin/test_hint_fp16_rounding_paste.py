"""The hint of a check failing by plain float16 rounding (a Cube op computing in float16, no value
out of float16's range, a tight threshold) offered only modes=[FUSION_OFF] / modes=[BUFFER_OFF],
which pasted both still failed (a PP-OCRv4 trial at threshold=0.9999). It says what to run where
neither passes, ``--accuracy-diagnose``; followed as printed, its fix pasted passes."""
import re


TEST = '''
from pytest_ascend_accuracy import accuracy{imports}
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.9999999{modes})
def test_mlp(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/passing_mlp.onnx")
    actual = ascend_model("models/passing_mlp.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/passing_mlp.onnx", inputs))
'''

FIX = re.compile(r"^  fix: modes=\[(.+)\]  \(YAML: modes: \[.+\]; from pytest_ascend_accuracy "
                 r"import (.+)\)$", re.M)


def test_the_rounding_hint_names_the_flow_whose_fix_passes_pasted(pytester, models_dir):
    pytester.makepyfile(test_mlp=TEST.format(imports="", modes=""))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    step = re.search(r"^next step: (.+):$", text, re.M).group(1)
    # on the emulator buffer reuse off is not offered: it repeats the verdict there
    # (tests/plugin/test_hint_emulator_buffer_probe.py)
    assert step.startswith("no float16 overflow seen; compare with this mode to see whether a "
                           "fusion pass causes the first failure (buffer reuse off is not "
                           "offered: "), step
    assert "  modes=[FUSION_OFF]" in text and "  or modes=[BUFFER_OFF]" not in text
    # what it says to run where the mode does not pass, as printed
    option = re.search(r"where it does not pass .*?run with (--[a-z-]+)", step).group(1)
    diagnosed = pytester.runpytest("-p", "no:cacheprovider", option)
    diagnosed.assert_outcomes(failed=1)
    expr, imports = FIX.search(diagnosed.stdout.str()).groups()
    assert "keep_dtype([" in expr and "'fc1/MatMul'" in expr
    pytester.makepyfile(test_mlp=TEST.format(imports=f", {imports}", modes=f", modes=[{expr}]"))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

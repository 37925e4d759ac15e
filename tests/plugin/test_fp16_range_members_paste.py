"""A fused MatMul+Add whose MatMul weight passes 65504: the hint, pasted, passes.

The row is matched to the Add's golden tensor and only the Add's operands were looked at: the
hint offered high precision (the Inf "though the golden values stay within float16"), which
still feeds the MatMul float16 and failed pasted. Every member's operands are looked at now.
"""
import onnx

from pytest_ascend_accuracy.testing.models import fused_matmul_add

from test_hints_contract import parse_hint

TEST = '''
from pytest_ascend_accuracy import accuracy, {imports}
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy({marker})
def test_model(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/fused.onnx")
    actual = ascend_model("models/fused.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/fused.onnx", inputs))
'''


def _model(directory):
    """x * 1e-4 @ W (a column of 1e5) + b: the golden stays small, the float16 weight is inf."""
    onnx.save(fused_matmul_add(), str(directory / "fused.onnx"))


def test_a_fused_members_weight_past_65504_gets_a_keep_dtype_that_passes_pasted(pytester):
    _model(pytester.mkdir("models"))
    pytester.makepyfile(test_model=TEST.format(marker="threshold=0.95", imports="accuracy"))
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*original ops   fc/MatMul, fc/Add",
                                 "next step: golden operands leave the float16 range (fc/MatMul "
                                 "input:1 reaches |1e+05|)*"])
    exprs, _, imports = parse_hint(failed.stdout.str())
    assert exprs == ["keep_dtype(['fc/MatMul', 'fc/Add'])"]  # no high precision: a Cube op
    pytester.makepyfile(test_model=TEST.format(marker=f"threshold=0.95, modes=[{exprs[0]}]",
                                               imports=imports))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

"""The first failing op's "threshold that would pass" is that op's; where other tensors fail
lower, the block gives the check's figure too, and that one, pasted, passes (audit 33: PP-OCRv6
rec at 0.99999 offered 0.999989, which failed again at the next op, 0.9999888)."""
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

pytest.importorskip("onnxruntime")

TEST = """
from pytest_ascend_accuracy import accuracy

@accuracy(threshold={threshold})
def test_cancel(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("cancel.onnx", seed=0)
    check_accuracy(ascend_model("cancel.onnx").run(inputs), golden_dump("cancel.onnx", inputs))
"""


def cancel_model(path):
    """y = (x * 1.01 - x) * 1000: the first op rounds a little, the difference much more."""
    inits = [numpy_helper.from_array(np.array(1.01, np.float32), "a"),
             numpy_helper.from_array(np.array(1000.0, np.float32), "k")]
    nodes = [helper.make_node("Mul", ["x", "a"], ["y1"], name="scale"),
             helper.make_node("Sub", ["y1", "x"], ["y2"], name="diff"),
             helper.make_node("Mul", ["y2", "k"], ["y"], name="gain")]
    graph = helper.make_graph(nodes, "cancel", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def test_the_checks_figure_pasted_passes_where_the_ops_fails(pytester):
    cancel_model(pytester.path / "cancel.onnx")
    pytester.makepyfile(test_cancel=TEST.format(threshold="0.99999999"))
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    found = re.search(r"\(threshold that would pass this op: ([\d.]+); the check: ([\d.]+)\)",
                      result.stdout.str())
    assert found, result.stdout.str()
    op, check = found.groups()
    assert float(check) < float(op)  # a later op fails lower than the first
    pytester.makepyfile(test_cancel=TEST.format(threshold=op))
    pytester.runpytest("-p", "no:randomly").assert_outcomes(failed=1)  # as audit 33 saw
    pytester.makepyfile(test_cancel=TEST.format(threshold=check))
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=1)

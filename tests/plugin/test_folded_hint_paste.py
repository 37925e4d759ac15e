"""The failure block's keep_dtype fix names no op folded at conversion (a review): for an
operand a folded op produces (tiny = c1 * c2 = 1e-30, underflowing float16) it named that op,
which ATC computes at conversion; pasted, the fix was refused ("names only ops folded at
conversion") where at 31d3c28 it passed. It names the ops that run, and pasted, passes."""
import re

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

TEST = """
from pytest_ascend_accuracy import accuracy, keep_dtype


@accuracy(threshold=0.99{modes})
def test_under(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("under.onnx", seed=0)
    check_accuracy(ascend_model("under.onnx").run(inputs), golden_dump("under.onnx", inputs))
"""


def test_the_printed_keep_dtype_fix_names_no_folded_op_and_passes_pasted(pytester):
    g = h.make_graph([h.make_node("Mul", ["c1", "c2"], ["tiny"], name="tiny_const"),
                      h.make_node("Mul", ["x", "tiny"], ["y"], name="scale_down"),
                      h.make_node("Mul", ["y", "big"], ["z"], name="scale_up")],
                     "under", [h.make_tensor_value_info("x", T.FLOAT, [1, 16])],
                     [h.make_tensor_value_info("z", T.FLOAT, [1, 16])],
                     [nh.from_array(np.array(1e-15, np.float32), "c1"),
                      nh.from_array(np.array(1e-15, np.float32), "c2"),
                      nh.from_array(np.array(1e30, np.float32), "big")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(pytester.path / "under.onnx"))
    pytester.makepyfile(test_under=TEST.format(modes=""))
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    fix = re.search(r"^\s*(modes=\[keep_dtype\(\[[^\]]*\]\)\])$", failed.stdout.str(), re.M)
    assert fix and "tiny_const" not in fix.group(1), failed.stdout.str()
    pytester.makepyfile(test_under=TEST.format(modes=", " + fix.group(1)))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

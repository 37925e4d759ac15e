"""A one-element tensor whose value float16 rounding moves by two thirds fails a cosine
threshold (its cosine tells only its sign, and the 2x scale guard let it through: silero-vad's
speech probability 1.8x off passed threshold=0.99, H110); the --accuracy-diagnose fix, pasted,
passes it, and so do the per-op thresholds the failure names, one for each op failing by the
same error (pasted at once)."""
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy, keep_dtype


@accuracy(threshold=0.99{EXTRA})
def test_offset(ascend_model, golden_dump, check_accuracy):
    inputs = {{"x": np.float32([1000.3])}}
    golden = golden_dump("models/offset.onnx", inputs)
    check_accuracy(ascend_model("models/offset.onnx").run(inputs), golden)
'''


def offset_model(path):
    """y = (x - 1000) * 2 on one element: 1000.3 is 1000.5 in float16, so x - 1000 is 0.5
    against 0.3."""
    graph = helper.make_graph(
        [helper.make_node("Sub", ["x", "c"], ["d"], name="offset"),
         helper.make_node("Mul", ["d", "k"], ["y"], name="gain")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.float32([1000.0]), "c"),
         numpy_helper.from_array(np.float32([2.0]), "k")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                ir_version=8), str(path))


def test_a_one_element_tensor_off_by_two_thirds_fails_and_the_printed_fixes_pass(pytester):
    offset_model(pytester.mkdir("models") / "offset.onnx")
    pytester.makepyfile(test_offset=TEST.format(EXTRA=""))
    failed = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-diagnose")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines([
        "accuracy FAILED: 2 of 2 tensors fail cosine >= 0.99 (a one-element tensor: the relative "
        "error it allows); first failure in graph order: offset (#0)",
        "  why * one element: cosine tells only its sign; its relative error 0.6667 is over the "
        "0.1425 that cosine >= 0.99 allows *; a cosine threshold of 0.832024 for this op and "
        "gain, which fails by the same relative error, passes them: per_op={\"offset\": "
        "0.832024, \"gain\": 0.832024} in a test (YAML: per_op: {offset: 0.832024, gain: "
        "0.832024}), --per-op offset=0.832024 --per-op gain=0.832024 on the command line"])
    fix = re.search(r"  fix: modes=(\[keep_dtype\(\['offset'\]\)\])", failed.stdout.str()).group(1)

    pytester.makepyfile(test_offset=TEST.format(EXTRA=f", modes={fix}"))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    # the printed per_op entries, pasted: offset and gain (the same error) pass at once (gain
    # named its own entry once offset's was pasted, a second paste)
    per_op = re.search(r"passes them: (per_op=\{.*?\}) in a test", failed.stdout.str()).group(1)
    pytester.makepyfile(test_offset=TEST.format(EXTRA=f", {per_op}"))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

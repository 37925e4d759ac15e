"""A model's one-value output that fails is said to fail, and one paste of the one-element fix
passes every one-element op that fails (audit 35, section 6: Smart Turn's end-of-turn
probability, 0.114 against 0.221, failed by the one-element rule with no "model outputs:" line;
the fix named one of its three failing one-element ops, and pasted, the next run offered the
next)."""
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy

# 1000.3 is 1000.5 in float16: the last sample's logit is 0.5 against 0.3
X = np.array({rows}, np.float32)


@accuracy(threshold=0.95{extra})
def test_prob(ascend_model, golden_dump, check_accuracy):
    inputs = {{"x": X}}
    check_accuracy(ascend_model("prob.onnx").run(inputs), golden_dump("prob.onnx", inputs))
'''
ALONE = "[[1000.3, -1000.0]]"


def prob_model(path):
    """y = sigmoid(-10 * (x @ [1, 1])), one value per sample: float16's rounding of 1000.3
    moves the logit 0.3 to 0.5, the gain's -3 to -5 (MatMul and Mul fused, dumped as gain's),
    the probability 0.047 to 0.0067: two one-element ops fail, by different errors."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["l"], name="logit"),
         helper.make_node("Mul", ["l", "k"], ["g"], name="gain"),
         helper.make_node("Sigmoid", ["g"], ["y"], name="prob")], "prob",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 1])],
        [numpy_helper.from_array(np.ones((2, 1), np.float32), "w"),
         numpy_helper.from_array(np.float32(-10.0), "k")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                ir_version=8), str(path))


FIX = re.compile(r"(per_op=\{[^}]*\}) in a test \(YAML")


def test_a_failing_output_is_named_and_one_paste_passes_every_one_element_op(pytester):
    prob_model(pytester.path / "prob.onnx")
    pytester.makepyfile(test_prob=TEST.format(rows=ALONE, extra=""))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    run.stdout.fnmatch_lines(["model outputs: prob (output y: one element 0.04743 -> 0.006695, "
                              "relative error 0.859) FAILS"])
    fixes = set(FIX.findall(text))
    assert fixes, text
    for fix in fixes:  # every failing op's fix carries the three entries
        assert set(re.findall(r'"(\w+)": ', fix)) == {"gain", "prob"}, fix
    assert ("with the other one-element op that fails at its own (prob 0.758615), one paste "
            "passes all 2") in text, text
    pytester.makepyfile(test_prob=TEST.format(rows=ALONE, extra=", " + sorted(fixes)[0]))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

"""A failing op the test's mode keeps in float32 already says so: its error came in with the
float16 values before it (audit 33: a pasted 231-op list failed at a Sigmoid it kept, and the
next hint read as for any failure)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

pytest.importorskip("onnxruntime")


def test_the_hint_says_the_failing_op_runs_in_float32_already(pytester):
    inits = [numpy_helper.from_array(np.array(1.01, np.float32), "a")]
    nodes = [helper.make_node("Mul", ["x", "a"], ["y1"], name="scale"),
             helper.make_node("Sub", ["y1", "x"], ["y"], name="diff")]
    graph = helper.make_graph(nodes, "cancel", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              str(pytester.path / "cancel.onnx"))
    pytester.makepyfile("""
        from pytest_ascend_accuracy import accuracy, keep_dtype

        @accuracy(threshold=0.9999999, modes=[keep_dtype(["diff"])])
        def test_cancel(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("cancel.onnx", seed=0)
            check_accuracy(ascend_model("cancel.onnx").run(inputs),
                           golden_dump("cancel.onnx", inputs))
    """)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    assert ("; diff runs in float32 in this mode already (its keep_dtype names it): its error "
            "comes in with the float16 values computed before it, which --accuracy-diagnose "
            "searches") in result.stdout.str()

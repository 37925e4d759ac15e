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


def test_a_kept_cube_op_on_a_float16_only_soc_is_not_said_to_run_in_float32(pytester):
    """Review RS: on --soc-version=Ascend310P3 a kept Conv outputs float32 but computes from
    float16 inputs; the hint said it "runs in float32 in this mode already" and blamed only the
    values computed before it (it reads the graph input directly)."""
    rng = np.random.default_rng(0)
    w = rng.normal(size=(4, 2, 3)).astype(np.float32)
    w -= w.mean(axis=(1, 2), keepdims=True)  # taps summing to 0: its inputs' rounding shows
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")], "dc",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 30])],
                              [numpy_helper.from_array(w, "w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              str(pytester.path / "dc.onnx"))
    np.save(pytester.path / "x.npy", rng.normal(size=(1, 2, 32)).astype(np.float32) + 100)
    pytester.makepyfile("""
        import numpy as np
        from pytest_ascend_accuracy import accuracy, keep_dtype

        @accuracy(threshold=0.9999, modes=[keep_dtype(["conv"])])
        def test_dc(ascend_model, golden_dump, check_accuracy):
            inputs = {"x": np.load("x.npy")}
            check_accuracy(ascend_model("dc.onnx").run(inputs), golden_dump("dc.onnx", inputs))
    """)
    result = pytester.runpytest("-p", "no:randomly", "--soc-version=Ascend310P3")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "conv runs in float32 in this mode already" not in out
    assert ("; conv, a Cube op, outputs float32 in this mode already (its keep_dtype names it), "
            "but computes from float16 inputs on a chip without float32 Cube kernels") in out, out

"""A failure's keep_dtype hint that keeps every op the run names, or nearly, says so, as a
diagnosis's fix does (audit 33: PP-OCRv6 rec fed 0..255 pixels got a 231-op list, most of the
model, printed as any fix)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

pytest.importorskip("onnxruntime")


def chain(path, ops: int = 5):
    """x * 1e5, then doubled ``ops - 1`` times: every op's golden output passes 65504."""
    inits = [numpy_helper.from_array(np.array(1e5, np.float32), "big"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two")]
    nodes = [helper.make_node("Mul", ["x", "big"], ["y0"], name="m0")]
    nodes += [helper.make_node("Mul", [f"y{k - 1}", "two"], [f"y{k}"], name=f"m{k}")
              for k in range(1, ops)]
    graph = helper.make_graph(nodes, "chain", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info(f"y{ops - 1}", TensorProto.FLOAT, [1, 8])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def test_a_hint_keeping_every_op_says_it_is_the_whole_model(pytester):
    chain(pytester.path / "chain.onnx")
    pytester.makepyfile("""
        def test_chain(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("chain.onnx", seed=0)
            check_accuracy(ascend_model("chain.onnx").run(inputs),
                           golden_dump("chain.onnx", inputs))
    """)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    step = next(line for line in result.stdout.lines if line.startswith("next step: "))
    assert step.endswith("keep these ops in float32, or convert in high precision (5 of the 5 "
                         "ops the run names: the whole model in float32; --accuracy-diagnose "
                         "searches for a smaller set):"), step


def test_a_short_list_says_nothing_of_it(pytester):
    chain(pytester.path / "chain.onnx", ops=1)
    pytester.makepyfile("""
        def test_chain(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("chain.onnx", seed=0)
            check_accuracy(ascend_model("chain.onnx").run(inputs),
                           golden_dump("chain.onnx", inputs))
    """)
    result = pytester.runpytest("-p", "no:randomly")
    assert "the whole model" not in result.stdout.str()


def test_the_note_counts_the_list_it_prints_with_the_tests_own(pytester):
    """A review: under @accuracy(modes=[keep_dtype(m0..m6)]) the hint printed all 10 ops and
    no note, as only the 3 ops it added were counted."""
    chain(pytester.path / "chain.onnx", ops=10)
    pytester.makepyfile("""
        from pytest_ascend_accuracy import accuracy, keep_dtype

        @accuracy(modes=[keep_dtype([f"m{k}" for k in range(7)])])
        def test_chain(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("chain.onnx", seed=0)
            check_accuracy(ascend_model("chain.onnx").run(inputs),
                           golden_dump("chain.onnx", inputs))
    """)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    assert "(10 of the 10 ops the run names: the whole model in float32" in result.stdout.str()

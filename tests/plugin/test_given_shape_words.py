"""``ascend_model(m, input_shape={'x': [2, 4]})`` run with a batch of 3 (trial t53): the
refusal said "the model declares [2, 4]" where the model declares [N, 4]; the [2, 4] came
from input_shape=. Now it says so, and its way out (no input_shape=) runs pasted."""
import onnx
import pytest

from pytest_ascend_accuracy.testing import models as tiny_models

pytest.importorskip("onnxruntime")

MODEL = "models/dyn.onnx"  # unnamed_model: x is [N, 4]
BODY = """
    import numpy as np
    from pytest_ascend_accuracy import accuracy

    @accuracy(threshold=0.95)
    def test_batch(ascend_model, golden_dump, check_accuracy):
        om = ascend_model("{model}"{shape})
        inputs = {{"x": np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)}}
        check_accuracy(om.run(inputs), golden_dump("{model}", inputs))
"""


def test_the_fixed_shape_is_said_to_come_from_input_shape(pytester):
    onnx.save(tiny_models.unnamed_model(), str(pytester.mkdir("models") / "dyn.onnx"))
    pytester.makepyfile(test_batch=BODY.format(model=MODEL, shape=", input_shape={'x': [2, 4]}"))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    assert "the model declares [2, 4]" not in text
    assert ("inputs of 'dyn': input 'x' has shape [3, 4], ascend_model(..., input_shape=...) "
            "converted it at [2, 4] (the model declares [N, 4]): give run() inputs of that shape, "
            "or drop input_shape= from the ascend_model(...) call") in text
    pytester.makepyfile(test_batch=BODY.format(model=MODEL, shape=""))  # the advice applied
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_shape_the_model_itself_declares_keeps_its_words(pytester):
    """input_shape= equal to a static model's own shape: "the model declares" is true."""
    onnx.save(tiny_models.passing_mlp(), str(pytester.mkdir("models") / "mlp.onnx"))
    pytester.makepyfile(test_mlp="""
        import numpy as np
        import onnx

        def test_mlp(ascend_model):
            m = onnx.load("models/mlp.onnx")
            vi = m.graph.input[0]
            dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
            om = ascend_model("models/mlp.onnx", input_shape={vi.name: dims})
            om.run({vi.name: np.zeros([d + 1 for d in dims], np.float32)})
    """)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    assert "the model declares [" in run.stdout.str()
    assert "converted it at" not in run.stdout.str()

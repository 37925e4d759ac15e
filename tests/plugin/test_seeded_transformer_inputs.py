"""A transformer's seeded inputs (``accuracy_inputs(model, seed=0, input_shape=...)``), as a
user trial of a BERT-like encoder met them: token types drawn from [0, 10) into a 2-row table
made onnxruntime refuse the run (no check verdict), and a mask drawn from [0, 10) made the
export's ``(1 - mask) * -10000`` reach 80000, past float16's 65504, so a model that passes on
every 0/1 mask failed at the mask's Mul. The same test on the same model passes now."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

TEST = '''
from pytest_ascend_accuracy import accuracy

SHAPE = {"input_ids": (2, 8), "attention_mask": (2, 8), "token_type_ids": (2, 8)}


@accuracy(threshold=0.99)
def test_encoder(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("encoder.onnx", seed=0, input_shape=SHAPE)
    check_accuracy(ascend_model("encoder.onnx").run(inputs), golden_dump("encoder.onnx", inputs))
'''


def _encoder(path, types):
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((30, 8)).astype(np.float32), "words"),
             numpy_helper.from_array(rng.standard_normal((types, 8)).astype(np.float32), "types"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(-10000.0, np.float32), "neg"),
             numpy_helper.from_array(np.array([1], np.int64), "axis1")]
    n = helper.make_node
    nodes = [n("Gather", ["words", "input_ids"], ["w"], name="word_embeddings/Gather"),
             n("Gather", ["types", "token_type_ids"], ["t"], name="token_type_embeddings/Gather"),
             n("Add", ["w", "t"], ["e"], name="embeddings/Add"),
             n("Transpose", ["e"], ["et"], name="k/Transpose", perm=[0, 2, 1]),
             n("MatMul", ["e", "et"], ["s"], name="self/MatMul"),
             n("Unsqueeze", ["attention_mask", "axis1"], ["mu"], name="mask/Unsqueeze"),
             n("Cast", ["mu"], ["mf"], name="mask/Cast", to=TensorProto.FLOAT),
             n("Sub", ["one", "mf"], ["inv"], name="mask/Sub"),
             n("Mul", ["inv", "neg"], ["ext"], name="mask/Mul"),
             n("Add", ["s", "ext"], ["sm"], name="self/Add"),
             n("Softmax", ["sm"], ["p"], name="self/Softmax", axis=-1),
             n("MatMul", ["p", "e"], ["y"], name="self/MatMul_1")]
    ins = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"])
           for name in ("input_ids", "attention_mask", "token_type_ids")]
    graph = helper.make_graph(nodes, "encoder", ins,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


@pytest.mark.parametrize("types", [2, 10])  # 10: the mask alone (it failed at mask/Mul)
def test_a_seeded_encoder_with_a_minus_10000_mask_passes(pytester, types):
    _encoder(pytester.path / "encoder.onnx", types)
    pytester.makepyfile(test_encoder=TEST)
    run = pytester.runpytest("-p", "no:cacheprovider")
    text = run.stdout.str()
    assert "out of data bounds" not in text
    assert "mask/Mul" not in text
    run.assert_outcomes(passed=1)
    run.stdout.fnmatch_lines(["1 accuracy check: 1 passed, 0 failed*"])

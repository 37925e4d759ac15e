"""A test whose golden has a path (``golden_dump(..., path=)``) of a model with an omitted
optional output (LSTM's outputs ``["", "Y_h"]``) passes as the same test without a path does:
the stored golden numbered ``Y_h`` output 0, and every later session failed "golden op 'lstm'
has no output 1", with advice to make both dumps from the same model (H111)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.99)
def test_lstm(ascend_model, golden_dump, check_accuracy):
    inputs = {"X": np.load("models/X.npy")}
    golden = golden_dump("models/lstm.onnx", inputs, path="golden/lstm")
    check_accuracy(ascend_model("models/lstm.onnx").run(inputs), golden)
'''


def test_a_stored_golden_of_an_lstm_without_its_first_output_passes(pytester):
    rng = np.random.default_rng(0)
    models = pytester.mkdir("models")
    graph = helper.make_graph(
        [helper.make_node("LSTM", ["X", "W", "R"], ["", "Y_h"], name="lstm", hidden_size=2),
         helper.make_node("Relu", ["Y_h"], ["o"], name="relu")], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [5, 1, 3])],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, [1, 1, 2])],
        [numpy_helper.from_array(rng.standard_normal((1, 8, 3)).astype(np.float32), "W"),
         numpy_helper.from_array(rng.standard_normal((1, 8, 2)).astype(np.float32), "R")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]),
              str(models / "lstm.onnx"))
    np.save(models / "X.npy", rng.standard_normal((5, 1, 3)).astype(np.float32))
    pytester.makepyfile(test_lstm=TEST)

    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)  # written, missing
    stored = [p.name for p in (pytester.path / "golden" / "lstm").iterdir()]
    assert [n for n in stored if n.startswith("lstm.")] == [n for n in stored
                                                            if n.startswith("lstm.1.")] != []
    again = pytester.runpytest("-p", "no:cacheprovider")
    again.assert_outcomes(passed=1)
    assert "has no output 1" not in again.stdout.str()

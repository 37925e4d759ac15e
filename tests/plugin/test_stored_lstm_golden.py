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


def test_a_golden_stored_with_the_old_numbering_is_refused_and_the_printed_fix_passes(pytester):
    """A golden stored before format 8 numbered Y_h output 0: refused naming the op and
    --accuracy-regen, not compared with "golden op 'lstm' has no output 1" and advice to make
    both dumps from the same model (H113); the option pasted rewrites it, then the test
    passes."""
    import json
    import re

    test_a_stored_golden_of_an_lstm_without_its_first_output_passes(pytester)
    golden = pytester.path / "golden" / "lstm"
    new = next(p.name for p in golden.iterdir() if p.name.startswith("lstm.1."))
    old = new.replace("lstm.1.", "lstm.0.")
    (golden / new).rename(golden / old)  # as the version before format 8 wrote it
    record = json.loads((golden / "golden.json").read_text())
    record["golden_format"] = 7
    for key in ("tensors", "digests"):
        record[key] = {old if k == new else k: v for k, v in record[key].items()}
    (golden / "golden.json").write_text(json.dumps(record))

    refused = pytester.runpytest("-p", "no:cacheprovider")
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines([
        "*golden/lstm: this stored golden was written in golden format 7 (its golden.json), "
        "before golden format 8, which numbers an op's outputs by their slots*It numbers the "
        "outputs of 'lstm' after an omitted one down*",
        "Fix: run the test again with --accuracy-regen to rewrite it in golden format 8*"])
    assert "has no output 1" not in refused.stdout.str()
    option = re.search(r"Fix: run the test again with (\S+) ", refused.stdout.str()).group(1)
    pytester.runpytest("-p", "no:cacheprovider", option).assert_outcomes(failed=1)  # rewrote
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

"""An empty input (the ONNX node test ``test_reduce_sum_empty_set``: input ``data`` declared
[2, 0, 4]) fed to ``ascend_model(m).run(inputs)`` with no ``input_shape``: the refusal read
"input_shape: shape of input 'data' must be positive ints, got [2, 0, 4]", a setting the test
never gave, naming no model. The conversion took [2, 0, 4] from the array run() was given (the
model's declared 0 reads as a size left open): the refusal says so, names the model file, and
keeps its advice. The check is the graph layer's (``graph.per_shape``), so a dataset check says
it of the sample, in a test and in ``ascend-accuracy dataset`` alike (which still said the old
words: the check was the plugin's)."""
import onnx
import pytest
from onnx import TensorProto, helper

pytest.importorskip("onnxruntime")

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_empty(ascend_model, golden_dump, check_accuracy):
    inputs = {"data": np.zeros((2, 0, 4), np.float32)}
    golden = golden_dump("models/empty_set.onnx", inputs)
    check_accuracy(ascend_model("models/empty_set.onnx").run(inputs), golden)
'''


def _empty_set_model():
    """``data`` [2, 0, 4] -> Relu -> ``out`` [2, 0, 4], as the node test declares it."""
    node = helper.make_node("Relu", ["data"], ["out"], name="relu")
    graph = helper.make_graph([node], "empty_set",
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, [2, 0, 4])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 0, 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_an_empty_input_is_refused_naming_the_array_and_the_model_file(pytester):
    assert _empty_set_model().graph.input[0].type.tensor_type.shape.dim[1].dim_value == 0
    onnx.save(_empty_set_model(), str(pytester.mkdir("models") / "empty_set.onnx"))
    pytester.makepyfile(test_empty=TEST)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    out = run.stdout.str()
    assert "input_shape: shape of input 'data'" not in out  # no input_shape was given
    assert ("test_empty.py::test_empty: ascend_model: run: input 'data' of "
            "models/empty_set.onnx is empty: the array run() was given for it has shape "
            "[2, 0, 4] (the model file declares [2, 0, 4]), and the conversion takes that "
            "shape; ATC refuses a size below 1 for an input it converts static (E10011), so an "
            "empty input cannot be fed to a converted model; make it a constant of the model "
            "(an initializer), or leave an optional input out of it") in " ".join(out.split()), out


SUITE = """
models:
  - name: empty_set
    model: models/empty_set.onnx
    inputs: {data: data/data.npy}
"""


def test_a_yaml_entry_with_an_empty_array_is_refused_naming_its_file_and_the_model(pytester):
    import numpy as np

    onnx.save(_empty_set_model(), str(pytester.mkdir("models") / "empty_set.onnx"))
    np.save(pytester.mkdir("data") / "data.npy", np.zeros((2, 0, 4), np.float32))
    pytester.makefile(".yaml", accuracy_models=SUITE)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    out = " ".join(run.stdout.str().split())
    assert "input_shape: shape of input 'data'" not in out
    assert ("input 'data' of models/empty_set.onnx is empty: the array of the entry's inputs "
            "(data/data.npy) has shape [2, 0, 4] (the model file declares [2, 0, 4]), and the "
            "conversion takes that shape; ATC refuses a size below 1") in out, out
    assert "make it a constant of the model (an initializer)" in out


#: the refusal's words after where the array came from (every path says them alike)
SAID = ("has shape [2, 0, 4] (the model file declares [2, 0, 4]), and the conversion takes that "
        "shape; ATC refuses a size below 1 for an input it converts static (E10011), so an "
        "empty input cannot be fed to a converted model; make it a constant of the model (an "
        "initializer), or leave an optional input out of it")


def test_the_dataset_command_refuses_an_empty_sample_naming_it_and_the_model_file(
        tmp_path, monkeypatch, capsys):
    import numpy as np
    from pytest_ascend_accuracy.cli.app import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    onnx.save(_empty_set_model(), str(tmp_path / "models" / "empty_set.onnx"))
    (tmp_path / "s").mkdir()
    np.savez(tmp_path / "s" / "0.npz", data=np.zeros((2, 0, 4), np.float32))
    rc = main(["dataset", "models/empty_set.onnx", "s", "--metric", "agreement",
               "--max-drop", "0.9", "--cache-dir", "c"])
    err = " ".join(capsys.readouterr().err.split())
    assert rc == 2, err
    assert "input_shape: shape of input 'data'" not in err
    assert ("error: sample '0': input 'data' of models/empty_set.onnx is empty: the sample's "
            f"array {SAID}") in err, err


DATASET_TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_samples(ascend_model, check_dataset):
    samples = [{"data": np.zeros((2, 0, 4), np.float32)} for _ in range(2)]
    check_dataset(ascend_model("models/empty_set.onnx"), samples, metric="agreement",
                  max_drop=0.9)
'''


def test_check_dataset_refuses_an_empty_sample_as_the_sample_s_not_run_s(pytester):
    """check_dataset runs the samples: "the array run() was given" named a call the test never
    made."""
    onnx.save(_empty_set_model(), str(pytester.mkdir("models") / "empty_set.onnx"))
    pytester.makepyfile(test_samples=DATASET_TEST)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    out = " ".join(run.stdout.str().split())
    assert "run() was given" not in out
    assert ("sample '0': input 'data' of models/empty_set.onnx is empty: the sample's array "
            f"{SAID}") in out, out

"""The dynamic-shape advice's example runs pasted (H114): 1 for each dynamic dimension failed in
real models (silero_vad's reflect Pad: 'Pad reflect requires axis length >= 2'; nudenet 320n's
Concat of a branch halved and doubled again: 'Axis 2 has mismatched dimensions of 1 and 2').
The example is run in onnxruntime on seeded inputs when the advice is shown, a common size
that runs is offered where 1 does not, and where none runs no value is."""
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper as h

from pytest_ascend_accuracy.graph import shape_trial
from pytest_ascend_accuracy.graph.onnx_graph import load_model, make_inputs, resolve_input_shapes
from pytest_ascend_accuracy.graph.shape_advice import DynamicShapeError

ort = pytest.importorskip("onnxruntime")


def _opset(graph):
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])


def reflect_pad():
    """silero_vad's STFT front end: a reflect Pad of the samples axis, [batch, N]."""
    pads = h.make_tensor("pads", TensorProto.INT64, [4], [0, 2, 0, 2])
    g = h.make_graph([h.make_node("Pad", ["x", "pads"], ["p"], name="pad", mode="reflect"),
                      h.make_node("Relu", ["p"], ["y"], name="relu")], "reflect",
                     [h.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "N"])],
                     [h.make_tensor_value_info("y", TensorProto.FLOAT, None)], [pads])
    return _opset(g)


def two_branches():
    """nudenet 320n's neck: a branch strided by 2 and resized back, concatenated with the
    input: the height and width must be even (at 1 the branch is 2 high)."""
    scales = h.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1, 2, 2])
    g = h.make_graph([
        h.make_node("MaxPool", ["x"], ["down"], name="down", kernel_shape=[1, 1], strides=[2, 2]),
        h.make_node("Resize", ["down", "", "scales"], ["up"], name="up", mode="nearest"),
        h.make_node("Concat", ["x", "up"], ["y"], name="cat", axis=1)], "branches",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 2, "height", "width"])],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, None)], [scales])
    return _opset(g)


def twelve_only():
    """A Reshape to 3 x 4: no size but 12 runs, and 12 is not one the advice tries."""
    shape = h.make_tensor("shape", TensorProto.INT64, [2], [3, 4])
    g = h.make_graph([h.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")], "twelve",
                     [h.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
                     [h.make_tensor_value_info("y", TensorProto.FLOAT, None)], [shape])
    return _opset(g)


def _refused(model, **kw) -> DynamicShapeError:
    with pytest.raises(DynamicShapeError) as info:
        make_inputs(model, **kw)
    return info.value


def _pasted_python(text: str) -> dict:
    found = re.search(r"input_shape=\{.*\}$", text)
    assert found, text
    scope: dict = {}
    exec(found.group(0), scope)  # the advice is Python, pasted as it is printed
    return scope["input_shape"]


def _runs(model, input_shape) -> None:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    session.run(None, make_inputs(model, input_shape=input_shape))


BATCH_1_AND_32 = ("1 for the batch (each dynamic dimension 0) and 32 for each other dynamic "
                  "dimension")


@pytest.mark.parametrize("build, node, failed, old, shape", [
    (reflect_pad, "Pad 'pad'", "Pad reflect requires axis length >= 2", (1, 1), (1, 32)),
    (two_branches, "Concat 'cat'", "Axis 2 has mismatched dimensions of 2 and 1",
     (1, 2, 1, 1), (1, 2, 32, 32)),
])
def test_where_1_fails_the_first_common_size_that_runs_is_offered(build, node, failed, old,
                                                                  shape):
    model = build()
    with pytest.raises(Exception, match=failed):  # the old advice, pasted: it fails
        _runs(model, {"x": old})
    error = _refused(model)
    chosen, shape = BATCH_1_AND_32, {"x": shape}
    text = str(error)
    assert f"e.g. with {chosen}, sizes that ran in onnxruntime on seeded inputs where 1 " \
           f"failed ({node}: " in text
    assert failed in text.split("where 1 failed (")[1]
    assert _pasted_python(text) == shape == error.pasted
    _runs(model, shape)
    # the three spellings give the same sizes
    dims = ",".join(map(str, shape["x"]))
    assert error.cli_text.endswith(f"--input-shape 'x:{dims}'")
    listed = ", ".join(map(str, shape["x"]))
    assert error.yaml_text().endswith(f"add to the entry: input_shape: {{x: [{listed}]}}")
    assert error.example == {"x": old}  # the example as made, for callers reading it


def test_where_the_batch_must_take_the_size_too_every_dimension_gets_it():
    """silero_vad's state [2, batch, 128] holds the batch of its input [batch, N] in dimension 1
    (both unnamed): it runs where each dynamic dimension is 128, not with the input's batch 1."""
    pads = h.make_tensor("pads", TensorProto.INT64, [4], [0, 2, 0, 2])
    g = h.make_graph([h.make_node("Pad", ["x", "pads"], ["p"], name="pad", mode="reflect"),
                      h.make_node("ReduceSum", ["p"], ["s"], name="sum", axes=[1], keepdims=0),
                      h.make_node("Unsqueeze", ["s"], ["u"], name="u", axes=[0, 2]),
                      h.make_node("Concat", ["u", "state"], ["y"], name="cat", axis=0)], "state",
                     [h.make_tensor_value_info("x", TensorProto.FLOAT, [None, None]),
                      h.make_tensor_value_info("state", TensorProto.FLOAT, [2, None, 1])],
                     [h.make_tensor_value_info("y", TensorProto.FLOAT, None)], [pads])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 12)])
    error = _refused(model)
    assert "e.g. with 32 for each dynamic dimension, sizes that ran" in str(error)
    assert _pasted_python(str(error)) == {"x": (32, 32), "state": (2, 32, 1)}
    _runs(model, error.pasted)


def test_where_no_size_runs_no_value_is_offered():
    error = _refused(twelve_only())
    text = str(error)
    assert "e.g. with" not in text and error.pasted is None
    assert ("no example is offered: 1 for each dynamic dimension fails in onnxruntime on seeded "
            "inputs (Reshape 'reshape': ") in text
    assert ("and so does each of 32, 64, 128, 224, 256, 320, 512, 640 for each dynamic "
            "dimension") in text
    assert text.endswith("give the sizes the model is made for in place of each ?: "
                         "input_shape={'x': (?,)}")
    assert error.cli_text.endswith("in place of each ?: --input-shape 'x:?'")
    assert error.yaml_text().endswith("in place of each ?: add to the entry: input_shape: {x: [?]}")


def test_where_1_runs_the_text_is_as_it_was():
    g = h.make_graph([h.make_node("Relu", ["x"], ["y"], name="relu")], "relu",
                     [h.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                     [h.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    assert str(_refused(_opset(g))).endswith(
        "e.g. with 1 for each dynamic dimension: input_shape={'x': (1, 4)}")


def test_a_size_another_input_gives_is_kept():
    """'N' given for ``a`` is ``b``'s too; only ``b``'s other dimension takes a common size."""
    pads = h.make_tensor("pads", TensorProto.INT64, [4], [0, 2, 0, 2])
    g = h.make_graph([h.make_node("Pad", ["b", "pads"], ["p"], name="pad", mode="reflect"),
                      h.make_node("Relu", ["a"], ["ya"], name="relu")], "kept",
                     [h.make_tensor_value_info("a", TensorProto.FLOAT, ["N", 3]),
                      h.make_tensor_value_info("b", TensorProto.FLOAT, ["N", "T"])],
                     [h.make_tensor_value_info("p", TensorProto.FLOAT, None),
                      h.make_tensor_value_info("ya", TensorProto.FLOAT, None)], [pads])
    error = _refused(_opset(g), input_shape={"a": (5, 3)})
    assert ("e.g. with 'N' = 5 as given and 32 for each other dynamic dimension, sizes that "
            "ran in onnxruntime") in str(error)
    assert _pasted_python(str(error)) == {"a": (5, 3), "b": (5, 32)}


def test_the_tries_run_only_when_the_advice_is_shown(monkeypatch):
    """A caller that catches the error and goes on (an AIPP model's batch, the CLI's second
    try with the golden's sizes) runs nothing; the text, made once, runs them once."""
    calls = []
    real = shape_trial.first_that_runs
    monkeypatch.setattr("pytest_ascend_accuracy.graph.shape_advice.first_that_runs",
                        lambda *a: calls.append(a) or real(*a))
    error = _refused(reflect_pad())
    assert calls == [] and error.example == {"x": (1, 1)}
    str(error), error.cli_text, error.yaml_text(), error.problem
    assert len(calls) == 1


def test_the_tries_stay_small():
    """No try with the batch at a common size holds more than ALL_ELEMENTS input elements, and
    none at all more than BATCH_1_ELEMENTS (an image of 1 x 3 x 640 x 640 is 1.2 M)."""
    seen = []

    def run_none(example):
        seen.append(example)
        return "refused"

    example = {"images": (1, 3, 1, 1)}
    slots = [("images", 0, True), ("images", 2, False), ("images", 3, False)]
    assert shape_trial.first_that_runs(lambda: run_none, example, slots) is None  # one refusal
    assert seen[0] == example and (1, 3, 640, 640) in [e["images"] for e in seen]
    assert (32, 3, 32, 32) not in [e["images"] for e in seen]  # 98 k elements with batch 32
    assert all(int(np.prod(e["images"])) <= shape_trial.BATCH_1_ELEMENTS for e in seen)
    assert len(seen) <= 1 + 2 * len(shape_trial.SIZES)


def test_a_model_read_without_its_external_weights_is_not_run(tmp_path):
    """The weights are not at hand where a caller passes only a graph read without them: the
    advice is as it was; given the file (``make_inputs``), it is run there."""
    model = reflect_pad()
    big = np.zeros(300, np.float32)
    model.graph.initializer.append(onnx.numpy_helper.from_array(big, "unused"))
    path = tmp_path / "ext.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="ext.data", size_threshold=0)
    with pytest.raises(DynamicShapeError) as info:
        resolve_input_shapes(load_model(str(path), weights=False))
    assert str(info.value).endswith("e.g. with 1 for each dynamic dimension: "
                                    "input_shape={'x': (1, 1)}")
    assert _pasted_python(str(_refused(str(path)))) == {"x": (1, 32)}


SEEDED = """
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.99)
def test_seeded(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("m.onnx", seed=0{shape})
    check_accuracy(ascend_model("m.onnx").run(inputs), golden_dump("m.onnx", inputs))
"""


@pytest.mark.parametrize("build", [reflect_pad, two_branches])
def test_the_printed_advice_pasted_converts_and_runs(pytester, build):
    """In a test (Python keyword), in a YAML entry (its key) and on the command line."""
    onnx.save(build(), str(pytester.path / "m.onnx"))
    pytester.makepyfile(test_m=SEEDED.format(shape=""))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    assert "sizes that ran in onnxruntime on seeded inputs where 1 failed" in text
    pasted = re.search(r"input_shape=\{'x': \([0-9, ]+\)\}", text).group(0)
    pytester.makepyfile(test_m=SEEDED.format(shape=", " + pasted))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(passed=1)
    run.stdout.fnmatch_lines(["*1 accuracy check: 1 passed, 0 failed*"])

    pytester.path.joinpath("test_m.py").unlink()
    entry = "models:\n  - name: seeded\n    model: m.onnx\n    inputs: {seed: 0}\n"
    suite = pytester.path / "accuracy_m.yaml"
    suite.write_text(entry)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    key = re.search(r"input_shape: \{x: \[[0-9, ]+\]\}", run.stdout.str()).group(0)
    suite.write_text(entry + f"    {key}\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_printed_cli_advice_pasted_runs(tmp_path, capsys):
    import shlex

    from pytest_ascend_accuracy.cli import app as cli

    onnx.save(two_branches(), str(tmp_path / "m.onnx"))
    argv = ["diagnose", str(tmp_path / "m.onnx"), "--cache-dir", str(tmp_path / "c")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "sizes that ran in onnxruntime on seeded inputs where 1 failed" in err
    option = shlex.split(re.search(r"--input-shape '[^']+'$", err.rstrip()).group(0))
    assert option == ["--input-shape", "x:1,2,32,32"]
    assert cli.main(argv + option) == 0, capsys.readouterr()


def test_a_file_read_with_its_weights_as_references_gets_the_advice_run(tmp_path):
    """A file over ``wire.SCAN_ABOVE`` is read with its big weights as references into it; the
    conversion's advice and a deferred ``ascend_model``'s are still run, on the file (with
    that threshold at 4 MB, nudenet's 320n.onnx, 12 MB, got 1 for each dynamic dimension,
    which onnxruntime refuses, until they were given the file: a review)."""
    from pytest_ascend_accuracy.errors import ConfigError
    from pytest_ascend_accuracy.graph import external, wire
    from pytest_ascend_accuracy.graph.prepare import prepare_model
    from pytest_ascend_accuracy.plugin.shape_deferred_model import ShapeDeferredModel

    model = two_branches()
    weight = np.zeros(wire.SCAN_ABOVE // 4 + 1, np.float32)  # above it: read by reference
    model.graph.initializer.append(onnx.numpy_helper.from_array(weight, "unused"))
    path = tmp_path / "m.onnx"
    onnx.save_model(model, str(path))
    proto = load_model(str(path), weights=False)
    assert [t.name for t in proto.graph.initializer if external.is_external(t)] == ["unused"]
    with pytest.raises(DynamicShapeError) as info:
        prepare_model(str(path), weights_by_reference=True)  # the conversion's
    assert _pasted_python(str(info.value)) == {"x": (1, 2, 32, 32)}
    deferred = ShapeDeferredModel(lambda shape: None, str(path), None, atc_options=None,
                                  where="ascend_model", dynamic=["x"])
    with pytest.raises(ConfigError) as info:
        deferred.converted
    assert _pasted_python(str(info.value)) == {"x": (1, 2, 32, 32)}

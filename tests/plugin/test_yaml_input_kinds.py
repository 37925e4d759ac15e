"""Inputs of a YAML suite that no ``.npy`` file feeds (a review of 008bfcc): a string input was
told "save it as object", refused when pasted; a complex64 one "save it as complex64", which
onnxruntime refused at run time; a model with a sequence input was offered ``s: <file>.npy``
when an input name was mistyped. Each is refused once, at collection, naming the ONNX type and
what to export instead; the export it advises loads (and runs, for the complex one)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.plugin.yaml_suite import load_suite


def _save(path, nodes, inputs, outputs, opset=13):
    model = helper.make_model(helper.make_graph(nodes, path.stem, inputs, outputs),
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _tensor(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


def _refusal(path):
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    return str(info.value)


STRING = ("model input 't' is string: a string input cannot be fed from a .npy file (an input "
          "file holds numbers or bools; numpy saves strings as Python objects, read only with "
          "pickling, off here, or as unicode text), and an Ascend check holds numeric tensors "
          "only (ATC converts no string operator); encode the strings to integer ids before the "
          "model and export it with an int64 input in their place")


@pytest.mark.parametrize("values", [np.zeros(1, np.float32), np.array(["a"])],
                         ids=["float32", "unicode"])
def test_a_string_input_is_refused_once_as_one_no_file_feeds(tmp_path, values):
    # a review: a float file was told "save it as object: python -c ... astype('object')",
    # which pasted was refused (allow_pickle=False); a '<U1' file "not numeric or bool"
    _save(tmp_path / "strin.onnx", [helper.make_node("Identity", ["t"], ["y"], name="id")],
          [_tensor("t", TensorProto.STRING, [1])], [_tensor("y", TensorProto.STRING, [1])])
    np.save(tmp_path / "t.npy", values)
    path = tmp_path / "accuracy_s.yaml"
    path.write_text("models: [{model: strin.onnx, inputs: {t: t.npy}}]\n")
    text = _refusal(path)
    assert text.endswith(f"models[0].inputs.t: t.npy: {STRING}"), text
    assert "is object" not in text and "astype" not in text
    # as advised: the ids as an int64 input, fed from an int64 file, load
    _save(tmp_path / "strin.onnx", [helper.make_node("Identity", ["t"], ["y"], name="id")],
          [_tensor("t", TensorProto.INT64, [1])], [_tensor("y", TensorProto.INT64, [1])])
    np.save(tmp_path / "t.npy", np.array([3], np.int64))
    assert len(list(load_suite(path))) == 1


SEEDED_STRING = ("model input 't' is string: a seed draws random numbers, no strings, and no "
                 ".npy file feeds a string input either, and an Ascend check holds numeric "
                 "tensors only (ATC converts no string operator); encode the strings to integer "
                 "ids before the model and export it with an int64 input in their place")


@pytest.mark.parametrize("suite, at", [
    ("models: [{model: strin.onnx}]", "models[0].inputs (not given: {seed: 0})"),
    ("models: [{model: strin.onnx, inputs: {seed: 3}}]", "models[0].inputs"),
    ("models: [{model: strin.onnx, inputs: {seed: 3, shapes: {t: [2]}}}]", "models[0].inputs"),
    ("defaults: {inputs: {seed: 3}}\nmodels: [{model: strin.onnx}]",
     "defaults.inputs (model strin.onnx)"),  # (H86: it named no model)
], ids=["default-seed", "seed", "seed-and-shapes", "defaults"])
def test_a_string_input_drawn_from_a_seed_is_refused_at_collection(tmp_path, suite, at):
    # left alone last session: such an entry failed once it ran, with "cannot make random
    # inputs of dtype object"
    _save(tmp_path / "strin.onnx", [helper.make_node("Identity", ["t"], ["y"], name="id")],
          [_tensor("t", TensorProto.STRING, ["n"])], [_tensor("y", TensorProto.STRING, ["n"])])
    path = tmp_path / "accuracy_s.yaml"
    path.write_text(suite + "\n")
    text = _refusal(path)
    assert text.endswith(f"{at}: {SEEDED_STRING}"), text
    assert "dtype object" not in text
    # as advised: the ids as an int64 input, drawn from the same seed, load
    _save(tmp_path / "strin.onnx", [helper.make_node("Identity", ["t"], ["y"], name="id")],
          [_tensor("t", TensorProto.INT64, ["n"])], [_tensor("y", TensorProto.INT64, ["n"])])
    assert len(list(load_suite(path))) == 1


COMPLEX = ("model input 'c' is complex64: onnxruntime, which runs the golden model and the "
           "emulator, loads no model with a complex64 input, and CANN documents no complex input "
           "type for an ONNX model; export the model with the real and imaginary parts as float32 "
           "inputs (two inputs, or one with a last dimension of 2) and pass float32 arrays")


def test_a_complex_input_is_refused_at_load_and_the_export_it_advises_passes(pytester):
    # a review: "save it as complex64", pasted, failed in onnxruntime at run time ("MLDataType
    # for: tensor(complex64) is not currently registered")
    root = pytester.path
    _save(root / "cplx.onnx", [helper.make_node("Identity", ["c"], ["y"], name="id")],
          [_tensor("c", TensorProto.COMPLEX64, [1, 2])],
          [_tensor("y", TensorProto.COMPLEX64, [1, 2])])
    np.save(root / "c.npy", np.ones((1, 2), np.float32))
    path = root / "accuracy_c.yaml"
    path.write_text("models: [{model: cplx.onnx, inputs: {c: c.npy}}]\n")
    text = _refusal(path)
    assert text.endswith(f"models[0].inputs.c: c.npy: {COMPLEX}"), text
    path.write_text("models: [{model: cplx.onnx}]\n")  # generated inputs: the same words,
    text = _refusal(path)  # at collection too (it failed the item once it ran)
    assert text.endswith(f"models[0].inputs (not given: {{seed: 0}}): {COMPLEX}"), text
    assert "MLDataType" not in text
    # as advised: the real and imaginary parts as two float32 inputs
    _save(root / "cplx.onnx", [helper.make_node("Add", ["re", "im"], ["y"], name="add")],
          [_tensor("re", TensorProto.FLOAT, [1, 2]), _tensor("im", TensorProto.FLOAT, [1, 2])],
          [_tensor("y", TensorProto.FLOAT, [1, 2])])
    np.save(root / "re.npy", np.ones((1, 2), np.float32))
    np.save(root / "im.npy", np.full((1, 2), 0.5, np.float32))
    path.write_text("models: [{model: cplx.onnx, inputs: {re: re.npy, im: im.npy}}]\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def _seq_model(path, second):
    """Input 'x' (a tensor) and 's' (``second``: a sequence, or a tensor as advised)."""
    seq = second == "sequence"
    s = (helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None) if seq
         else _tensor("s", TensorProto.FLOAT, [1, 4]))
    use = (helper.make_node("SequenceLength", ["s"], ["n"], name="len") if seq
           else helper.make_node("Identity", ["s"], ["n"], name="len"))
    _save(path, [use, helper.make_node("Identity", ["x"], ["y"], name="id")],
          [_tensor("x", TensorProto.FLOAT, [1, 4]), s],
          [_tensor("y", TensorProto.FLOAT, [1, 4]),
           _tensor("n", TensorProto.INT64 if seq else TensorProto.FLOAT, [] if seq else [1, 4])])


SEQUENCE = ("model input 's' is a sequence, not a tensor: ATC has no sequence tensors and no file "
            "feeds it; export the model with a tensor in its place")


@pytest.mark.parametrize("inputs", ["{xx: x.npy}", "{x: x.npz}"], ids=["misspelled", "npz"])
def test_a_sequence_input_is_not_offered_as_a_file_by_the_spelling_advice(tmp_path, inputs):
    # a review: a mistyped name got "write inputs: {x: <file>.npy, s: <file>.npy}", and the
    # sequence input 's' pasted as a .npy was refused
    _seq_model(tmp_path / "seq.onnx", "sequence")
    np.save(tmp_path / "x.npy", np.zeros((1, 4), np.float32))
    path = tmp_path / "accuracy_s.yaml"
    path.write_text(f"models: [{{model: seq.onnx, inputs: {inputs}}}]\n")
    text = _refusal(path)
    assert text.endswith(f"models[0].inputs: {SEQUENCE}"), text
    assert "<file>.npy" not in text
    # as advised: 's' a tensor; then both inputs are files of its own names
    _seq_model(tmp_path / "seq.onnx", "tensor")
    np.save(tmp_path / "s.npy", np.zeros((1, 4), np.float32))
    path.write_text("models: [{model: seq.onnx, inputs: {x: x.npy, s: s.npy}}]\n")
    assert len(list(load_suite(path))) == 1


def test_the_sequence_refusal_of_defaults_inputs_names_the_model(tmp_path):
    # a review: "defaults.inputs: model input 's' is a sequence ..." named no model, and the
    # defaults apply to every model of the suite
    _seq_model(tmp_path / "seq.onnx", "sequence")
    np.save(tmp_path / "x.npy", np.zeros((1, 4), np.float32))
    path = tmp_path / "accuracy_s.yaml"
    path.write_text("defaults: {inputs: {x: x.npy}}\nmodels: [{model: seq.onnx}]\n")
    text = _refusal(path)
    assert text.endswith("defaults.inputs: model input 's' of seq.onnx is a sequence, not a "
                         "tensor: ATC has no sequence tensors and no file feeds it; export the "
                         "model with a tensor in its place"), text


def _other_input(kind):
    if kind == "optional":
        return helper.make_value_info("o", helper.make_optional_type_proto(
            helper.make_tensor_type_proto(TensorProto.FLOAT, [1])))
    return helper.make_value_info("o", helper.make_sparse_tensor_type_proto(
        TensorProto.FLOAT, [2, 2]))


@pytest.mark.parametrize("kind, words", [
    ("optional", "is an optional, not a tensor: ATC has no optional values and no file feeds "
                 "it; export the model with a tensor in its place"),
    ("sparse", "is a sparse tensor, not a dense tensor: ATC has no sparse tensors and no file "
               "feeds it; export the model with a dense tensor in its place"),
])
def test_each_kind_of_non_tensor_input_is_named_in_words(tmp_path, kind, words):
    # a review: "is a optional", "no sparse_tensor tensors"
    _save(tmp_path / "m.onnx", [helper.make_node("Identity", ["x"], ["y"], name="id")],
          [_tensor("x", TensorProto.FLOAT, [1, 4]), _other_input(kind)],
          [_tensor("y", TensorProto.FLOAT, [1, 4])], opset=18)
    np.save(tmp_path / "x.npy", np.zeros((1, 4), np.float32))
    path = tmp_path / "accuracy_m.yaml"
    path.write_text("models: [{model: m.onnx, inputs: {x: x.npy}}]\n")
    text = _refusal(path)
    assert text.endswith(f"models[0].inputs: model input 'o' {words}"), text


@pytest.mark.parametrize("inputs", ["{x: x.npy}", "{xx: x.npy}", "{x: x.npz}",
                                    "{xx: x.npy, s: s.npy}", "{s: s.npz}", "{s: s.npy}"])
@pytest.mark.parametrize("elem,words", [(TensorProto.STRING, "is string: a string input"),
                                        (TensorProto.COMPLEX64, "is complex64: onnxruntime")])
def test_a_string_or_complex_input_is_not_asked_for_as_a_file(tmp_path, inputs, elem, words):
    # a review: the missing-input and misspelling advice wrote {x: <file>.npy, s: <file>.npy},
    # and each file or {seed: N} pasted for s was refused
    _save(tmp_path / "two.onnx", [helper.make_node("Identity", ["x"], ["y"], name="id"),
                                  helper.make_node("Identity", ["s"], ["z"], name="id2")],
          [_tensor("x", TensorProto.FLOAT, [1, 4]), _tensor("s", elem, [1])],
          [_tensor("y", TensorProto.FLOAT, [1, 4]), _tensor("z", elem, [1])])
    np.save(tmp_path / "x.npy", np.zeros((1, 4), np.float32))
    path = tmp_path / "accuracy_s.yaml"
    path.write_text(f"models: [{{model: two.onnx, inputs: {inputs}}}]\n")
    text = _refusal(path)
    assert f"model input 's' {words}" in text and "<file>.npy" not in text, text

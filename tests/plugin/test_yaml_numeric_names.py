"""A numeric op or tensor name left unquoted in a YAML suite (ONNX exports name tensors by
number: ddddocr's ``common.onnx`` outputs ``387``). YAML reads ``per_op: {387: 0.999}`` as the
number 387, and an audit saw "per_op keys must be op names, got 387" with no word of why nor
what to write. The message says YAML read a number and prints the entry quoted; pasted, the
quoted name is checked as any other (a tensor's name is told to name its op, an op's taken)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

from pytest_ascend_accuracy.errors import ConfigError

SUITE = """models:
  - model: num.onnx
    name: num
    inputs: {{x: x.npy}}
    {setting}
"""


def _model(path):
    """``x -> Relu '12' -> tensor '387' -> Sigmoid 'Sigmoid_101' -> Neg 'Neg_102' -> y``: an op
    and a tensor named by number, as exporters write them."""
    nodes = [h.make_node("Relu", ["x"], ["387"], name="12"),
             h.make_node("Sigmoid", ["387"], ["s"], name="Sigmoid_101"),
             h.make_node("Neg", ["s"], ["y"], name="Neg_102")]
    graph = h.make_graph(nodes, "num", [h.make_tensor_value_info("x", TP.FLOAT, [1, 8])],
                         [h.make_tensor_value_info("y", TP.FLOAT, [1, 8])])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(path))


@pytest.fixture
def project(pytester):
    _model(pytester.path / "num.onnx")
    np.save(pytester.path / "x.npy", np.linspace(-1, 1, 8, dtype=np.float32).reshape(1, 8))

    def run(setting):
        (pytester.path / "accuracy_num.yaml").write_text(SUITE.format(setting=setting))
        return pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly")
    return run


@pytest.mark.parametrize("setting, said, pasted", [
    ("per_op: {387: 0.999}",
     'models[0].per_op: per_op keys must be op names, got 387, a number: YAML reads an unquoted '
     '387 as one; quote it as the model spells it: "387" (per_op: {"387": 0.999})',
     'per_op: {"387": 0.999}'),
    ("ignore: [387]",
     'models[0].ignore: must be a list of op names, got [387]; 387 is a number: YAML reads an '
     'unquoted 387 as one; quote it as the model spells it: "387" (ignore: ["387"])',
     'ignore: ["387"]')])
def test_a_numeric_tensor_name_is_told_to_be_quoted_then_to_name_its_op(project, setting, said,
                                                                        pasted):
    assert f"invalid accuracy suite: accuracy_num.yaml: {said}\n" in project(setting).stdout.str()
    what = pasted.split(":")[0]
    assert (f"invalid accuracy suite: accuracy_num.yaml: models[0].{what}: {what} entry '387' is "
            "a tensor of model 'num', output 0 of op '12': name the op, '12'\n"
            in project(pasted).stdout.str())


@pytest.mark.parametrize("setting, said, pasted", [
    ("per_op: {12: 0.5}", '(per_op: {"12": 0.5})', 'per_op: {"12": 0.5}'),
    ("ignore: [12, Sigmoid_101]", '(ignore: ["12", Sigmoid_101])',
     'ignore: ["12", Sigmoid_101]'),
    ("modes: [{keep_dtype: [12]}]", '(keep_dtype: ["12"])', 'modes: [{keep_dtype: ["12"]}]')])
def test_a_numeric_op_name_quoted_as_advised_is_taken(project, setting, said, pasted):
    out = project(setting).stdout.str()
    assert f'12 as one; quote it as the model spells it: "12" {said}\n' in out
    assert ("12 is a number: YAML reads an unquoted" in out
            or "got 12, a number: YAML reads an unquoted" in out)
    result = project(pasted)
    assert "invalid accuracy suite" not in result.stdout.str()
    result.assert_outcomes(passed=1)


def test_the_marker_s_ignore_and_per_op_say_op_names_are_strings():
    """A marker is Python: 387 is the user's own int there, not YAML's reading of a name."""
    from pytest_ascend_accuracy.plugin.marker_spec import validate_ignore, validate_per_op

    with pytest.raises(ConfigError) as caught:
        validate_ignore([387, "Conv_1"], "accuracy marker")
    assert caught.value.problem == (
        "ignore entries must be op names, got 387 (an int: op names are strings, '387')")
    with pytest.raises(ConfigError) as caught:
        validate_per_op({387: 0.9}, "accuracy marker")
    assert caught.value.problem == (
        "per_op keys must be op names, got 387 (an int: op names are strings, '387')")


@pytest.mark.parametrize("value, said", [
    ([True], "true is a boolean: YAML reads an unquoted true, false, yes, no, on or off as "
             "one; quote the name as the model spells it, in double quotes"),
    ([1.5], "1.5 is a number: YAML reads an unquoted 1.5 as one; quote the name as the model "
            "spells it, in double quotes")])
def test_a_name_whose_spelling_is_lost_is_told_to_be_quoted_without_a_guess(value, said):
    from pytest_ascend_accuracy.core.modes import mode_from_spec

    with pytest.raises(ConfigError) as caught:
        mode_from_spec({"keep_dtype": value}, "models[0].modes[0]")
    assert caught.value.problem.endswith(f"; {said}")

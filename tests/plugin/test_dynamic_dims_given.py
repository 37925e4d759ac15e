"""``input_shape`` with -1 or a range n1~n2 (trial t52, proof_input_shape_words.py): it was
refused as "ATC's --input_shape takes positive dimensions only (E10011)", untrue (GE raises
E10011 only for an input left static; -1 and ranges make a dynamic-shape build), and a range
got only "must be a sequence of ints". Now it says why a check wants sizes, and a static shape
to paste: the given sizes, the model's declared ones, 1 for a -1, a range's low end."""
import re

import onnx
import pytest
from onnx import TensorProto, helper

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.graph.onnx_graph import parse_input_shape, resolve_input_shapes
from pytest_ascend_accuracy.graph.shape_advice import DynamicShapeError
from pytest_ascend_accuracy.testing import models as tiny_models

pytest.importorskip("onnxruntime")

MODEL = "models/dyn.onnx"  # unnamed_model: x is [N, 4]
WHY = ("make ATC build a dynamic-shape model, and a check converts one static shape, the shape "
       "of the inputs it compares")


@pytest.fixture
def dyn_model(pytester):
    directory = pytester.mkdir("models")
    onnx.save(tiny_models.unnamed_model(), str(directory / "dyn.onnx"))
    return directory / "dyn.onnx"


@pytest.mark.parametrize("given, chosen", [("'x:-1,4'", "1 for each -1"),
                                           ("{'x': ['2~6', 4]}", "the low end of each range")])
def test_ascend_model_advice_for_a_dynamic_mark_runs_pasted(pytester, dyn_model, given, chosen):
    body = """
        import numpy as np
        from pytest_ascend_accuracy import accuracy

        @accuracy(threshold=0.95)
        def test_given(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            om = ascend_model("{model}", {shape})
            inputs = accuracy_inputs("{model}", seed=0, {shape})
            check_accuracy(om.run(inputs), golden_dump("{model}", inputs))
    """
    pytester.makepyfile(test_given=body.format(model=MODEL, shape=f"input_shape={given}"))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    assert "E10011" not in text and "positive" not in text and "sequence of ints" not in text
    assert WHY in text and f"e.g. with {chosen}: " in text
    pasted = re.search(r"input_shape=\{'x': \(\d, 4\)\}", text).group(0)
    pytester.makepyfile(test_given=body.format(model=MODEL, shape=pasted))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def _model(shape):
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "dyn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_the_example_takes_the_models_declared_sizes():
    """-1 where the model declares 8: the example says 8, which the model takes."""
    model = _model(["N", 8, 4])
    with pytest.raises(DynamicShapeError) as info:
        resolve_input_shapes(model, "x:3,-1,4")
    assert str(info.value) == (
        f"input_shape: input 'x' given [3, -1, 4]: -1 and ranges (n1~n2) {WHY}: give each "
        "dimension its size (of the data you test with), e.g. with the model's declared size: "
        "input_shape={'x': (3, 8, 4)}")
    assert info.value.yaml_text().endswith("add to the entry: input_shape: {x: [3, 8, 4]}")
    assert resolve_input_shapes(model, info.value.example) == {"x": (3, 8, 4)}


def test_a_zero_is_still_refused_as_atc_refuses_it():
    with pytest.raises(ValueError, match=r"must be positive ints, got \[0, 4\]: ATC refuses "
                       r"a size below 1 for an input it converts static \(E10011\)"):
        parse_input_shape({"x": (0, 4)})


def test_the_cli_advice_is_its_own_option_and_runs_pasted(tmp_path, capsys):
    model = tmp_path / "dyn.onnx"
    onnx.save(_model(["N", 8, 4]), model)
    args = ["diagnose", str(model), "--cache-dir", str(tmp_path / "c")]
    assert cli.main(args + ["--input-shape", "x:1~4,8,4"]) == 2
    err = capsys.readouterr().err
    assert "E10011" not in err and WHY in err
    pasted = re.search(r"--input-shape '(x:[\d,]+)'$", err.rstrip())
    assert pasted and pasted.group(1) == "x:1,8,4", err
    assert cli.main(args + ["--input-shape", pasted.group(1)]) == 0

"""YAML the product prints, pasted verbatim into the suite as a user would, then run: each
snippet now loads back as the names and paths it means (``core.yaml_text``). An audit (H325)
pasted them: ``then write inputs: {x: data/x,a_float32.npy}`` read as two keys (``no model
input named 'a_float32.npy'``), ``{x: data/x #1_float32.npy}`` lost its end to a comment (not
valid YAML), ``add to the entry: input_shape: {on: [1, 4]}`` named an input ``True``, and so
did the tiny-float32 hint's ``YAML: per_op: {on: {max_abs: 1.2e-07}}`` for an op."""
import json
import re
import shlex
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper


def _save_model(path, nodes, inputs, output, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, [output], list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _relu(path, name: str, batch) -> None:
    """A Relu of input ``name`` ([batch, 4], float32; batch a str: dynamic)."""
    _save_model(path, [helper.make_node("Relu", [name], ["y"], name="relu")],
                [helper.make_tensor_value_info(name, TensorProto.FLOAT, [batch, 4])],
                helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 4]))


def _run(pytester, suite, entry: str):
    suite.write_text(f"models:\n  - name: m\n    model: relu.onnx\n{entry}")
    return pytester.runpytest("-p", "no:cacheprovider")


def _error(result) -> str:
    lines = [line for line in result.outlines if line.startswith("invalid accuracy suite:")]
    assert lines, result.stdout.str()
    return lines[0]


@pytest.fixture
def suites(pytester):
    """``suites/`` below where pytest runs (the command's paths and the YAML's differ)."""
    folder = pytester.mkdir("suites")
    (folder / "data").mkdir()
    return folder


@pytest.mark.parametrize("name, file", [("x", "x,a.npy"), ("x", "x #1.npy"),
                                        ("on", "on.npy")])
def test_the_file_fix_run_and_pasted_as_printed_passes(pytester, suites, name, file):
    _relu(suites / "relu.onnx", name, 1)
    np.save(suites / "data" / file, np.random.default_rng(0).random((1, 4)))  # float64
    suite = suites / "accuracy_s.yaml"
    given = json.dumps({name: f"data/{file}"})  # as the user quoted it
    error = _error(_run(pytester, suite, f"    inputs: {given}\n"))
    assert "holds float64 values" in error, error
    command = shlex.split(re.search(r'python -c "[^"]+"', error).group(0))
    subprocess.run([sys.executable] + command[1:], cwd=pytester.path, check=True)
    pasted = re.search(r"then write inputs: (\{.*\})$", error).group(1)
    _run(pytester, suite, f"    inputs: {pasted}\n").assert_outcomes(passed=1)


def test_input_shape_at_the_files_shape_pasted_as_printed_passes(pytester, suites):
    _relu(suites / "relu.onnx", "on", "N")
    np.save(suites / "data" / "on.npy", np.random.default_rng(0).random((4, 4), np.float32))
    suite = suites / "accuracy_s.yaml"
    error = _error(_run(pytester, suite, '    inputs: {"on": data/on.npy}\n'
                                         '    input_shape: {"on": [1, 4]}\n'))
    pasted = re.search(r"convert at the file's shape: (input_shape: \{.*\})$", error).group(1)
    _run(pytester, suite, f'    inputs: {{"on": data/on.npy}}\n    {pasted}\n'
         ).assert_outcomes(passed=1)


@pytest.mark.parametrize("name", ["on", "Null", "a,b"])
def test_the_dynamic_input_shape_advice_pasted_as_printed_passes(pytester, name):
    _relu(pytester.path / "relu.onnx", name, "N")
    suite = pytester.path / "accuracy_s.yaml"
    failed = _run(pytester, suite, "")
    failed.assert_outcomes(failed=1)
    text = failed.stdout.str()
    pasted = re.search(r"add to the entry: (input_shape: \{[^\n]*\})\n", text).group(1)
    _run(pytester, suite, f"    {pasted}\n").assert_outcomes(passed=1)


TINY_SUITE = """models:
  - name: tiny
    model: tiny.onnx
    modes: [high_precision]
    metric: rel_l2
    threshold: 1.0e-4
    golden: golden/tiny
    per_op: {per_op}
"""


def test_the_tiny_float32_per_op_advice_pasted_into_the_suite_passes(pytester):
    """Op ``yes`` (an Add of -19, its own per_op entry) feeds op ``on`` (a Sigmoid: golden
    values below float16's smallest normal, float32 throughout in high precision); the stored
    golden of ``on`` is made off by 2**-24, float32 rounding of values that small, so the hint
    judges it by its size. Its YAML form, pasted, passes: printed ``{yes: 0.001, on: {...}}``,
    it was refused (``yes`` and ``on`` are one key, True, once loaded)."""
    bias = numpy_helper.from_array(np.full((1, 64), -19.0, np.float32), "bias")
    _save_model(pytester.path / "tiny.onnx",
                [helper.make_node("Add", ["x", "bias"], ["logit"], name="yes"),
                 helper.make_node("Sigmoid", ["logit"], ["prob"], name="on")],
                [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 64]), [bias])
    suite = pytester.path / "accuracy_t.yaml"
    suite.write_text(TINY_SUITE.format(per_op='{"yes": 1.0e-3}'))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)  # golden written
    golden = pytester.path / "golden" / "tiny"
    (stored,) = golden.glob("on.*.npy")
    values = np.load(stored)
    values.reshape(-1)[::2] += np.float32(2.0 ** -24)
    np.save(stored, values)
    (golden / "golden.json").unlink()  # (its digests name the values as written)
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    hint = next(line for line in failed.outlines if line.startswith("next step:"))
    assert "judge it by its size" in hint, hint
    pasted = re.search(r"\(YAML: per_op: (\{.*\}); check_accuracy\(", hint).group(1)
    suite.write_text(TINY_SUITE.format(per_op=pasted))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

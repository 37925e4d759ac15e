"""The float16 range has two ends: a value below half of float16's smallest subnormal (2**-24)
flushes to 0 as surely as one past 65504 becomes inf. User trial: ``magnitudes`` (x * 1e-30 *
1e30, and x * 1e30 * 1e-30) printed ``keep_dtype(['from_tiny', 'to_huge', 'from_huge'])``, which
pasted verbatim failed again at from_tiny (to_tiny, left in float16, still handed it 0) and
printed the same hint. Each printed mode is pasted verbatim here and must pass.
"""
import onnx
from onnx import TensorProto, helper, numpy_helper

import numpy as np

from test_hints_contract import parse_hint

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy{imports}


@accuracy(threshold=0.95{modes})
def test_magnitudes(ascend_model, golden_dump, check_accuracy):
    inputs = {{"x": np.random.default_rng(0).uniform(0.5, 1.5, (1, 4)).astype(np.float32)}}
    actual = ascend_model("models/{model}.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/{model}.onnx", inputs))
'''

SUITE = '''
models:
  - name: {model}
    model: models/{model}.onnx
    threshold: 0.95
    inputs: {{x: x.npy}}
    modes: [{yaml}]
'''


def _save(pytester, name, nodes, initializers, outputs):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, 4]) for y in outputs],
        initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    folder = pytester.path / "models"
    folder.mkdir(exist_ok=True)
    onnx.save(model, str(folder / f"{name}.onnx"))


def _magnitudes(pytester):
    _save(pytester, "magnitudes",
          [helper.make_node("Mul", ["x", "tiny"], ["t1"], name="to_tiny"),
           helper.make_node("Mul", ["t1", "huge"], ["y1"], name="from_tiny"),
           helper.make_node("Mul", ["x", "huge"], ["t2"], name="to_huge"),
           helper.make_node("Mul", ["t2", "tiny"], ["y2"], name="from_huge")],
          [helper.make_tensor("tiny", TensorProto.FLOAT, [], [1e-30]),
           helper.make_tensor("huge", TensorProto.FLOAT, [], [1e30])], ["y1", "y2"])


def _test_file(model, expr=None, imports=""):
    return TEST.format(model=model, modes=f", modes=[{expr}]" if expr else "",
                       imports=f", {imports}" if imports else "")


def _hint_block(text):
    block = text[text.index("next step:"):]
    return block[:block.index("\n\n")] if "\n\n" in block else block


def test_a_hint_for_values_flushed_to_zero_pasted_verbatim_passes(pytester):
    _magnitudes(pytester)
    pytester.makepyfile(test_failing=_test_file("magnitudes"))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    block = _hint_block(run.stdout.str())
    assert "underflows to 0 (|" in block
    exprs, yamls, imports = parse_hint(block)
    assert len(exprs) == 2 and exprs[1] == "HIGH_PRECISION" and yamls[1] == "high_precision"
    kept = eval(exprs[0][len("keep_dtype("):-1])  # noqa: S307  (a printed list of names)
    assert sorted(kept) == ["from_huge", "from_tiny", "to_huge", "to_tiny"]
    files = []
    for k, expr in enumerate(exprs):
        pytester.makepyfile(**{f"test_pasted_{k}": _test_file("magnitudes", expr, imports)})
        files.append(f"test_pasted_{k}.py")
    np.save(pytester.path / "x.npy", np.random.default_rng(0).uniform(0.5, 1.5, (1, 4))
            .astype(np.float32))
    for k, entry in enumerate(yamls):
        (pytester.path / f"accuracy_pasted_{k}.yaml").write_text(
            SUITE.format(model="magnitudes", yaml=entry))
        files.append(f"accuracy_pasted_{k}.yaml")
    fixed = pytester.runpytest("-p", "no:cacheprovider", *files)
    fixed.assert_outcomes(passed=4)


def test_high_precision_is_not_offered_where_a_cube_op_flushes_the_values(pytester):
    """A MatMul by weights near 1e-30, then a Mul by 1e30, with fusion off: high precision runs
    the MatMul in float16 still (its output flushes to 0), so the hint offers keep_dtype alone,
    and that pasted passes."""
    w = (np.random.default_rng(1).uniform(0.5, 1.5, (4, 4)) * 1e-30).astype(np.float32)
    _save(pytester, "cube_tiny",
          [helper.make_node("MatMul", ["x", "w"], ["m"], name="project"),
           helper.make_node("Mul", ["m", "huge"], ["y"], name="rescale")],
          [numpy_helper.from_array(w, "w"),
           helper.make_tensor("huge", TensorProto.FLOAT, [], [1e30])], ["y"])
    pytester.makepyfile(test_failing=_test_file("cube_tiny", "FUSION_OFF", "FUSION_OFF"))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    block = _hint_block(run.stdout.str())
    exprs, _, imports = parse_hint(block)
    assert len(exprs) == 1 and "HIGH_PRECISION" not in block
    assert exprs[0] in ("FUSION_OFF | keep_dtype(['project', 'rescale'])",
                        "FUSION_OFF | keep_dtype(['rescale', 'project'])")
    pytester.makepyfile(test_pasted=_test_file("cube_tiny", exprs[0], imports),
                        test_high=_test_file("cube_tiny", "HIGH_PRECISION | FUSION_OFF",
                                             "HIGH_PRECISION, FUSION_OFF"))
    pasted = pytester.runpytest("-p", "no:cacheprovider", "test_pasted.py", "test_high.py")
    pasted.assert_outcomes(passed=1, failed=1)  # the high precision it does not offer fails
    pasted.stdout.fnmatch_lines(["FAILED test_high.py::*"])

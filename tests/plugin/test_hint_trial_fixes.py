"""Hints a user trial pasted verbatim and found not to work, each pasted again here.

- ``ignore=["norm", "to_flat"]`` hid norm's 1e9 variance: the hint said "no float16 overflow
  seen" and offered fusion and buffer modes; ignored ops upstream of the failure are looked at;
- a flipped ArgMax after a MatMul got high precision as its probe, which still feeds the MatMul
  float16 (it failed as the default did): the hint keeps the ops computing it in float32;
- the "threshold that would pass" of an op the scale guard also fails (the overflow model's
  norm: cosine 0.396693, L2 norm 0.3998x) still failed pasted: the line now says the guard
  fails it too and gives the threshold with the scale_tolerance that passes it (and judge
  with the --scale-tolerance that does);
- ``ascend-accuracy judge`` of the plugin's compare.json said "no float16 overflow seen"
  where it read no golden tensor at all.
"""
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from test_hints_contract import parse_hint

TEST = '''
from pytest_ascend_accuracy import accuracy, {imports}
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy({marker})
def test_model(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/{model}.onnx")
    actual = ascend_model("models/{model}.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/{model}.onnx", inputs))
'''


def _test(marker, model="overflow", imports="accuracy"):
    return TEST.format(marker=marker, model=model, imports=imports)


def _pasted(pytester, exprs, imports, marker, model):
    """Each printed mode pasted into ``modes=[...]`` of the same test: the outcomes."""
    for k, expr in enumerate(exprs):
        pytester.makepyfile(**{f"test_pasted_{k}": _test(f"{marker}, modes=[{expr}]", model,
                                                         imports)})
    return pytester.runpytest("-p", "no:cacheprovider",
                              *[f"test_pasted_{k}.py" for k in range(len(exprs))])


def test_an_ignored_op_upstream_of_the_failure_is_looked_at_for_float16_range(
        pytester, models_dir):
    marker = 'threshold=0.95, ignore=["norm", "to_flat"]'
    pytester.makepyfile(test_model=_test(marker))
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    text = failed.stdout.str()
    assert "no float16 overflow seen" not in text
    failed.stdout.fnmatch_lines(["next step: golden operands leave the float16 range (norm "
                                 "input:4 reaches |1e+09|; norm is ignored but feeds the failing "
                                 "ops)*"])
    exprs, _, imports = parse_hint(text)
    assert exprs[0] == "keep_dtype(['norm'])"
    _pasted(pytester, exprs, imports, marker, "overflow").assert_outcomes(passed=len(exprs))


def _argmax_model(directory):
    """MatMul by the identity, Add of 1000 + i * 1e-4 (float16 makes the scores equal), ArgMax."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["l"], name="logits"),
             helper.make_node("Add", ["l", "off"], ["l2"], name="offset"),
             helper.make_node("ArgMax", ["l2"], ["y"], name="pick", axis=1, keepdims=0)]
    inits = [numpy_helper.from_array(np.eye(16, dtype=np.float32), "w"),
             numpy_helper.from_array((1000 + np.arange(16) * 1e-4).astype(np.float32), "off")]
    graph = helper.make_graph(nodes, "argmax", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [4, 16])], [helper.make_tensor_value_info(
            "y", TensorProto.INT64, [4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(directory / "argmax.onnx"))


def test_a_flipped_index_a_matmul_computes_gets_a_probe_that_passes_pasted(pytester):
    _argmax_model(pytester.mkdir("models"))
    pytester.makepyfile(test_model=_test('threshold=0.95, modes=["default", HIGH_PRECISION]',
                                         "argmax", "accuracy, HIGH_PRECISION"))
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=2)  # high precision fails as the default does
    for block in failed.stdout.str().split("next step: ")[1:]:
        block = "next step: " + block
        assert block.startswith("next step: integer values differ at pick"), block
        assert "takes float16 inputs even in high precision" in block.splitlines()[0]
        # a detector trial: the pasted probe moved the failure to a later op (an NMS fed the
        # same float16 scores), where "still fails: float16 rounding is not the cause" misled
        assert ("still fails at this op: float16 rounding is not the cause; fails at a later op "
                "instead: it moved them") in block.splitlines()[0]
        exprs, _, imports = parse_hint(block)
        assert exprs and all("keep_dtype(['logits', 'offset', 'pick'])" in e for e in exprs)
        assert exprs != ["HIGH_PRECISION"]
        _pasted(pytester, exprs, imports, "threshold=0.95", "argmax").assert_outcomes(passed=1)


def _judged(pytester, capsys, *options):
    """The lines ``ascend-accuracy judge`` prints for the plugin's compare.json of the overflow
    model at 0.95 (the pytest run's hint named norm's 1e9 operand)."""
    from pytest_ascend_accuracy.cli import app as cli

    saved = next((pytester.path / "rep").rglob("compare.json"), None)
    if saved is None:
        pytester.makepyfile(test_model=_test("threshold=0.95"))
        run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep")
        run.assert_outcomes(failed=1)
        assert "golden operands leave the float16 range (norm input:4" in run.stdout.str()
        saved = next((pytester.path / "rep").rglob("compare.json"))
    capsys.readouterr()
    cli.main(["judge", str(saved), *options])
    return capsys.readouterr().out.splitlines()


def test_a_threshold_the_scale_guard_also_fails_says_so_and_what_passes_it(pytester, models_dir):
    pytester.makepyfile(test_model=_test("threshold=0.95"))
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    line = next(x for x in failed.outlines if x.strip().startswith("cosine "))
    assert "threshold that would pass" not in line, line
    assert "the scale guard fails it too" in line, line
    pasted = re.search(r"(threshold=[0-9.]+) with (scale_tolerance=[0-9.]+) \(or None\)", line)
    assert pasted, line
    for marker in (f"{pasted[1]}, {pasted[2]}", f"{pasted[1]}, scale_tolerance=None"):
        pytester.makepyfile(test_model=_test(marker))
        again = pytester.runpytest("-p", "no:cacheprovider")
        # norm (and to_flat, its reshape) pass; fc2/MatMul is below that threshold still
        again.stdout.fnmatch_lines(["*first failure in graph order: fc2/MatMul (#4)*"])
        assert "first failure in graph order: norm" not in again.stdout.str()


def test_judge_spells_the_scale_guards_way_out_as_its_options(pytester, models_dir, capsys):
    line = next(x for x in _judged(pytester, capsys) if x.strip().startswith("cosine "))
    pasted = re.search(r"(--threshold [0-9.]+) with (--scale-tolerance [0-9.]+) \(or none\)",
                       line)
    assert pasted, line
    out = _judged(pytester, capsys, *pasted[1].split(), *pasted[2].split())
    assert "first failure in graph order: fc2/MatMul (#4)" in out[0]  # norm passes


def test_judge_of_a_saved_result_says_the_golden_operands_were_not_checked(pytester, models_dir,
                                                                           capsys):
    hint = next(x for x in _judged(pytester, capsys) if x.startswith("next step: "))
    assert "no float16 overflow seen" not in hint
    assert hint.startswith("next step: no float16 overflow in the failing values; their golden "
                           "operands were not checked (a saved result holds no golden "
                           "tensors): ascend-accuracy diagnose models/overflow.onnx"), hint

"""A keep_dtype hint for an overflowing Cube op keeps the float16 ops computing its operands
(``report.overflow_feeds``). T1: a ViT with its q/k weights x1000 (attention scores 7.6e4-9.2e4)
got a list from the attention MatMul on, without the float16 q_proj/k_proj MatMuls feeding it;
pasted in high precision it failed at the Softmax (cosine 0.985768), with no caveat, and the
diagnosis' fix, keeping q_proj, passed.

The model here is one attention head over tokens that differ by 2e-4 (scores near 8e4, a row's
spread about 10): in high precision the float16 q/k projections lose those differences. The
hint's list, pasted, passes (before, it named scores, attn and mix alone, which pasted fails at
attn, cosine 0.880815). With a float16 MatMul embedding the tokens first, rounding them before
any op the list keeps, the hint says the list may still fail and points to --accuracy-diagnose;
pasted, it fails, and the diagnosis' fix passes pasted, in Python and YAML."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from pasted_fix_lines import FIX, MODES

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy{imports}


@accuracy(threshold=0.99, modes=[{modes}])
def test_attn(ascend_model, golden_dump, check_accuracy):
    inputs = {{"x": np.load("x.npy")}}
    actual = ascend_model("models/attn.onnx").run(inputs, dump=True)
    check_accuracy(actual, golden_dump("models/attn.onnx", inputs))
'''
SUITE = '''
models:
  - name: attn
    model: models/attn.onnx
    threshold: 0.99
    inputs: {{x: x.npy}}
    modes: [{yaml}]
'''
KEPT_TOO = ("q_proj, k_proj kept too: float16 in this run, they compute the operands of scores, "
            "whose values pass 65504, where their rounding is magnified")
MAY_FAIL = ("pasted, the list may still fail: the operands of scores, whose values pass 65504, "
            "are computed from float16 values further up (embed, float16 in this run), whose "
            "rounding they magnify; keep these ops in float32 (where it still fails, run with "
            "--accuracy-diagnose")


def _model(path, embed=False):
    """x [1, 16, 32] -> (embed: x @ I ->) q, k projections (entries near 50) -> scores = q k^T
    (near 8e4) -> Softmax -> mix = p @ x."""
    rng = np.random.default_rng(2)
    inits = [numpy_helper.from_array(
        (1.5625 * (1 + 0.5 * rng.uniform(-1, 1, (32, 32)))).astype(np.float32), n)
        for n in ("wq", "wk")]
    nodes, src = [], "x"
    if embed:
        inits.append(numpy_helper.from_array(np.eye(32, dtype=np.float32), "we"))
        nodes.append(helper.make_node("MatMul", ["x", "we"], ["e"], name="embed"))
        src = "e"
    nodes += [helper.make_node("MatMul", [src, "wq"], ["q"], name="q_proj"),
              helper.make_node("MatMul", [src, "wk"], ["k"], name="k_proj"),
              helper.make_node("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 2, 1]),
              helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
              helper.make_node("Softmax", ["s"], ["p"], name="attn", axis=-1),
              helper.make_node("MatMul", ["p", src], ["y"], name="mix")]
    graph = helper.make_graph(
        nodes, "attn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 32])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _setup(pytester, embed=False):
    (pytester.path / "models").mkdir()
    _model(pytester.path / "models" / "attn.onnx", embed)
    x = 1 + 2e-4 * np.random.default_rng(0).standard_normal((1, 16, 32))
    np.save(pytester.path / "x.npy", x.astype(np.float32))


def _run(pytester, modes, imports="", *args):
    pytester.makepyfile(test_attn=TEST.format(modes=modes,
                                              imports=f", {imports}" if imports else ""))
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def _hint(text):
    block = text[text.index("next step:"):]
    return block[:block.index("\n\n")] if "\n\n" in block else block


def test_the_list_keeps_the_float16_projections_and_passes_pasted(pytester):
    _setup(pytester)
    run = _run(pytester, '"high_precision"')
    run.assert_outcomes(failed=1)
    assert "first failure in graph order: scores (#3)" in run.stdout.str()
    hint = _hint(run.stdout.str())
    assert KEPT_TOO in hint and "may still fail" not in hint, hint
    expr, yaml, imports = MODES.search(hint).groups()
    assert expr == "HIGH_PRECISION | keep_dtype(['scores', 'attn', 'mix', 'q_proj', 'k_proj'])"
    pytester.makefile(".yaml", accuracy_attn=SUITE.format(yaml=yaml))
    _run(pytester, expr, imports).assert_outcomes(passed=2)
    # the list it printed before, without the projections: pasted, it fails at the Softmax
    (pytester.path / "accuracy_attn.yaml").unlink()
    before = _run(pytester, "HIGH_PRECISION | keep_dtype(['scores', 'attn', 'mix'])", imports)
    before.assert_outcomes(failed=1)
    assert "first failure in graph order: attn (#4)" in before.stdout.str()


def test_float16_rounding_further_up_gets_the_caveat_and_the_diagnosis_fixes_it(pytester):
    _setup(pytester, embed=True)
    run = _run(pytester, '"high_precision"')
    run.assert_outcomes(failed=1)
    hint = _hint(run.stdout.str())
    assert KEPT_TOO in hint and MAY_FAIL in hint, hint
    expr, yaml, imports = MODES.search(hint).groups()
    pytester.makefile(".yaml", accuracy_attn=SUITE.format(yaml=yaml))
    pasted = _run(pytester, expr, imports)  # as the caveat warns
    pasted.assert_outcomes(failed=2)
    # the failure blocks' verdict lines (under CI the short summary repeats them)
    assert sum(line.startswith("accuracy FAILED: ") and line.endswith(
        "first failure in graph order: attn (#5)") for line in pasted.stdout.lines) == 2
    (pytester.path / "accuracy_attn.yaml").unlink()
    diagnosed = _run(pytester, '"high_precision"', "", "--accuracy-diagnose")
    diagnosed.assert_outcomes(failed=1)
    expr, yaml, imports = FIX.search(diagnosed.stdout.str()).groups()
    pytester.makefile(".yaml", accuracy_attn=SUITE.format(yaml=yaml))
    _run(pytester, expr, imports).assert_outcomes(passed=2)


def test_one_op_kept_too_is_worded_in_the_singular():
    """Audit 36 B F7: "Unsqueeze_1 kept too: float16 in this run, they compute ..."."""
    from pytest_ascend_accuracy.report.overflow_feeds import producers_reason

    assert producers_reason({"Unsqueeze_1": "Conv_2"}, None) == (
        "; Unsqueeze_1 kept too: float16 in this run, it computes the operands of Conv_2, whose "
        "values pass 65504, where its rounding is magnified")

"""Where a float16-range keep list keeps the ops before a quantiser (``report.requant_reads``),
and where it says it may still fail instead (review RK of audit 36). Dynamically quantised layers
of onnxruntime's ``quantize_dynamic`` shape (``DynamicQuantizeLinear -> ConvInteger -> Cast ->
Mul(Mul(x_scale, w_scale)) -> Add -> Relu``) or with a QuantizeLinear of a computed scale, an
overflow past 65504 in layer 2; each printed list pasted verbatim.

- K3: at the default cosine check the 13-op list without layer 1 passes pasted, and is what is
  printed (the walk had made it 19; a max_abs check's 19 stay: the other test file).
- K1: an overflow only below -65504 (the Relu turns it to 0: layer 3's quantiser is not kept),
  and a QuantizeLinear (int8 codes, never a kept row): the list fails pasted, so the hint says
  it may still fail, and the high precision it offers passes.
- K2: a side branch joined into a kept quantiser's input: its ops are kept too, and the list
  passes pasted."""
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

KEEP = re.compile(r"^  modes=\[(keep_dtype\(.+\))\]\n    YAML: modes: \[(.+)\]$", re.M)
TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy{imports}


@accuracy({check}{modes})
def test_quant(ascend_model, golden_dump, check_accuracy):
    inputs = {{"x": np.random.default_rng(0).uniform(-1, 1, (1, 16, 8, 8)).astype(np.float32)}}
    actual = ascend_model("models/q.onnx").run(inputs, dump=True)
    check_accuracy(actual, golden_dump("models/q.onnx", inputs))
'''
MAY_FAIL = "pasted, the list may still fail: l3_quant, which the list does not keep, rounds"


def _inits(p, c_out, w_max, w_scale, rng, w_factor=1.0):
    w = rng.integers(-w_max, w_max + 1, (c_out, 16, 3, 3))
    return [numpy_helper.from_array((w * w_factor).astype(np.int8), p + "w_q"),
            numpy_helper.from_array(np.array(0, np.int8), p + "w_zp"),
            numpy_helper.from_array(np.array(0, np.int8), p + "x_zp"),
            numpy_helper.from_array(np.array(127, np.float32), p + "qmax"),
            numpy_helper.from_array(np.array(w_scale, np.float32), p + "w_scale"),
            numpy_helper.from_array((rng.standard_normal((1, c_out, 1, 1)) * 0.3).astype(
                np.float32), p + "bias")]


def _layer(p, src, c_out, w_max, w_scale, rng, ql=False, w_factor=1.0):
    """One quantised 3x3 Conv, its nodes named ``{p}quant``, ``{p}cast``, ...: a
    DynamicQuantizeLinear, or (``ql``) ``QuantizeLinear(x, ReduceMax(Abs(x)) / 127, 0)``."""
    if ql:
        quant = [helper.make_node("Abs", [src], [p + "abs"], name=p + "abs"),
                 helper.make_node("ReduceMax", [p + "abs"], [p + "amax"], name=p + "amax",
                                  keepdims=0),
                 helper.make_node("Div", [p + "amax", p + "qmax"], [p + "x_scale"],
                                  name=p + "x_scale_div"),
                 helper.make_node("QuantizeLinear", [src, p + "x_scale", p + "x_zp"], [p + "xq"],
                                  name=p + "quant")]
        zp = p + "x_zp"
    else:
        quant = [helper.make_node("DynamicQuantizeLinear", [src],
                                  [p + "xq", p + "x_scale", p + "zp"], name=p + "quant")]
        zp = p + "zp"
    nodes = quant + [
        helper.make_node("Mul", [p + "x_scale", p + "w_scale"], [p + "scale"],
                         name=p + "scales_mul"),
        helper.make_node("ConvInteger", [p + "xq", p + "w_q", zp, p + "w_zp"], [p + "acc"],
                         name=p + "conv", pads=[1, 1, 1, 1]),
        helper.make_node("Cast", [p + "acc"], [p + "accf"], name=p + "cast", to=TensorProto.FLOAT),
        helper.make_node("Mul", [p + "accf", p + "scale"], [p + "scaled"], name=p + "dequant"),
        helper.make_node("Add", [p + "scaled", p + "bias"], [p + "biased"], name=p + "bias_add"),
        helper.make_node("Relu", [p + "biased"], [p + "out"], name=p + "relu")]
    return nodes, _inits(p, c_out, w_max, w_scale, rng, w_factor)


def _model(path, ql=False, w2_factor=1.0, side=None):
    """Layer 1 small, layer 2's accumulator past 65504 (its weights times ``w2_factor``), layer
    3 requantising it; ``side``: a small layer ``s1_`` reading x too (its weight scale), added
    into layer 3's input by ``join``."""
    rng = np.random.default_rng(1)
    n1, i1 = _layer("l1_", "x", 16, 2, 3e-2, rng, ql)
    n2, i2 = _layer("l2_", "l1_out", 16, 127, 0.2, rng, ql, w2_factor)
    src, extra, extra_i = "l2_out", [], []
    if side is not None:
        extra, extra_i = _layer("s1_", "x", 16, 2, side, rng)
        extra.append(helper.make_node("Add", ["l2_out", "s1_out"], ["j"], name="join"))
        src = "j"
    n3, i3 = _layer("l3_", src, 8, 127, 1e-2, rng, ql)
    graph = helper.make_graph(
        n1 + n2 + extra + n3 + [helper.make_node("Identity", ["l3_out"], ["y"], name="out")], "q",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])],
        initializer=i1 + i2 + extra_i + i3)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def _run(pytester, check, modes=""):
    pytester.makepyfile(test_quant=TEST.format(
        check=check, modes=f", modes=[{modes}]" if modes else "",
        imports=", keep_dtype, HIGH_PRECISION" if modes else ""))
    return pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly", "-W", "ignore")


def _hint(pytester, check, **model):
    (pytester.path / "models").mkdir()
    _model(pytester.path / "models" / "q.onnx", **model)
    run = _run(pytester, check)
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    block = text[text.index("next step:"):]
    hint = block[:block.index("\n\n")] if "\n\n" in block else block
    return hint, eval(KEEP.search(hint).group(1)[len("keep_dtype("):-1])


def test_at_a_cosine_check_the_ops_before_an_added_quantiser_are_not_added(pytester):
    hint, names = _hint(pytester, "threshold=0.99")
    assert names[-2:] == ["l2_scales_mul", "l2_quant"] and len(names) == 13, names
    assert "l1_" not in hint and "may still fail" not in hint, hint
    _run(pytester, "threshold=0.99", f"keep_dtype({names!r})").assert_outcomes(passed=1)


def _may_fail_and_high_precision_passes(pytester, check, hint, names):
    assert MAY_FAIL in hint and "where it still fails, run with --accuracy-diagnose" in hint, hint
    assert "  or modes=[HIGH_PRECISION]\n" in hint, hint
    pasted = _run(pytester, check, f"keep_dtype({names!r})")
    pasted.assert_outcomes(failed=1)
    assert re.search(r"max_abs +\d+\.\d+ > 0\.25 \(per_op 'out'\)", pasted.stdout.str())
    _run(pytester, check, "HIGH_PRECISION").assert_outcomes(passed=1)


def test_an_overflow_below_minus_65504_says_the_unkept_quantiser_may_fail_it(pytester):
    check = "threshold=0.99, per_op={'out': {'max_abs': 0.25}}"
    hint, names = _hint(pytester, check, w2_factor=0.45)
    assert "l3_quant" not in names and "l2_relu" not in names, names
    _may_fail_and_high_precision_passes(pytester, check, hint, names)


def test_a_quantize_linear_after_the_kept_ops_says_the_list_may_fail(pytester):
    check = "threshold=0.99, per_op={'out': {'max_abs': 0.25}}"
    hint, names = _hint(pytester, check, ql=True)
    assert "l2_cast" in names and "l3_quant" not in names, names
    _may_fail_and_high_precision_passes(pytester, check, hint, names)


def test_a_branch_joined_into_a_kept_quantisers_input_is_kept_and_the_list_passes(pytester):
    check = "threshold=0.99, per_op={'out': {'max_abs': 2.0}}"
    hint, names = _hint(pytester, check, side=4.8)
    assert ("s1_relu, s1_bias_add, s1_dequant, ... kept too: the kept l3_quant rounds join's "
            "output to integer codes") in hint, hint
    assert "may still fail" not in hint and {"join", "l3_quant", "s1_quant"} <= set(names), names
    _run(pytester, check, f"keep_dtype({names!r})").assert_outcomes(passed=1)

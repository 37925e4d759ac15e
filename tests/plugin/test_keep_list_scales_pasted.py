"""A float16-range keep list keeps the ops making a dynamically quantised layer's scale where the
list keeps the Mul applying it (``report.operand_makers``). IMG.LY's ISNet, quantised by
onnxruntime's ``quantize_dynamic``, dequantises each ConvInteger as ``Mul(Cast(acc),
Mul(x_scale, w_scale))``; its accumulator's Cast passes 65504, and the hint kept the Cast and the
842 ops its Inf runs through, but not the scale's ``Mul`` nor the DynamicQuantizeLinear making
``x_scale``: pasted, the list failed at the matte (max_abs 0.097 > 1/255; audit 35).

Two models of that structure, ``x -> DynamicQuantizeLinear -> ConvInteger (int8 weights) ->
Cast(float) -> Mul(Mul(x_scale, w_scale)) -> Add(bias) -> Relu``, the Cast past 65504:

- ``tiny``: one layer, its scale product 7.8e-8 (below float16's smallest normal: float16 holds
  6.0e-8). The list printed before (cast, dequant, bias_add, relu), pasted, fails at bias_add
  (float32, cosine 0.992564 < 0.999: the kept Mul took the ruined scale).
- ``requant``: two layers, the scale product 7.8e-5 (normal), the second layer's
  DynamicQuantizeLinear (kept: the first layer's Inf runs through it) requantising what the first
  computes: float16's rounding of the scale moves codes there. The list printed before (every op
  the Inf runs through) fails pasted at the output (max_abs 0.307 > 1e-3); with the scale's Mul
  kept but not the DynamicQuantizeLinear making x_scale it fails the same (0.304).

The hint's list now keeps both; pasted, in Python and in YAML, it passes."""
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

#: the hint's keep list, in Python and in YAML (high precision, offered after it, aside)
KEEP = re.compile(r"^  modes=\[(keep_dtype\(.+\))\]\n    YAML: modes: \[(.+)\]$", re.M)

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy{imports}


@accuracy({check}{modes})
def test_quant(ascend_model, golden_dump, check_accuracy):
    rng = np.random.default_rng(0)
    inputs = {{"x": rng.uniform(-1, 1, (1, 16, 8, 8)).astype(np.float32)}}
    actual = ascend_model("models/q.onnx").run(inputs, dump=True)
    check_accuracy(actual, golden_dump("models/q.onnx", inputs))
'''
SUITE = '''
models:
  - name: q
    model: models/q.onnx
{check}    inputs: {{seed: 0}}
    modes: [{yaml}]
'''
TINY = "threshold=0.999"
REQUANT = "threshold=0.99, per_op={'out': {'max_abs': 0.001}}"
YAML_CHECKS = {TINY: "    threshold: 0.999\n",
               REQUANT: "    threshold: 0.99\n    per_op: {out: {max_abs: 0.001}}\n"}


def _layer(p, src, c_in, c_out, w_scale, rng, quant):
    """One dynamically quantised Conv as onnxruntime's quantize_dynamic writes it; its nodes
    named ``quant`` (the DynamicQuantizeLinear) and ``{p}scales_mul``, ``{p}cast``, ..."""
    inits = [numpy_helper.from_array(rng.integers(-127, 128, (c_out, c_in, 3, 3)).astype(
                 np.int8), p + "w_q"),
             numpy_helper.from_array(np.array(0, np.int8), p + "w_zp"),
             numpy_helper.from_array(np.array(w_scale, np.float32), p + "w_scale"),
             numpy_helper.from_array((rng.standard_normal((1, c_out, 1, 1)) * (
                 0.005 if w_scale < 1e-4 else 0.5)).astype(np.float32), p + "bias")]
    nodes = [helper.make_node("DynamicQuantizeLinear", [src], [p + "xq", p + "x_scale", p + "zp"],
                              name=quant),
             helper.make_node("Mul", [p + "x_scale", p + "w_scale"], [p + "scale"],
                              name=p + "scales_mul"),
             helper.make_node("ConvInteger", [p + "xq", p + "w_q", p + "zp", p + "w_zp"],
                              [p + "acc"], name=p + "conv", pads=[1, 1, 1, 1]),
             helper.make_node("Cast", [p + "acc"], [p + "accf"], name=p + "cast",
                              to=TensorProto.FLOAT),
             helper.make_node("Mul", [p + "accf", p + "scale"], [p + "scaled"],
                              name=p + "dequant"),
             helper.make_node("Add", [p + "scaled", p + "bias"], [p + "biased"],
                              name=p + "bias_add"),
             helper.make_node("Relu", [p + "biased"], [p + "out"], name=p + "relu")]
    return nodes, inits


def _model(path, requant=False):
    """``tiny``: one layer (w_scale 1e-5) and a side branch the list leaves alone; ``requant``:
    two layers (w_scale 1e-2), the second one's DynamicQuantizeLinear named ``requant``."""
    rng = np.random.default_rng(1)
    if requant:
        n1, i1 = _layer("l1_", "x", 16, 16, 1e-2, rng, "quant")
        n2, i2 = _layer("l2_", "l1_out", 16, 8, 1e-2, rng, "requant")
        nodes, inits = n1 + n2 + [helper.make_node("Identity", ["l2_out"], ["y"], name="out")], \
            i1 + i2
        outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])]
    else:
        nodes, inits = _layer("", "x", 16, 8, 1e-5, rng, "quant")
        nodes[-1].output[0] = "y"
        inits.append(numpy_helper.from_array(np.array(0.5, np.float32), "half_c"))
        nodes += [helper.make_node("Mul", ["x", "half_c"], ["xh"], name="half"),
                  helper.make_node("Sigmoid", ["xh"], ["z"], name="gate")]
        outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8]),
                   helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 16, 8, 8])]
    graph = helper.make_graph(
        nodes, "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
        outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def _file(check, modes="", imports=""):
    return TEST.format(check=check, modes=f", modes=[{modes}]" if modes else "",
                       imports=f", {imports}" if imports else "")


def _run(pytester, check, modes="", imports=""):
    pytester.makepyfile(test_quant=_file(check, modes, imports))
    return pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly", "-W", "ignore")


def _block(text):
    block = text[text.index("next step:"):]
    return block[:block.index("\n\n")] if "\n\n" in block else block


def _pasted_passes(pytester, check, hint):
    """The hint's modes line and its YAML form, pasted verbatim: both pass."""
    expr, yaml = KEEP.search(hint).groups()
    pytester.makefile(".yaml", accuracy_q=SUITE.format(check=YAML_CHECKS[check], yaml=yaml))
    pasted = _run(pytester, check, expr, "keep_dtype")
    pasted.assert_outcomes(passed=2)


def test_a_scale_below_float16s_normals_is_kept_with_the_ops_making_it(pytester):
    (pytester.path / "models").mkdir()
    _model(pytester.path / "models" / "q.onnx")
    run = _run(pytester, TINY)
    run.assert_outcomes(failed=1)
    hint = _block(run.stdout.str())
    assert ("scales_mul, quant kept too: dequant multiplies the kept values by scales_mul's "
            "output, which they make in float16 in this run (golden |7.84e-08|, below float16's "
            "smallest normal: float16 keeps few of its bits)") in hint, hint
    assert ("  modes=[keep_dtype(['cast', 'dequant', 'bias_add', 'relu', 'scales_mul', "
            "'quant'])]") in hint, hint
    # the list printed before, pasted: the kept Mul takes the ruined scale
    before = _run(pytester, TINY, "keep_dtype(['cast', 'dequant', 'bias_add', 'relu'])",
                  "keep_dtype")
    before.assert_outcomes(failed=1)
    assert "first failure in graph order: bias_add" in before.stdout.str()
    assert re.search(r"cosine +0\.99\d+ < 0\.999", before.stdout.str())
    _pasted_passes(pytester, TINY, hint)


def test_a_normal_scale_is_kept_where_a_kept_quantiser_requantises_the_product(pytester):
    (pytester.path / "models").mkdir()
    _model(pytester.path / "models" / "q.onnx", requant=True)
    run = _run(pytester, REQUANT)
    run.assert_outcomes(failed=1)
    hint = _block(run.stdout.str())
    assert ("l1_scales_mul, quant kept too: l1_dequant multiplies the kept values by "
            "l1_scales_mul's output, which they make in float16 in this run, and the kept "
            "requant requantises the product, where float16's rounding of it (2**-12) moves "
            "whole code steps") in hint, hint
    expr = KEEP.search(hint).group(1)
    names = eval(expr[len("keep_dtype("):-1])
    assert names[-2:] == ["l1_scales_mul", "quant"], names
    # the list printed before, and with the scale's Mul alone added: both fail pasted
    for left in (2, 1):
        before = _run(pytester, REQUANT, f"keep_dtype({names[:-left]!r})", "keep_dtype")
        before.assert_outcomes(failed=1)
        assert re.search(r"max_abs +0\.3\d+ > 0\.001 \(per_op 'out'\)", before.stdout.str())
    _pasted_passes(pytester, REQUANT, hint)

"""AtcFusionWarning names the pass that fused the op from the converter's record (the emulator's
plan, ``PlannedOp.rules``), not from the golden's op types, which are empty (review RF F4): a
MatMul+Mul is ATbeMatmulElemwiseFusionPass's UB fusion (it read TbeCommonRules0FusionPass, the
Conv rule), an erf Gelu GeluFusionPass, a Conv+BatchNormalization ConvBatchnormFusionPass (both
read "ATC's fusion"); and a folded BatchNormalization is not said to compute inner values in
float32: the Conv's own output is what an unfused run computes, and overflows."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TEST = """
import numpy as np
import pytest
from pytest_ascend_accuracy import accuracy

SHAPES = {shapes!r}


@pytest.mark.parametrize("name", sorted(SHAPES))
@accuracy(threshold=0.99)
def test_m(ascend_model, golden_dump, check_accuracy, accuracy_inputs, name):
    m = f"models/{{name}}.onnx"
    inputs = accuracy_inputs(m, inputs={{"x": np.ones(SHAPES[name], np.float32)}})
    check_accuracy(ascend_model(m).run(inputs), golden_dump(m, inputs))
"""


def _save(path, name, nodes, inits, x_shape, y_shape):
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, x_shape)], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, y_shape)], [numpy_helper.from_array(
                np.asarray(v, np.float32), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path / f"{name}.onnx"))


def _models(path):
    """Each model's inner value passes 65504 on an input of ones; its output does not."""
    # MatMul reaching 16 * 7000 = 1.12e5, then scaled by 1e-3 (UB-fused Mul)
    _save(path, "mm_scale", [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
                             helper.make_node("Mul", ["m", "k"], ["y"], name="scale")],
          {"w": np.full((16, 4), 7000.0), "k": 1e-3}, [2, 16], [2, 4])
    # Conv reaching 27 * 3000 = 8.1e4 (inside: 3x3x3 window of ones), BN scale 1e-3
    _save(path, "conv_bn", [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "b", "mu", "var"], ["y"], name="bn")],
        {"w": np.full((2, 3, 3, 3), 3000.0), "s": np.full(2, 1e-3), "b": np.zeros(2),
         "mu": np.zeros(2), "var": np.ones(2)}, [1, 3, 6, 6], [1, 2, 6, 6])
    # erf Gelu of x * 40000: its x * (1 + erf) reaches 8e4, the output 4e4 (scaled down after)
    _save(path, "gelu", [
        helper.make_node("Mul", ["x", "big"], ["h"], name="lift"),
        helper.make_node("Div", ["h", "r2"], ["hd"], name="gdiv"),
        helper.make_node("Erf", ["hd"], ["e"], name="gerf"),
        helper.make_node("Add", ["e", "one"], ["e1"], name="gadd"),
        helper.make_node("Mul", ["h", "e1"], ["hm"], name="gmul"),
        helper.make_node("Mul", ["hm", "half"], ["g"], name="ghalf"),
        helper.make_node("Mul", ["g", "small"], ["y"], name="down")],
        {"big": 40000.0, "r2": 1.4142135, "one": 1.0, "half": 0.5, "small": 1e-3}, [2, 8], [2, 8])


def test_the_warning_names_the_pass_the_plan_recorded(pytester):
    pytester.mkdir("models")
    _models(pytester.path / "models")
    pytester.makepyfile(test_m=TEST.format(shapes={"mm_scale": (2, 16), "conv_bn": (1, 3, 6, 6),
                                                   "gelu": (2, 8)}))
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=3)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*AtcFusionWarning: model 'conv_bn': ConvBatchnormFusionPass folds conv..bn into Conv2D "
        "'conv': the BatchNormalization is folded into the Conv's weights, so the Conv's own "
        "output is never computed; the golden's conv reaches 8.1e+04, past float16's 65504: "
        "where ATC does not fuse them (*ConvBatchnormFusionPass is documented for *), its "
        "output is rounded to float16 and overflows, so this check proves nothing for it;*",
        "*AtcFusionWarning: model 'gelu': GeluFusionPass fuses gdiv..ghalf into Gelu 'gdiv' and "
        "computes its inner values in float32; the golden's gmul reaches 8e+04*",
        "*AtcFusionWarning: model 'mm_scale': ATbeMatmulElemwiseFusionPass fuses mm..scale into "
        "MatMulV2 'mmscale' and computes its inner values in float32; the golden's mm reaches "
        "1.12e+05*"])
    assert "TbeCommonRules0FusionPass" not in out and "ATC's fusion" not in out
    assert "conv_bn': ConvBatchnormFusionPass fuses" not in out

"""A check that passes only because a fusion computed an inner value past float16's range in
float32 says so (audit 36 B, F3: openWakeWord's hey_jarvis passed by default with its
hand-written LayerNorm's Pow at 1.178e5; with fusion off the Inf flipped an If's branch). The
warning names the op, its golden peak and the pass, and its mode pasted shows the unfused run
failing at that op. A LayerNorm whose eps constant breaks the pass's graph conditions is not
fused at all (backends/emulator/fusion_limits.py), so its default check fails there itself."""
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TEST = """
from pytest_ascend_accuracy import accuracy{imports}

M = "models/{name}.onnx"


@accuracy(threshold=0.99{modes})
def test_ln(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
"""


def layernorm_model(name: str, eps_shape=(1,)) -> onnx.ModelProto:
    """x * 800, then a hand-written LayerNorm over 64 values: the centred values reach ~400,
    their squares ~1.6e5 (past 65504); eps a Constant node of ``eps_shape``."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Mul", ["x", "k"], ["xs"], name="prescale"),
        helper.make_node("ReduceMean", ["xs"], ["mu"], name="mean", axes=[-1]),
        helper.make_node("Sub", ["xs", "mu"], ["d"], name="centre"),
        helper.make_node("Constant", [], ["two"], name="two_c",
                         value=numpy_helper.from_array(np.array(2.0, np.float32))),
        helper.make_node("Pow", ["d", "two"], ["d2"], name="square"),
        helper.make_node("ReduceMean", ["d2"], ["var"], name="variance", axes=[-1]),
        helper.make_node("Constant", [], ["eps"], name="eps_c", value=numpy_helper.from_array(
            np.full(eps_shape, 1e-5, np.float32))),
        helper.make_node("Add", ["var", "eps"], ["ve"], name="add_eps"),
        helper.make_node("Sqrt", ["ve"], ["sd"], name="root"),
        helper.make_node("Div", ["d", "sd"], ["n"], name="normalise"),
        helper.make_node("Mul", ["n", "gamma"], ["g"], name="scale"),
        helper.make_node("Add", ["g", "beta"], ["y"], name="shift"),
    ]
    inits = [numpy_helper.from_array(np.array(800.0, np.float32), "k"),
             numpy_helper.from_array((1 + 0.1 * rng.standard_normal(64)).astype(np.float32),
                                     "gamma"),
             numpy_helper.from_array((0.1 * rng.standard_normal(64)).astype(np.float32), "beta")]
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 64])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _project(pytester, name, eps_shape=(1,)):
    pytester.mkdir("models")
    onnx.save(layernorm_model(name, eps_shape), str(pytester.path / "models" / f"{name}.onnx"))


def test_a_pass_through_a_fused_overflow_warns_and_its_mode_pasted_fails(pytester):
    _project(pytester, "ln_overflow")
    pytester.makepyfile(test_ln=TEST.format(name="ln_overflow", imports="", modes=""))
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*test_ln.py:9: AtcFusionWarning: model 'ln_overflow': LayerNormFusionPass fuses "
        "mean..shift into LayerNorm 'mean' and computes its inner values in float32; the "
        "golden's square reaches 2.042e+05, past float16's 65504: where ATC does not fuse them "
        "(another chip or CANN version; LayerNormFusionPass is documented for Atlas A2 "
        "training/inference products only, *), this op overflows, so this check proves "
        "nothing for it; modes=[[]FUSION_OFF[]] shows the unfused run"])
    peak = float(re.search(r"square reaches (\S+),", out).group(1))
    assert 65504 < peak < 3e5
    printed = re.search(r"(modes=\[[^\]]*\]) shows the unfused run", out).group(1)

    # pasted as printed: the unfused run fails at the op the warning named
    pytester.makepyfile(test_ln=TEST.format(
        name="ln_overflow", imports="\nfrom pytest_ascend_accuracy import FUSION_OFF",
        modes=", " + printed))
    pasted = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly")
    pasted.assert_outcomes(failed=1)
    pasted.stdout.fnmatch_lines(["FAILED test_ln.py::test_ln[[]fusion_off[]] *first failing op "
                                 "square (NaN/Inf on one side*"])
    assert "AtcFusionWarning" not in pasted.stdout.str()  # nothing fused there


def test_an_eps_constant_the_pass_refuses_is_not_fused_so_the_default_check_fails(pytester):
    # eps of shape [1, 1]: neither the reference page's 1-D Const_0 nor canndev's "scalar or
    # [1]" (LayerNormONNXFusionPass): ATC leaves the ops apart and the square overflows
    _project(pytester, "ln_eps_2d", eps_shape=(1, 1))
    pytester.makepyfile(test_ln=TEST.format(name="ln_eps_2d", imports="", modes=""))
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED test_ln.py::test_ln [[]ln_eps_2d, default[]]: first failing op "
                                 "square (NaN/Inf on one side*"])
    assert "AtcFusionWarning" not in result.stdout.str()

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


#: the printed fix: Python with its import line, and the YAML spelling (review RF F6)
FIX = re.compile(r"(modes=\[.*?\]) \((from pytest_ascend_accuracy import [^;]*); YAML: "
                 r"(modes: \[.*\])\) shows the unfused run")


def _run(pytester, *args):
    return pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly", *args)


def test_a_pass_through_a_fused_overflow_warns_and_its_mode_pasted_fails(pytester):
    _project(pytester, "ln_overflow")
    pytester.makepyfile(test_ln=TEST.format(name="ln_overflow", imports="", modes=""))
    result = _run(pytester)
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*test_ln.py:9: AtcFusionWarning: model 'ln_overflow': LayerNormONNXFusionPass fuses "
        "mean..shift into LayerNorm 'mean' and computes its inner values in float32; the "
        "golden's square reaches 2.042e+05, past float16's 65504: where ATC does not fuse them "
        "(another chip or CANN version; LayerNormONNXFusionPass is documented for any product "
        "in canndev's layer_norm_onnx_fusion_pass.cpp (it checks none), the Ascend "
        "950PR/950DT only in its 2025 version *), this op overflows, so this check proves "
        "nothing for it; modes=[[]FUSION_OFF[]] (from pytest_ascend_accuracy import "
        "FUSION_OFF; YAML: modes: [[]fusion_off[]]) shows the unfused run"])
    peak = float(re.search(r"square reaches (\S+),", out).group(1))
    assert 65504 < peak < 3e5
    modes, imported, _ = FIX.search(out).groups()

    # pasted verbatim, its import line too: the unfused run fails at the op the warning named
    pytester.makepyfile(test_ln=TEST.format(name="ln_overflow", imports="\n" + imported,
                                            modes=", " + modes))
    pasted = _run(pytester)
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
    result.stdout.fnmatch_lines(["FAILED test_ln.py::test_ln [[]ln_eps_2d, default[]]: first "
                                 "failing op square (NaN/Inf on one side*"])
    assert "AtcFusionWarning" not in result.stdout.str()


def test_only_a_mode_whose_unfused_run_rounds_the_member_warns_and_its_paste_fails(pytester):
    # review RF F2: HIGH_PRECISION and force_fp32 run the unfused LayerNorm's ops in float32
    # (nothing overflows: their modes with fusion off pass); keep_dtype(['square']) keeps the
    # Pow in float32 but the variance's ReduceMean reads it in float16
    _project(pytester, "ln_overflow")
    modes = ", modes=[HIGH_PRECISION, keep_dtype(['square']), Mode(precision_mode='force_fp32')]"
    pytester.makepyfile(test_ln=TEST.format(
        name="ln_overflow", imports=", HIGH_PRECISION, Mode, keep_dtype", modes=modes))
    result = _run(pytester)
    result.assert_outcomes(passed=3)
    out = result.stdout.str()
    assert out.count("AtcFusionWarning: model") == 1, out
    printed, imported, _ = FIX.search(out).groups()
    assert printed == "modes=[FUSION_OFF | keep_dtype(['square'])]"
    pytester.makepyfile(test_ln=TEST.format(name="ln_overflow", imports="\n" + imported,
                                            modes=", " + printed))
    pasted = _run(pytester)
    pasted.assert_outcomes(failed=1)
    pasted.stdout.fnmatch_lines(["FAILED test_ln.py::test_ln*first failing op *NaN/Inf*"])


def test_no_advice_where_the_tests_own_modes_run_it_unfused(pytester):
    # review RF F6 c: modes=[DEFAULT, FUSION_OFF]: the fusion_off run judges the unfused values
    # itself (and fails here), so the default run's check says nothing of them
    _project(pytester, "ln_overflow")
    pytester.makepyfile(test_ln=TEST.format(
        name="ln_overflow", imports=", DEFAULT, FUSION_OFF", modes=", modes=[DEFAULT, FUSION_OFF]"))
    result = _run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    assert "AtcFusionWarning" not in result.stdout.str()


SUITE = """
defaults:
  threshold: 0.99
models:
  - model: models/ln_overflow.onnx
    inputs: {{seed: 0}}
{extra}"""


def test_a_yaml_item_prints_the_yaml_spelling_and_it_pasted_fails(pytester):
    # review RF F6 a: the YAML spelling, pasted into the suite as printed
    _project(pytester, "ln_overflow")
    pytester.makefile(".yaml", accuracy_ln=SUITE.format(extra=""))
    result = _run(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["accuracy_ln.yaml::ln_overflow[[]default[]]",
                                 "*AtcFusionWarning: model 'ln_overflow'*"])
    yaml_modes = FIX.search(result.stdout.str()).group(3)
    assert yaml_modes == "modes: [fusion_off]"
    pytester.makefile(".yaml", accuracy_ln=SUITE.format(extra=f"    {yaml_modes}\n"))
    pasted = _run(pytester)
    pasted.assert_outcomes(failed=1)
    pasted.stdout.fnmatch_lines(["FAILED *first failing op square (NaN/Inf on one side*"])


BASELINE_TEST = """
from pytest_ascend_accuracy import accuracy

M = "models/ln_overflow.onnx"


@accuracy(threshold=0.99, max_drop=0.002)
def test_base(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
"""


def test_under_w_error_a_baseline_failure_keeps_its_text_with_the_warning_appended(pytester):
    # review RF F3: the AtcFusionWarning was raised in place of "baseline ... did not exist"
    _project(pytester, "ln_overflow")
    pytester.makepyfile(test_base=BASELINE_TEST)
    result = _run(pytester, "-W", "error")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "accuracy baseline accuracy-baselines/models/ln_overflow/default.yaml did not exist: "
        "wrote it from this run*",
        "Check it in and run the test again*",
        "AtcFusionWarning: model 'ln_overflow': LayerNormONNXFusionPass fuses mean..shift*"])
    assert "E   pytest_ascend_accuracy.report.fused_overflow.AtcFusionWarning" not in out


def test_no_warning_where_the_overflowing_member_and_its_consumer_are_kept(pytester):
    """Review RX X1: keeping the Pow and the ReduceMean reading it (the plugin's own printed
    keep list) still warned "this op overflows", counting any later float16 member as its
    consumer, while its printed mode, pasted, passed."""
    _project(pytester, "ln_overflow")
    keep = "keep_dtype(['square', 'variance', 'add_eps', 'root'])"
    pytester.makepyfile(test_ln=TEST.format(name="ln_overflow", imports=", keep_dtype",
                                            modes=f", modes=[{keep}]"))
    result = _run(pytester)
    result.assert_outcomes(passed=1)
    assert "AtcFusionWarning" not in result.stdout.str()
    pytester.makepyfile(test_ln=TEST.format(  # its mode with fusion off passes: no overflow
        name="ln_overflow", imports=", FUSION_OFF, keep_dtype",
        modes=f", modes=[{keep} | FUSION_OFF]"))
    _run(pytester).assert_outcomes(passed=1)

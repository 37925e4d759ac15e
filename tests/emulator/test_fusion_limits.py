"""The emulator fuses a LayerNorm or a MatMul+Add only where the graph meets the conditions
CANN documents for the pass (backends/emulator/fusion_limits.py cites them): a pattern ATC
leaves apart runs apart here too, each op rounded to float16 (audit 36 B, F3)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from pytest_ascend_accuracy.backends.emulator.rewrite import emulate_graph  # noqa: E402
from pytest_ascend_accuracy.core.modes import DEFAULT  # noqa: E402


def _ln(*, eps=np.array([1e-5], np.float32), keepdims=1, gamma_shape=(8,), axes=(-1,)):
    nodes = [helper.make_node("ReduceMean", ["x"], ["mu"], name="mean", axes=list(axes),
                              keepdims=keepdims),
             helper.make_node("Sub", ["x", "mu"], ["d"], name="centre")]
    nodes.append(helper.make_node("Pow", ["d", "two"], ["d2"], name="square"))
    nodes += [helper.make_node("ReduceMean", ["d2"], ["var"], name="variance", axes=list(axes),
                               keepdims=keepdims),
              helper.make_node("Add", ["var", "eps"], ["ve"], name="add_eps"),
              helper.make_node("Sqrt", ["ve"], ["sd"], name="root"),
              helper.make_node("Div", ["d", "sd"], ["n"], name="normalise"),
              helper.make_node("Mul", ["n", "gamma"], ["g"], name="scale"),
              helper.make_node("Add", ["g", "beta"], ["y"], name="shift")]
    inits = [numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(eps, "eps"),
             numpy_helper.from_array(np.ones(gamma_shape, np.float32), "gamma"),
             numpy_helper.from_array(np.zeros(gamma_shape, np.float32), "beta")]
    graph = helper.make_graph(nodes, "ln", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [2, 8])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _groups(model):
    _, plan = emulate_graph(model, DEFAULT)
    return {op.name: op.original_names for op in plan.ops}


ALL = ("mean", "centre", "square", "variance", "add_eps", "root", "normalise", "scale", "shift")


@pytest.mark.parametrize("why, kwargs", [
    ("eps of rank 2", dict(eps=np.full((1, 1), 1e-5, np.float32))),
    ("eps of 8 values", dict(eps=np.full(8, 1e-5, np.float32))),
    ("eps above 0.1", dict(eps=np.array([0.5], np.float32))),
    ("keep_dims false", dict(keepdims=0, gamma_shape=(8,))),
])
def test_a_layernorm_breaking_a_documented_condition_runs_unfused(why, kwargs):
    groups = _groups(_ln(**kwargs))
    assert all(len(members) == 1 for members in groups.values()), (why, groups)


def test_gamma_of_another_rank_leaves_the_scale_and_shift_out():
    assert _groups(_ln())["mean"] == ALL  # every condition met: fused whole
    # a 0-D eps (torch's export, openWakeWord's hey_jarvis): canndev's ONNX pass takes a
    # "scalar or [1]" constant
    assert _groups(_ln(eps=np.array(1e-5, np.float32)))["mean"] == ALL
    # gamma [1, 8] for one normalised axis: canndev's CheckShape refuses the pattern with gamma
    # and beta; the one ending at the Div still fuses
    groups = _groups(_ln(gamma_shape=(1, 8)))
    assert groups["mean"] == ALL[:7]
    assert groups["scale"] == ("scale",) and groups["shift"] == ("shift",)


def _matmul_bias(bias):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
             helper.make_node("Add", ["m", "b"], ["y"], name="bias")]
    graph = helper.make_graph(nodes, "mmb", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [2, 8])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.ones((8, 4), np.float32), "w"),
         numpy_helper.from_array(bias, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _rules(model):
    _, plan = emulate_graph(model, DEFAULT)
    return {r for op in plan.ops for r in op.rules}


def test_matmul_bias_fuses_a_1d_bias_of_the_output_width_only():
    assert "MatMulBiasAddFusionPass" in _rules(_matmul_bias(np.ones(4, np.float32)))
    # "one of the two inputs must have a dimension of 1", "broadcast is not supported" (the
    # Add may still join the MatMul by UB fusion, as an element-wise op)
    for bias in (np.ones((1, 4), np.float32), np.ones(1, np.float32)):
        assert "MatMulBiasAddFusionPass" not in _rules(_matmul_bias(bias)), bias.shape


def test_an_axis_written_0_is_refused_as_the_2025_page_says():
    # "涉及第0维时应使用对应的负轴表示，不使用值为0的轴" (ops-nn LayerNormONNXFusionPass.md);
    # canndev's ``axes[i] > 0 ? a : a + n`` makes it n, out of range (review RF F7 a)
    assert _groups(_ln(axes=(1,)))["mean"] == ALL  # positive, not 0: fused
    groups = _groups(_ln(axes=(0, 1), gamma_shape=(2, 8)))
    assert all(len(members) == 1 for members in groups.values()), groups
    assert _groups(_ln(axes=(-2, -1), gamma_shape=(2, 8)))["mean"] == ALL  # the same, negative


def test_layernorm_is_switched_off_by_either_name_and_the_switch_file_names_both():
    # review RF F5: ATC fuses an ONNX LayerNorm by LayerNormONNXFusionPass: a switch file
    # naming only LayerNormFusionPass left it fused on a device while the emulator unfused it
    import json

    from pytest_ascend_accuracy.core.modes import Mode

    for name in ("LayerNormFusionPass", "LayerNormONNXFusionPass"):
        mode = Mode(fusion_rules_off=(name,))
        _, plan = emulate_graph(_ln(), mode)
        assert all(len(op.original_names) == 1 for op in plan.ops), name
        switch = json.loads(mode.config_files()["fusion_switch.cfg"])["Switch"]
        assert switch == {"GraphFusion": {"LayerNormFusionPass": "off",
                                          "LayerNormONNXFusionPass": "off"}}, name
    gelu_only = json.loads(Mode(fusion_rules_off=("GeluFusionPass",)).config_files()[
        "fusion_switch.cfg"])["Switch"]
    assert gelu_only == {"GraphFusion": {"GeluFusionPass": "off"}}

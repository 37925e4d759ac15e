"""Which op a per_op/ignore entry naming an op inside an If's branch is told to name: the op a
run executes and a comparison judges, the outermost If that stays an operator (H110: silero_vad's
LSTM in If '.../decoder/If_1' named that If, which pasted was refused naming 'If_0'); an If a
conversion inlines (its condition known without inputs) is no operator: an op of its taken
branch is one of the main graph, taken, and one of the other branch is said never to run."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.op_catalogue import check_entry_names, model_ops
from pytest_ascend_accuracy.testing.models import nested_if_model


def _vi(name):
    return h.make_tensor_value_info(name, TP.FLOAT, [1, 8])


def nested_model(path):
    """x -> If 'outer' (sum > 0): then If 'inner' (max > 0.5): then 'deep' (x * 2), else
    Identity; else Identity."""
    inner = h.make_node(
        "If", ["big"], ["i_out"], name="inner",
        then_branch=h.make_graph([h.make_node("Mul", ["x", "two"], ["d_out"], name="deep")],
                                 "inner_then", [], [_vi("d_out")]),
        else_branch=h.make_graph([h.make_node("Identity", ["x"], ["ie"], name="inner_id")],
                                 "inner_else", [], [_vi("ie")]))
    then = h.make_graph([h.make_node("ReduceMax", ["x"], ["m"], name="max", keepdims=0),
                         h.make_node("Greater", ["m", "half"], ["big"], name="gt_half"), inner],
                        "outer_then", [], [_vi("i_out")])
    other = h.make_graph([h.make_node("Identity", ["x"], ["oe"], name="outer_id")],
                         "outer_else", [], [_vi("oe")])
    nodes = [h.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
             h.make_node("Greater", ["s", "zero"], ["pos"], name="gt_zero"),
             h.make_node("If", ["pos"], ["y"], name="outer", then_branch=then,
                         else_branch=other)]
    consts = [nh.from_array(np.array(v, np.float32), n)
              for n, v in (("zero", 0.0), ("half", 0.5), ("two", 2.0))]
    model = h.make_model(h.make_graph(nodes, "nested", [_vi("x")], [_vi("y")], consts),
                         opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))


def _refusal(model, entry):
    with pytest.raises(ConfigError) as info:
        check_entry_names(model_ops(model), {entry: 0.5}, [], "t")
    return str(info.value)


def test_an_op_two_ifs_deep_names_the_outer_if(tmp_path):
    nested_model(tmp_path / "nested.onnx")
    assert ("per_op entry 'deep' names an op inside the then_branch of If 'inner', within "
            "'outer', which a run executes and a comparison judges as one op: name 'outer'"
            in _refusal(str(tmp_path / "nested.onnx"), "deep"))
    check_entry_names(model_ops(str(tmp_path / "nested.onnx")), {"outer": 0.5}, [], "t")


def test_an_if_a_conversion_inlines_is_passed_over():
    """nested_if_model: 'wrap' (a constant condition) is inlined taking its then_branch, where
    If 'by_rank' stays an operator."""
    model = nested_if_model()
    assert ("per_op entry 'relu' names an op inside the then_branch of If 'by_rank', which a run "
            "executes and a comparison judges as one op: name 'by_rank'" in _refusal(model, "relu"))
    check_entry_names(model_ops(model), {"rank": 0.5, "by_rank": 0.5}, ["is_2d"], "t")
    assert ("per_op entry 'as_is' names an op inside the else_branch of If 'wrap', a branch a "
            "conversion drops: the If's condition is known without inputs and takes the other "
            "branch, so no run executes this op" in _refusal(model, "as_is"))

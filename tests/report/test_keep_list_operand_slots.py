"""The operand slots of ``report.operand_makers`` (review RD of audit 35): a Conv's or Gemm's
bias, which is only added, is never taken for an operand scaling the kept values, and a Div
says which side it divides. Models from ``onnx.helper``, rows as a compare gives them."""
from types import SimpleNamespace

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.compare.metrics import TensorMetrics
from pytest_ascend_accuracy.compare.rows import TensorCompare
from pytest_ascend_accuracy.report.operand_makers import makers_reason, operand_makers

NO_FAILURES = SimpleNamespace(failures=())
C = numpy_helper.from_array(np.array(1e3, np.float32), "c")
EPS = numpy_helper.from_array(np.array(1e-6, np.float32), "eps")


def _row(op, kind, peak, dtype="float16", slot="output:0"):
    return TensorCompare(order=0, op_name=op, op_type=kind, slot=slot, golden_name=op,
                         golden_slot=slot, dtype=dtype, golden_dtype="float32",
                         metrics=TensorMetrics(max_abs_golden=peak))


def _model(nodes, inits=()):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _bias_rows(last, kind):
    return [_row("big", "Mul", 1e5), _row("mean", "ReduceMean", 1.0),
            _row("bias_op", "Mul", 1e-6), _row(last, kind, 4e5)]


def test_a_conv_or_gemm_bias_is_only_added_and_adds_nothing():
    # the bias (input 2) golden 1e-6, below float16's normals: it moves the output by 6e-8 at
    # most; the walk added its Mul and the ReduceMean, saying the Conv multiplied by them
    conv = _model([helper.make_node("Mul", ["x", "c"], ["big"], name="big"),
                   helper.make_node("ReduceMean", ["x"], ["mean"], name="mean", axes=[0, 2, 3],
                                    keepdims=0),
                   helper.make_node("Mul", ["mean", "eps"], ["b"], name="bias_op"),
                   helper.make_node("Conv", ["big", "w", "b"], ["y"], name="conv")],
                  [numpy_helper.from_array(np.ones((4, 4, 1, 1), np.float32), "w"), C, EPS])
    found = operand_makers(NO_FAILURES, ["big", "conv"], _bias_rows("conv", "Conv"), conv)
    assert not found and found.stopped is None and makers_reason(found) == ""
    gemm = _model([helper.make_node("Flatten", ["x"], ["fx"], name="flat"),
                   helper.make_node("Mul", ["fx", "c"], ["big"], name="big"),
                   helper.make_node("ReduceMean", ["fx"], ["mean"], name="mean", axes=[0],
                                    keepdims=0),
                   helper.make_node("Mul", ["mean", "eps"], ["b"], name="bias_op"),
                   helper.make_node("Gemm", ["big", "wg", "b"], ["y"], name="gemm")],
                  [numpy_helper.from_array(np.ones((256, 256), np.float32), "wg"), C, EPS])
    assert not operand_makers(NO_FAILURES, ["big", "gemm"], _bias_rows("gemm", "Gemm"), gemm)
    # the same value as the Conv's weight (input 1) multiplies: its makers are kept
    conv.graph.node[3].input[:] = ["big", "b"]
    found = operand_makers(NO_FAILURES, ["big", "conv"], _bias_rows("conv", "Conv"), conv)
    assert list(found) == ["bias_op", "mean"]
    assert "conv multiplies the kept values by bias_op's output" in makers_reason(found)


def test_a_div_says_which_side_it_divides():
    model = _model([helper.make_node("Mul", ["x", "c"], ["big"], name="big"),
                    helper.make_node("Mul", ["x", "eps"], ["t"], name="t_op"),
                    helper.make_node("Div", ["t", "big"], ["y"], name="div")], [C, EPS])
    rows = [_row("big", "Mul", 1e5), _row("t_op", "Mul", 1e-6), _row("div", "Div", 1e-11)]
    found = operand_makers(NO_FAILURES, ["big", "div"], rows, model)
    assert list(found) == ["t_op"]
    assert "; t_op kept too: div divides t_op's output by the kept values, which it makes" \
        in makers_reason(found)
    model.graph.node[2].input[:] = ["big", "t"]
    assert "div divides the kept values by t_op's output" in makers_reason(
        operand_makers(NO_FAILURES, ["big", "div"], rows, model))

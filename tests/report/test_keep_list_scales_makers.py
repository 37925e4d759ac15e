"""``report.operand_makers``: which ops a float16-range keep list adds for a kept op that
multiplies a kept value by an operand the run rounds to float16, and what its reason says.
Models from ``onnx.helper``, rows as a compare gives them (the run's dtype, the golden's peak);
the plugin-level contract (the hint pasted passes) is
``tests/plugin/test_keep_list_scales_pasted.py``."""
from types import SimpleNamespace

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.compare.flush_chain import graph_producer, passing_chain
from pytest_ascend_accuracy.compare.golden_edges import graph_edges
from pytest_ascend_accuracy.compare.metrics import TensorMetrics
from pytest_ascend_accuracy.compare.rows import TensorCompare
from pytest_ascend_accuracy.report.operand_makers import makers_reason, operand_makers

NO_FAILURES = SimpleNamespace(failures=())


def _model(scale_chain=("scales_mul",), requant=False, maker="DynamicQuantizeLinear"):
    """x -> quant (``maker``) -> [scale_chain] -> dequant = Mul(cast(conv(...)), scale) -> bias_add
    -> relu (-> requant, a DynamicQuantizeLinear, where ``requant``)."""
    inits = [numpy_helper.from_array(np.ones((8, 4, 3, 3), np.int8), "w_q"),
             numpy_helper.from_array(np.array(1e-5, np.float32), "w_scale"),
             numpy_helper.from_array(np.zeros((1, 8, 1, 1), np.float32), "bias"),
             numpy_helper.from_array(np.array([1], np.int64), "shape1"),
             numpy_helper.from_array(np.ones((4, 4, 1, 1), np.float32), "w_f")]
    if maker == "DynamicQuantizeLinear":
        nodes = [helper.make_node(maker, ["x"], ["xq", "x_scale", "zp"], name="quant")]
    else:  # a Conv making the value the scale chain carries
        nodes = [helper.make_node("Conv", ["x", "w_f"], ["x_scale"], name="quant"),
                 helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "unused", "zp"],
                                  name="q2")]
    src = "x_scale"
    for op in scale_chain:
        if op == "scales_mul":
            nodes.append(helper.make_node("Mul", [src, "w_scale"], ["scale"], name=op))
            src = "scale"
        else:  # a Reshape handing it on
            nodes.append(helper.make_node("Reshape", [src, "shape1"], ["scale_r"], name=op))
            src = "scale_r"
    nodes += [helper.make_node("ConvInteger", ["xq", "w_q", "zp"], ["acc"], name="conv"),
              helper.make_node("Cast", ["acc"], ["accf"], name="cast", to=TensorProto.FLOAT),
              helper.make_node("Mul", ["accf", src], ["scaled"], name="dequant"),
              helper.make_node("Add", ["scaled", "bias"], ["biased"], name="bias_add"),
              helper.make_node("Relu", ["biased"], ["y"], name="relu")]
    if requant:
        nodes.append(helper.make_node("DynamicQuantizeLinear", ["y"], ["yq", "ys", "yz"],
                                      name="requant"))
    graph = helper.make_graph(
        nodes, "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


TYPES = {"quant": "DynamicQuantizeLinear", "scales_mul": "Mul", "reshape": "Reshape",
         "conv": "ConvInteger", "cast": "Cast", "dequant": "Mul", "bias_add": "Add",
         "relu": "Relu", "requant": "DynamicQuantizeLinear"}


def _row(op, peak, dtype="float16", slot="output:0"):
    return TensorCompare(order=0, op_name=op, op_type=TYPES.get(op, ""), slot=slot, golden_name=op,
                         golden_slot=slot, dtype=dtype, golden_dtype="float32",
                         metrics=TensorMetrics(max_abs_golden=peak))


def _rows(scale=7.8e-8, chain=("scales_mul",), maker_dtype="float16", requant=False):
    rows = [_row("quant", 255.0, "uint8"), _row("quant", 0.0078, maker_dtype, "output:1"),
            _row("quant", 128.0, "uint8", "output:2")]
    rows += [_row(op, scale) for op in chain]
    rows += [_row("conv", 1.9e5, "int32"), _row("cast", 1.9e5), _row("dequant", 0.015),
             _row("bias_add", 0.02), _row("relu", 0.02)]
    if requant:
        rows += [_row("requant", 255.0, "uint8"), _row("requant", 1e-4, "float32", "output:1")]
    return rows


KEPT = ["cast", "dequant", "bias_add", "relu"]


def test_a_scale_below_float16s_normals_keeps_the_ops_making_it():
    found = operand_makers(NO_FAILURES, KEPT, _rows(), _model())
    assert list(found) == ["scales_mul", "quant"] and found.stopped is None
    assert makers_reason(found) == (
        "; scales_mul, quant kept too: dequant multiplies the kept values by scales_mul's "
        "output, which they make in float16 in this run (golden |7.8e-08|, below float16's "
        "smallest normal: float16 keeps few of its bits)")


def test_a_scale_past_65504_keeps_them_too():
    found = operand_makers(NO_FAILURES, KEPT, _rows(scale=7e4), _model())
    assert list(found) == ["scales_mul", "quant"]
    assert "(golden |7e+04|, past 65504)" in makers_reason(found)


def test_a_normal_scale_is_kept_only_where_a_kept_quantiser_requantises_the_product():
    # 7.8e-5 is normal: float16 rounds it by 2**-12 at most, which nothing after it magnifies
    assert not operand_makers(NO_FAILURES, KEPT, _rows(scale=7.8e-5), _model())
    # a DynamicQuantizeLinear after it, left in float16: no kept one requantises the product
    model = _model(requant=True)
    rows = _rows(scale=7.8e-5, requant=True)
    assert not operand_makers(NO_FAILURES, KEPT, rows, model)
    found = operand_makers(NO_FAILURES, KEPT + ["requant"], rows, model)
    assert list(found) == ["scales_mul", "quant"]
    assert makers_reason(found).endswith(
        "scales_mul's output, which they make in float16 in this run, and the kept requant "
        "requantises the product, where float16's rounding of it (2**-12) moves whole code "
        "steps")


def test_nothing_is_added_where_no_kept_value_flows_into_the_op():
    # dequant kept without the cast feeding it: its float16 operands are the rounded values
    # rounded_upstream tells (no list confined to the failing ops restores them)
    assert not operand_makers(NO_FAILURES, ["dequant", "bias_add"], _rows(), _model())


def test_the_walk_goes_through_ops_handing_the_value_on_and_keeps_float16_ones_only():
    chain = ("scales_mul", "reshape")
    model = _model(chain)
    graph = graph_edges(model)
    assert graph_producer("dequant", "input:1", graph) == ("reshape", "output:0")
    assert passing_chain("dequant", "input:1", graph) == (
        [("reshape", "output:0"), ("scales_mul", "output:0")], ("quant", "output:1"))
    found = operand_makers(NO_FAILURES, KEPT, _rows(chain=chain), model)
    assert list(found) == ["reshape", "scales_mul", "quant"]
    # a maker the run outputs in float32 there (kept by the test's mode, say) rounds nothing
    found = operand_makers(NO_FAILURES, KEPT, _rows(chain=chain, maker_dtype="float32"), model)
    assert list(found) == ["reshape", "scales_mul"]
    # left out on purpose by the caller (output in float32 already): not added
    assert list(operand_makers(NO_FAILURES, KEPT, _rows(chain=chain), model,
                               left_out={"scales_mul"})) == ["reshape", "quant"]


def test_a_maker_no_list_keeps_is_said_and_the_fix_may_still_fail():
    model = _model(maker="Conv")
    rows = _rows() + [_row("q2", 0.0078, "float16", "output:1")]
    found = operand_makers(NO_FAILURES, KEPT, rows, model)
    assert list(found) == ["scales_mul"] and found.stopped == ("dequant", "quant", "Conv")
    assert makers_reason(found).endswith(
        "; pasted, the list may still fail: dequant multiplies kept values by an operand "
        "float16 rounds, made by quant (a Conv), which the list does not keep")


def test_a_golden_of_operand_files_tells_the_edges_where_no_model_does():
    # ``ascend-accuracy compare`` of the plugin's cached golden: no model recorded, the golden's
    # operand files name the ops feeding each (weights unlisted), the rows their types
    feeding = {"quant": [], "scales_mul": ["quant"], "conv": ["quant"], "cast": ["conv"],
               "dequant": ["cast", "scales_mul"], "bias_add": ["dequant"], "relu": ["bias_add"],
               "requant": ["relu"]}
    found = operand_makers(NO_FAILURES, KEPT, _rows(), None, feeding=lambda: feeding)
    assert list(found) == ["scales_mul", "quant"]
    rows = _rows(scale=7.8e-5, requant=True)
    found = operand_makers(NO_FAILURES, KEPT + ["requant"], rows, None, feeding=lambda: feeding)
    assert list(found) == ["scales_mul", "quant"] and "the kept requant" in makers_reason(found)


def test_nothing_is_added_where_the_edges_are_not_known():
    assert not operand_makers(NO_FAILURES, KEPT, _rows(), None)
    assert not operand_makers(NO_FAILURES, KEPT, _rows(), None, feeding=lambda: None)
    assert makers_reason(operand_makers(NO_FAILURES, KEPT, _rows(), None)) == ""

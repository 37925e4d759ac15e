"""keep_dtype of one member of a fusion, as ATC applies it (docs/formats.md, "keep_dtype and
fusion"): GE marks each parsed node it names before any fusion; a GraphFusion op inherits the
mark from any member (GraphPassUtil::InheritAttrFromOriNodes); dtypes are judged node by node
and UBFusion runs after, so a kept Relu is not fused with a MatMul that is not kept, and that
MatMul stays float16. The emulator and the fake ran a whole UB-fused MatMul+Relu in float32
when only the Relu was kept: a diagnosis printed keep_dtype {relu} for an overflowing MatMul.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.backends.emulator.fusion import build_units
from pytest_ascend_accuracy.backends.emulator.rewrite import emulate_graph
from pytest_ascend_accuracy.core.modes import DEFAULT, Mode, keep_dtype
from pytest_ascend_accuracy.testing.fake_om import FakeOm, plan_ops
from pytest_ascend_accuracy.testing.models import fused_matmul_add


def bigval():
    """x * 1e5 -> MatMul (the Cube op) -> Relu -> * 1e-5: the MatMul's output leaves float16."""
    inits = [numpy_helper.from_array(np.array([1e5], np.float32), "big"),
             numpy_helper.from_array(np.array([1e-5], np.float32), "small"),
             numpy_helper.from_array(np.ones((16, 8), np.float32), "w")]
    nodes = [helper.make_node("Mul", ["x", "big"], ["a"], name="scale_up"),
             helper.make_node("MatMul", ["a", "w"], ["c"], name="matmul/big"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Mul", ["r", "small"], ["y"], name="scale_down")]
    graph = helper.make_graph(
        nodes, "bigval", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _ops(mode, model=None):
    _, plan = emulate_graph(model or bigval(), mode)
    return {op.name: (op.original_names, op.precision) for op in plan.ops}


def test_a_kept_relu_is_not_ub_fused_and_the_matmul_stays_float16():
    assert _ops(DEFAULT)["matmul/bigrelu"] == (("matmul/big", "relu"), "fp16")
    ops = _ops(keep_dtype(["relu"]))
    assert ops["matmul/big"] == (("matmul/big",), "fp16")
    assert ops["relu"] == (("relu",), "fp32")
    ops = _ops(keep_dtype(["matmul/big"]))
    assert ops["matmul/big"] == (("matmul/big",), "fp32") and ops["relu"][1] == "fp16"
    # kept together, they fuse again and run in float32 whole
    assert _ops(keep_dtype(["matmul/big", "relu"]))["matmul/bigrelu"] == (
        ("matmul/big", "relu"), "fp32")
    # by type (the parser's), the same: OpType::Relu keeps the Relu alone
    assert _ops(keep_dtype(["OpType::Relu"]))["matmul/big"][1] == "fp16"
    # must_keep_origin_dtype ignores keep_dtype, as ATC does: nothing to split on
    origin = Mode(precision_mode="must_keep_origin_dtype", keep_dtype=("relu",))
    assert _ops(origin)["matmul/bigrelu"] == (("matmul/big", "relu"), "fp32")


def test_a_graph_fusion_inherits_keep_dtype_from_any_member():
    """MatMulBiasAddFusionPass is a GraphFusion: keeping the Add keeps the fused MatMul."""
    ops = _ops(keep_dtype(["fc/Add"]), fused_matmul_add())
    assert ops["fc/MatMul"] == (("fc/MatMul", "fc/Add"), "fp32")


def test_build_units_splits_a_ub_chain_only_across_kept_and_not_kept():
    graph = bigval().graph
    consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}

    def members(keeps):
        units, _ = build_units(graph, consts, fusion=True, keeps=keeps)
        return [u.members for u in units]

    fused = [("scale_up",), ("matmul/big", "relu"), ("scale_down",)]
    assert members(None) == fused
    assert members(lambda name, typ: name == "relu") == [
        ("scale_up",), ("matmul/big",), ("relu",), ("scale_down",)]
    assert members(lambda name, typ: name in ("matmul/big", "relu")) == fused
    assert members(lambda name, typ: True) == fused


def _fake(keep, precision="force_fp16"):
    meta = {"model_name": "bigval", "precision_value": precision, "keep_dtype": list(keep)}
    return FakeOm(path=None, model=bigval(), meta=meta)


def test_the_fake_om_keeps_a_fused_op_only_as_a_whole():
    plan = {op.name: op.members for op in _fake([]).plan()}
    assert plan["matmul/big"] == ("matmul/big", "relu")
    om = _fake(["relu"])
    stored = {op.members: om.storage_dtype(op) for op in om.plan()}
    assert stored[("matmul/big",)] == "float16" and stored[("relu",)] == "float32"
    om = _fake(["relu", "matmul/big"])
    assert {op.members: om.storage_dtype(op) for op in om.plan()}[("matmul/big", "relu")] == (
        "float32")
    # ATC ignores keep_dtype under must_keep_origin_dtype: nothing to split on
    assert ("matmul/big", "relu") in [op.members for op in _fake(
        ["relu"], "must_keep_origin_dtype").plan()]
    assert [op.members for op in plan_ops(bigval(), True, lambda n, t: n == "relu")][1] == (
        "matmul/big",)

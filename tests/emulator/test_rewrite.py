"""Numerics of the rewritten graph per mode: rounding points, overflow, kept ops, folding."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from pytest_ascend_accuracy.backends.emulator.rewrite import emulate_graph  # noqa: E402
from pytest_ascend_accuracy.core.modes import DEFAULT, FUSION_OFF, HIGH_PRECISION, Mode, keep_dtype  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402

from .conftest import cosine, emulate, golden_values  # noqa: E402


def _chain(*ops):
    """x -> op1 -> op2 ... with scalar constants: ops = [(name, type, constant or None)]."""
    nodes, inits, cur = [], [], "x"
    for name, op, const in ops:
        ins = [cur]
        if const is not None:
            inits.append(numpy_helper.from_array(np.array(const, np.float32), f"{name}.c"))
            ins.append(f"{name}.c")
        nodes.append(helper.make_node(op, ins, [f"{name}_out"], name=name))
        cur = f"{name}_out"
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
                          [helper.make_tensor_value_info(cur, TensorProto.FLOAT, None)], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


SCALE_UP_DOWN = _chain(("up1", "Mul", 300.0), ("up2", "Mul", 300.0), ("down", "Mul", 1e-4))
X = {"x": np.linspace(0.01, 1.0, 32, dtype=np.float32).reshape(4, 8)}


def test_fp16_output_overflow_becomes_inf_and_propagates():
    _, out = emulate(SCALE_UP_DOWN, DEFAULT, X)
    up2, down = out["up2"][0], out["down"][0]
    assert up2.dtype == np.float16
    big = X["x"] * 9e4 > 65519
    assert np.isinf(up2[big]).all() and np.isfinite(up2[~big]).all()
    assert np.isinf(down[big]).all()


def test_saturate_policy_clamps_instead():
    _, out = emulate(SCALE_UP_DOWN, DEFAULT, X, overflow="saturate")
    big = X["x"] * 9e4 > 65504
    assert (out["up2"][0][big] == 65504).all()
    np.testing.assert_allclose(out["down"][0][big].astype(np.float32), 6.55, rtol=1e-3)


def test_every_fp16_op_rounds_inputs_and_outputs():
    model = _chain(("scale", "Mul", 0.1), ("shift", "Add", 1e-4))
    _, out = emulate(model, DEFAULT, X)
    x16 = X["x"].astype(np.float16).astype(np.float32)
    c16 = np.float32(np.float16(0.1))
    expect_scale = (x16 * c16).astype(np.float16)
    np.testing.assert_array_equal(out["scale"][0], expect_scale)
    expect_shift = (expect_scale.astype(np.float32) + np.float32(np.float16(1e-4))).astype(np.float16)
    np.testing.assert_array_equal(out["shift"][0], expect_shift)


def test_kept_op_is_fp32_but_sees_its_fp16_neighbours_values():
    model = _chain(("scale", "Mul", 0.1), ("shift", "Add", 1e-4))
    plan, out = emulate(model, keep_dtype(["shift"]), X)
    assert [op.precision for op in plan.ops] == ["fp16", "fp32"]
    shift = out["shift"][0]
    assert shift.dtype == np.float32
    scale16 = (X["x"].astype(np.float16).astype(np.float32) * np.float32(np.float16(0.1))).astype(np.float16)
    np.testing.assert_array_equal(shift, scale16.astype(np.float32) + np.float32(1e-4))
    assert plan.ops[1].inputs[0].dtype == "float32"  # dumped as the kept op saw it


def test_output_overflow_is_not_fixed_by_keeping_the_producer_alone():
    """The consumer casts its input to fp16 again, as the NPU does."""
    _, out = emulate(SCALE_UP_DOWN, keep_dtype(["up2"]), X)
    assert np.isfinite(out["up2"][0]).all()
    assert np.isinf(out["down"][0]).any()
    _, out = emulate(SCALE_UP_DOWN, keep_dtype(["up2", "down"]), X)
    assert np.isfinite(out["down"][0]).all()


def test_overflow_model_fails_at_norm_in_default_and_passes_otherwise():
    model = models.overflow_model()
    x = make_inputs(model)
    gold = golden_values(model, x)
    for mode, ok in ((DEFAULT, False), (FUSION_OFF, False), (HIGH_PRECISION, True), (keep_dtype(["norm"]), True)):
        plan, out = emulate(model, mode, x)
        cos = {op.name: cosine(out[op.name][0], gold[op.outputs[0].origin[0]][0]) for op in plan.ops}
        first_bad = next((name for name, c in cos.items() if not c > 0.95), None)
        assert first_bad == (None if ok else "norm"), (mode, cos)
    assert cosine(emulate(model, DEFAULT, x)[1]["norm"][0], gold["norm"][0]) < 0.6


@pytest.mark.parametrize("precision_mode, matmul_out, relu_out", [
    ("allow_fp32_to_fp16", "float16", ""),
    ("force_fp32", "", ""),
    ("must_keep_origin_dtype", "", ""),
])
def test_high_precision_family_dump_dtypes(precision_mode, matmul_out, relu_out):
    plan, _ = emulate(models.passing_mlp(), Mode(precision_mode=precision_mode, fusion=False),
                      make_inputs(models.passing_mlp()))
    ops = {op.name: op for op in plan.ops}
    assert ops["fc1/MatMul"].outputs[0].dtype == matmul_out
    assert ops["relu1"].outputs[0].dtype == relu_out
    cube_in = "float16" if precision_mode != "must_keep_origin_dtype" else ""
    assert ops["fc1/MatMul"].inputs[1].dtype == cube_in


def test_transformer_fp16_error_is_real_but_small():
    model = models.transformer_block()
    x = make_inputs(model)
    gold = golden_values(model, x)
    plan, out = emulate(model, DEFAULT, x)
    y = out["/mlp/fc2/MatMul/Add_1"][0].astype(np.float32)
    assert 0.99 < cosine(y, gold["/Add_1"][0]) < 1.0
    assert np.abs(y - gold["/Add_1"][0]).max() > 1e-4
    worst = min(cosine(out[op.name][0], gold[op.outputs[0].origin[0]][0]) for op in plan.ops)
    assert worst > 0.95


def test_static_shape_subgraphs_are_folded_and_not_dumped():
    plan, out = emulate(models.if_model(), DEFAULT, {"x": np.ones((1, 4), np.float32)},
                        input_shape={"x": (1, 4)})
    assert plan.info["folded"] == ["shape", "batch", "is_one"]
    assert [op.name for op in plan.ops] == ["pick/then/Mul_0", "relu"]
    np.testing.assert_array_equal(out["relu"][0], np.full((1, 4), 2, np.float16))


def test_graph_outputs_keep_their_names_with_rounded_values():
    from pytest_ascend_accuracy.graph.onnx_graph import ort_session

    proto, plan = emulate_graph(SCALE_UP_DOWN, DEFAULT)
    assert plan.model_outputs == ["down_out"]
    y = ort_session(proto.SerializeToString()).run(["down_out"], X)[0]
    assert y.dtype == np.float32 and np.isinf(y).any()


def test_keep_dtype_names_that_match_nothing_are_reported():
    _, plan = emulate_graph(models.overflow_model(), keep_dtype(["norm", "nrom", "OpType::Exp"]))
    assert plan.info["unknown_keep_dtype"] == ["nrom"]


def _reshape_by_shape_model():
    """x -> conv (a 1 MB weight) -> y; a static chain computes y's flattened shape (Shape of a
    computed tensor of known shape -> Gather -> Mul by a constant -> Concat) for a Reshape;
    a second static chain is a constant expression of an initializer (Transpose -> Add)."""
    r = np.random.default_rng(3)
    w = r.standard_normal((64, 3, 3, 3)).astype(np.float32)
    k = r.standard_normal((3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Shape", ["y"], ["y_shape"], name="shape"),
             helper.make_node("Gather", ["y_shape", "i1"], ["c"], name="take_c", axis=0),
             helper.make_node("Mul", ["c", "hw"], ["chw"], name="times_hw"),
             helper.make_node("Concat", ["one", "chw"], ["flat"], name="flat_shape", axis=0),
             helper.make_node("Reshape", ["y", "flat"], ["z"], name="flatten"),
             helper.make_node("Transpose", ["k"], ["kt"], name="kt", perm=[1, 0]),
             helper.make_node("Add", ["kt", "kt"], ["k2"], name="k2"),
             helper.make_node("ReduceSum", ["z"], ["s"], name="sum", keepdims=1),
             helper.make_node("MatMul", ["s", "k2_row"], ["out"], name="mm")]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(k, "k"),
             numpy_helper.from_array(np.array([1], np.int64), "i1"),
             numpy_helper.from_array(np.array([64], np.int64), "hw"),
             numpy_helper.from_array(np.array([1], np.int64), "one"),
             numpy_helper.from_array(np.ones((1, 3), np.float32), "k2_row")]
    nodes.append(helper.make_node("Add", ["out", "k2"], ["final"], name="use_k2"))
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("final", TensorProto.FLOAT, None)], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_folding_evaluates_the_static_subgraph_alone_with_the_same_values(monkeypatch):
    """Issue 17: static tensors are computed by onnxruntime on the nodes they depend on (a
    Shape of a computed tensor is fed zeros of that shape), not on the whole model with its
    weights; the folded model is byte-identical to the one the whole-model evaluation gives."""
    from pytest_ascend_accuracy.backends.emulator import rewrite
    from pytest_ascend_accuracy.graph import static
    from pytest_ascend_accuracy.graph.prepare import prepare_model

    seen = []
    real = static.evaluate

    def spy(model, names, inputs=None, **kw):
        seen.append(([n.op_type for n in model.graph.node], sorted(inputs or {}),
                     sorted(t.name for t in model.graph.initializer)))
        return real(model, names, inputs, **kw)

    monkeypatch.setattr(rewrite, "evaluate", spy)
    pruned = prepare_model(_reshape_by_shape_model()).model
    folded = rewrite.fold_constants(pruned)
    assert folded == ["shape", "take_c", "times_hw", "flat_shape", "kt", "k2"]
    assert seen == [(["Shape", "Gather", "Mul", "Concat", "Transpose", "Add"], ["y"],
                     ["hw", "i1", "k", "one"])]  # no conv, no conv weight
    whole = prepare_model(_reshape_by_shape_model()).model
    monkeypatch.setattr(rewrite, "_evaluate_static",
                        lambda model, needed, st, info, folder: real(model, needed, folder=folder))
    assert rewrite.fold_constants(whole) == folded
    assert whole.SerializeToString() == pruned.SerializeToString()
    x = {"x": np.ones((1, 3, 8, 8), np.float32)}
    plan, out = emulate(_reshape_by_shape_model(), HIGH_PRECISION, x)
    assert plan.info["folded"] == folded and "flatten" in out

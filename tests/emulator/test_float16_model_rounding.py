"""A model computing in float16 gets float16 numerics: each op's output rounded to float16 before
the next op reads it (backends/emulator/float16_model.py). onnxruntime runs a chain of float16
ops through float32 kernels and drops the Cast pairs between them; the emulator rounded float32
tensors only, so a float16 export was computed in float32 throughout and its check was vacuous
(an audit: an attention export whose scores overflow float16 passed, every cosine 1.0)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from pytest_ascend_accuracy.core.modes import Mode  # noqa: E402

from .conftest import emulate  # noqa: E402

#: each op its own unit (a fused group rounds at its borders only, as for a float32 model)
NO_FUSION = Mode(fusion=False)


def _chain(elem, scale):
    """x @ W * k + b -> Mul by itself, in ``elem`` (FLOAT or FLOAT16): a two-op float16 carry."""
    npdt = np.float16 if elem == TensorProto.FLOAT16 else np.float32
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((16, 16)) * scale).astype(npdt)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"),
             helper.make_node("Mul", ["mm", "k"], ["scaled"], name="scale"),
             helper.make_node("Add", ["scaled", "b"], ["biased"], name="bias"),
             helper.make_node("Mul", ["biased", "biased"], ["y"], name="square")]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", elem, [4, 16])],
        [helper.make_tensor_value_info("y", elem, [4, 16])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(1.37, npdt), "k"),
         numpy_helper.from_array(np.full(16, 0.1, npdt), "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _x(dtype):
    return {"x": np.random.default_rng(0).random((4, 16), dtype=np.float32).astype(dtype)}


def _by_hand(scale, overflow=False):
    """Each op in float32 on float16 values, its output rounded to float16 (a float16 op)."""
    model = _chain(TensorProto.FLOAT16, scale)
    w = numpy_helper.to_array(model.graph.initializer[0]).astype(np.float32)
    x = _x(np.float16)["x"].astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        def r(v):
            return v.astype(np.float16).astype(np.float32)
        mm = r(x @ w)
        scaled = r(mm * np.float32(np.float16(1.37)))
        biased = r(scaled + np.float32(np.float16(0.1)))
        return {"mm": mm, "scale": scaled, "bias": biased, "square": r(biased * biased)}


def test_each_op_of_a_float16_model_rounds_its_output_to_float16():
    plan, outs = emulate(_chain(TensorProto.FLOAT16, 1.0), NO_FUSION, _x(np.float16))
    want = _by_hand(1.0)
    for name, value in want.items():
        got = outs[name][0]
        assert got.dtype == np.float16, name  # dumped as the device writes a float16 op's output
        np.testing.assert_array_equal(got.astype(np.float32), value, err_msg=name)
    assert plan.info["float16_tensors"] > 0


def test_it_overflows_to_inf_where_a_float16_op_does_and_the_next_op_reads_the_inf():
    # |x @ W| up to ~2e3 -> * 1.37 -> square: past 65504 in float16, inf on the device
    plan, outs = emulate(_chain(TensorProto.FLOAT16, 60.0), NO_FUSION, _x(np.float16))
    want = _by_hand(60.0)
    assert np.isinf(want["square"]).any()
    np.testing.assert_array_equal(outs["square"][0].astype(np.float32), want["square"])


def test_a_float16_model_s_outputs_stay_float16_and_its_inputs_are_fed_as_float16():
    from pytest_ascend_accuracy.backends.emulator.rewrite import emulate_graph
    from pytest_ascend_accuracy.graph.onnx_graph import ort_session

    proto, plan = emulate_graph(_chain(TensorProto.FLOAT16, 1.0), NO_FUSION)
    assert proto.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT16
    assert proto.graph.output[0].type.tensor_type.elem_type == TensorProto.FLOAT16
    (y,) = ort_session(proto.SerializeToString()).run(["y"], _x(np.float16))
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y.astype(np.float32), _by_hand(1.0)["square"])


@pytest.mark.parametrize("precision_mode", ["must_keep_origin_dtype", "allow_fp32_to_fp16"])
def test_a_mode_keeping_origin_dtypes_keeps_float16_ops_float16(precision_mode):
    mode = Mode(precision_mode=precision_mode, fusion=False)
    plan, outs = emulate(_chain(TensorProto.FLOAT16, 1.0), mode, _x(np.float16))
    assert {op.precision for op in plan.ops} == {"fp16"}
    np.testing.assert_array_equal(outs["bias"][0].astype(np.float32), _by_hand(1.0)["bias"])


def test_the_float32_twin_computes_the_same_and_converts_as_before():
    """A float32 model under force_fp16 rounds every op as the float16 model now does; its
    conversion is untouched (no widened input, no narrowed output)."""
    from pytest_ascend_accuracy.backends.emulator.rewrite import emulate_graph

    plan32, outs32 = emulate(_chain(TensorProto.FLOAT, 1.0), Mode(), _x(np.float32))
    plan16, outs16 = emulate(_chain(TensorProto.FLOAT16, 1.0), Mode(), _x(np.float16))
    assert [op.name for op in plan16.ops] == [op.name for op in plan32.ops] == [
        "mmscale", "bias", "square"]  # MatMul + Mul fused, rounded at its border
    for name in outs32:
        np.testing.assert_array_equal(outs32[name][0], outs16[name][0], err_msg=name)
    proto, plan = emulate_graph(_chain(TensorProto.FLOAT, 1.0), Mode())
    assert plan.info["float16_tensors"] == 0
    added = ("emu::widen", "emu::narrow")
    assert not [n.name for n in proto.graph.node if n.name.startswith(added)]


@pytest.mark.parametrize("precision_mode", ["force_fp32", "cube_fp16in_fp32out"])
def test_a_cast_to_float16_stays_float16_under_a_mode_raising_float16_ops(precision_mode):
    """A mode chooses an op's precision, not a conversion's target type: a float32 model's Cast
    to float16 was computed and dumped in float32 under force_fp32 (a review), where the parent
    and the golden overflowed float16 there. It outputs float16 (inf past 65504) under every mode;
    the float16 op after it is the mode's to raise."""
    nodes = [helper.make_node("Mul", ["x", "k"], ["a"], name="mul0"),
             helper.make_node("Cast", ["a"], ["h"], name="c16", to=TensorProto.FLOAT16),
             helper.make_node("Mul", ["h", "h"], ["hh"], name="sq16"),
             helper.make_node("Cast", ["hh"], ["f"], name="c32", to=TensorProto.FLOAT),
             helper.make_node("Add", ["f", "x"], ["y"], name="add32")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(1.0, np.float32), "k")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.array([[1e5, -1e5, 3.0, 1000.0], [0.1, 2.0, 70000.0, -5.0]], np.float32)
    plan, outs = emulate(model, Mode(fusion=False, precision_mode=precision_mode), {"x": x})
    c16 = outs["c16"][0]
    assert c16.dtype == np.float16
    with np.errstate(over="ignore"):  # inf at 1e5, -1e5 and 70000, as float16 holds them
        np.testing.assert_array_equal(c16, x.astype(np.float16))
    assert np.isinf(c16).sum() == 3

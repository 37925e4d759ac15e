"""The diagnosis said "high precision does not pass (cube ops still take float16 inputs)"
whatever failed under high precision (fix-files trial finding 5: PP-OCRv4 det at 96x96 in
fusion_off failed at p2o.Sigmoid.0, a vector op whose golden values all lie below float16's
smallest normal), and a fusion_off run labelled its first step "default [fusion_off]" and its
every-op run "keep_dtype(all 3 ops)" (finding 7). The det's pattern small (the tiny_map model of
tests/plugin/test_hint_cube_tiny_sigmoid.py) and a Cube op's (x * 1e5 -> MatMul -> Relu)."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.core.modes import FUSION_OFF
from pytest_ascend_accuracy.triage.flow import diagnose
from pytest_ascend_accuracy.triage.report import text


def _model(name, nodes, inits, x_shape, y_shape):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        [numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def tiny_map():
    """norm (variance 1e9 on 6 of 8 channels) -> head (1x1 Conv, bias -17) -> prob (Sigmoid):
    golden probabilities all below 2.4e-07."""
    r = np.random.default_rng(0)
    var = np.full(8, 1e9, np.float32)
    var[[1, 5]] = 1.0
    inits = {"s": np.sqrt(var).astype(np.float32), "b": np.zeros(8, np.float32),
             "m": np.zeros(8, np.float32), "v": var,
             "w": (r.standard_normal((1, 8, 1, 1)) * 0.5).astype(np.float32),
             "cb": np.array([-17.0], np.float32)}
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"], name="norm"),
             helper.make_node("Conv", ["n", "w", "cb"], ["l"], name="head", kernel_shape=[1, 1]),
             helper.make_node("Sigmoid", ["l"], ["y"], name="prob")]
    return _model("tiny_map", nodes, inits, [1, 8, 16, 16], [1, 1, 16, 16])


def bigval():
    """scale_up (x * 1e5) -> matmul/big -> relu -> scale_down (* 1e-5): high precision still
    feeds the MatMul (fused with its Relu) float16 values past 65504."""
    inits = {"big": np.array([1e5], np.float32), "small": np.array([1e-5], np.float32),
             "w": np.ones((16, 8), np.float32)}
    nodes = [helper.make_node("Mul", ["x", "big"], ["a"], name="scale_up"),
             helper.make_node("MatMul", ["a", "w"], ["c"], name="matmul/big"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Mul", ["r", "small"], ["y"], name="scale_down")]
    return _model("bigval", nodes, inits, [1, 16], [1, 8])


def _run(model, tmp_path, **kw):
    cache = Cache(tmp_path / "cache")
    return diagnose(model, backend=EmulatorBackend(cache), cache=cache, **kw)


def test_a_vector_op_below_float16s_normal_range_is_named_not_cube_ops(tmp_path):
    d = _run(tiny_map(), tmp_path, mode=FUSION_OFF)
    assert d.restored_by == "keep_dtype", d.verdict
    assert "cube" not in d.verdict.lower(), d.verdict
    assert ("high precision does not pass (it fails at op prob (Sigmoid), whose golden values "
            "all lie below float16's smallest normal (|2.38e-07|): high precision outputs it in "
            "float32, judged without float16's allowance for values that small); keeping every "
            "op in float32 does; keep_dtype {norm} restores") in d.verdict, d.verdict
    lines = text(d).splitlines()
    # finding 7: the first step names the mode it ran in, the every-op run its base too
    assert any(line.startswith("  step 1 fusion_off [fusion_off]: FAILED | fails at op norm")
               for line in lines), lines
    assert any(line.startswith("  step 2 keep_dtype_all [fusion_off+keep_dtype(all 3 ops)]: "
                               "PASSED") for line in lines), lines
    assert not any("default [fusion_off]" in line for line in lines), lines


def test_a_cube_op_failing_under_high_precision_is_named_as_one(tmp_path):
    d = _run(bigval(), tmp_path)
    assert ("high precision does not pass (it fails at op matmul/bigrelu (MatMulV2), a Cube op: "
            "high precision still feeds Cube ops float16 inputs); keeping every op in float32 "
            "does") in d.verdict, d.verdict
    assert "  step 1 default [default]: FAILED" in text(d)

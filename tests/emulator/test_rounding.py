"""fp16/bf16 rounding semantics and the precision each mode gives an operator."""
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from pytest_ascend_accuracy.backends.emulator.rounding import (FP16_MAX, round_bf16, round_fp16,  # noqa: E402
                                                                rounding_nodes, unit_precision)
from pytest_ascend_accuracy.errors import ConfigError  # noqa: E402
from pytest_ascend_accuracy.core.modes import Mode, keep_dtype  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import ort_session  # noqa: E402

SPECIAL = np.array([np.nan, np.inf, -np.inf, 65504, 65519.99, 65520, -1e5, 1e-7, -1e-7, 4e-8, 6.1e-5,
                    1e-9, 0.1, 1 / 3], np.float32)


def _session(kind, overflow):
    nodes = rounding_nodes("x", "y", kind, overflow, prefix="r", half_name="h", bounds=("lo", "hi"))
    inits = [helper.make_tensor("lo", TensorProto.FLOAT, [], [-FP16_MAX]),
             helper.make_tensor("hi", TensorProto.FLOAT, [], [FP16_MAX])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    return ort_session(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())


SESSIONS = {}


def _graph_round(values, kind="fp16", overflow="inf"):
    key = (kind, overflow)
    if key not in SESSIONS:
        SESSIONS[key] = _session(kind, overflow)
    return SESSIONS[key].run(["y"], {"x": values})[0]


def test_fp16_overflow_becomes_inf_and_subnormals_survive():
    out = round_fp16(SPECIAL)
    assert np.isnan(out[0])
    assert list(out[1:7]) == [np.inf, -np.inf, 65504, 65504, np.inf, -np.inf]
    assert out[7] == np.float32(np.float16(1e-7)) and 0 < out[7] < 6.1e-5   # subnormal, not flushed
    assert out[9] == np.float32(2.0 ** -24)                                     # smallest subnormal
    assert out[11] == 0.0                                                      # underflow to zero
    assert out[12] == np.float32(np.float16(0.1)) != np.float32(0.1)


def test_fp16_saturate_clamps_to_65504_and_keeps_nan():
    out = round_fp16(SPECIAL, "saturate")
    assert np.isnan(out[0])
    assert list(out[1:7]) == [65504, -65504, 65504, 65504, 65504, -65504]


@pytest.mark.parametrize("overflow", ["inf", "saturate"])
def test_graph_rounding_matches_numpy_on_special_values(overflow):
    np.testing.assert_array_equal(_graph_round(SPECIAL, "fp16", overflow), round_fp16(SPECIAL, overflow))


@settings(max_examples=60, deadline=None)
@given(arrays(np.float32, st.integers(1, 64), elements=st.floats(width=32, allow_nan=True)))
def test_graph_rounding_matches_numpy_everywhere(values):
    np.testing.assert_array_equal(_graph_round(values, "fp16", "inf"), round_fp16(values))
    np.testing.assert_array_equal(_graph_round(values, "fp16", "saturate"), round_fp16(values, "saturate"))
    np.testing.assert_array_equal(_graph_round(values, "bf16"), round_bf16(values))


def test_bf16_rounds_to_nearest_even():
    v = np.array([1.0, 1.00390625, 1.005859375, 1.01171875], np.float32)
    np.testing.assert_array_equal(round_bf16(v), [1.0, 1.0, 1.0078125, 1.015625])


def _prec(mode, anchor="Add", names=("op",), types=None):
    return unit_precision(mode, anchor_type=anchor, member_names=names,
                          member_types=types or (anchor,))


@pytest.mark.parametrize("precision_mode, cube, vector", [
    ("force_fp16", "fp16", "fp16"),
    ("allow_fp32_to_fp16", "fp16", "fp32"),
    ("force_fp32", "fp16in", "fp32"),
    ("cube_fp16in_fp32out", "fp16in", "fp32"),
    ("must_keep_origin_dtype", "fp32", "fp32"),
    ("allow_fp32_to_bf16", "bf16", "fp32"),
])
def test_precision_per_mode_for_cube_and_vector_ops(precision_mode, cube, vector):
    mode = Mode(precision_mode=precision_mode)
    assert _prec(mode, "Conv") == cube
    assert _prec(mode, "MatMul") == cube
    assert _prec(mode, "Add") == vector


def test_mix_precision_keeps_black_list_ops_fp32():
    mode = Mode(precision_mode="allow_mix_precision")
    assert _prec(mode, "Exp") == "fp32"
    assert _prec(mode, "Relu") == "fp16"
    assert _prec(Mode(precision_mode="allow_mix_precision_bf16"), "Relu") == "bf16"


def test_keep_dtype_by_name_by_onnx_type_and_by_the_parsers_type():
    assert _prec(keep_dtype(["op"]), "Add") == "fp32"
    assert _prec(keep_dtype(["other"]), "Add") == "fp16"
    assert _prec(keep_dtype(["OpType::Conv"]), "Conv") == "fp32"
    assert _prec(keep_dtype(["OpType::Conv2D"]), "Conv") == "fp32"
    # ATC matches the parser's type (BatchNorm, BatchMatMulV2), not the finished graph's
    # (BNInference, MatMulV2): an entry real ATC ignores keeps nothing here either
    bn = dict(names=("bn",), types=("BatchNormalization",))
    assert _prec(keep_dtype(["OpType::BatchNormalization"]), "BatchNormalization", **bn) == "fp32"
    assert _prec(keep_dtype(["OpType::BatchNorm"]), "BatchNormalization", **bn) == "fp32"
    assert _prec(keep_dtype(["OpType::BNInference"]), "BatchNormalization", **bn) == "fp16"
    assert _prec(keep_dtype(["OpType::BatchMatMulV2"]), "MatMul") == "fp32"
    assert _prec(keep_dtype(["OpType::MatMulV2"]), "MatMul") == "fp16"
    # a fused group is kept when any of its members is
    assert _prec(keep_dtype(["bn1"]), "Conv", names=("conv1", "bn1"), types=("Conv", "BatchNormalization")) == "fp32"


def test_unknown_overflow_policy_is_rejected():
    from pytest_ascend_accuracy.backends.emulator.rounding import check_overflow

    with pytest.raises(ConfigError, match="unknown overflow policy 'wrap'"):
        check_overflow("wrap")

"""Fixes to ``diagnose`` from a user trial: the data step blamed float16 rounding of an input on
pre-processing (F1), a precision problem that fusion off uncovers was blamed on the operators
(F2), step summaries named a cosine where the op failed for another reason (F6), and a
high-precision base repeated itself (F7)."""
import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend, Fault  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.core.modes import Mode  # noqa: E402
from pytest_ascend_accuracy.triage.flow import diagnose  # noqa: E402


@pytest.fixture
def cache(tmp_path):
    return Cache(tmp_path / "cache")


def run(model, cache, inputs=None, faults=(), **kw):
    return diagnose(model, inputs, backend=EmulatorBackend(cache, faults=faults), cache=cache, **kw)


def _model(nodes, inputs, outputs, inits, name):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def scaled_tanh(scale: float):
    """``tanh(x * scale)``: raw inputs far from float16's range, normalised by the first op."""
    return _model([helper.make_node("Mul", ["x", "s"], ["xs"], name="normalize"),
                   helper.make_node("Tanh", ["xs"], ["y"], name="act")],
                  [_vi("x", [1, 64])], [_vi("y", [1, 64])],
                  [numpy_helper.from_array(np.float32(scale), "s")], "rawin")


def _raw(amplitude: float, seed: int = 0):
    return {"x": (np.random.default_rng(seed).standard_normal((1, 64)) * amplitude)
            .astype(np.float32)}


# -- F1: float16 rounding of an input is no pre-processing mistake -----------------------------
def test_inputs_past_float16_range_go_on_to_the_precision_step(cache):
    d = run(scaled_tanh(1e-5), cache, _raw(1e5))
    data = d.step("data")
    assert data.passed is True, data.summary
    assert "past float16's range" in data.summary and "+-inf" in data.summary
    assert d.restored_by == "keep_dtype" and d.keep_dtype == ("normalize",)
    # the figures are of the positions judged: finite, and float16 rounding only
    (line,) = data.table
    assert np.isfinite(line.max_abs) and line.rel_l2 <= 1e-2
    assert "float16 rounding of the input" in line.note


def test_inputs_float16_flushes_to_zero_go_on_to_the_precision_step(cache):
    d = run(scaled_tanh(1e9), cache, _raw(1e-9))
    data = d.step("data")
    assert data.passed is True, data.summary
    assert "below float16's normal range" in data.summary
    assert "golden * 0" not in data.summary
    assert d.restored_by == "keep_dtype" and d.keep_dtype == ("normalize",)


def test_a_scale_mistake_beside_float16_overflow_still_fails_the_data_step(cache):
    d = run(scaled_tanh(1e-5), cache, _raw(1e5),
            faults=[Fault.on_input("x", effect="scale", amount=0.5)])
    data = d.step("data")
    assert data.passed is False
    assert "looks like golden * 0.5 (check mean/scale)" in data.summary
    assert "past float16's range" in data.summary  # the positions left out are named
    assert d.restored_by is None and [s.step for s in d.steps] == ["default", "data"]


# -- F6: a step summary says why its first op failed, as the plain check does ------------------
def int_head():
    """An ArgMax whose two leading logits differ by less than float16 resolves near 1000."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((32, 10)).astype(np.float32)
    w[:, 1] = w[:, 0] + 1e-3 * rng.standard_normal(32).astype(np.float32)
    b = np.zeros(10, np.float32)
    b[:2] = 1000.0
    return _model([helper.make_node("MatMul", ["x", "w"], ["logits"], name="head/fc"),
                   helper.make_node("Add", ["logits", "bias"], ["lb"], name="head/bias"),
                   helper.make_node("ArgMax", ["lb"], ["idx"], name="head/argmax", axis=-1,
                                    keepdims=0)],
                  [_vi("x", [64, 32])], [_vi("idx", [64], TensorProto.INT64)],
                  [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "bias")],
                  "int_head")


def test_an_integer_output_failing_exactly_is_summarised_by_its_count(cache):
    d = run(int_head(), cache, budget=2)
    default = d.step("default")
    assert default.first_failure == "head/argmax"
    assert "cosine NaN" not in default.summary
    assert " values differ (int64 values are compared exactly" in default.summary


def test_a_non_finite_output_is_summarised_by_its_positions(cache):
    d = run(scaled_tanh(1e9), cache, _raw(1e-9), budget=1)
    default = d.step("default")
    assert "cosine NaN vs" not in default.summary
    assert "NaN/Inf on one side only at 64 positions" in default.summary


def test_an_op_not_compared_is_summarised_as_such(cache):
    from pytest_ascend_accuracy.testing import models

    d = run(models.conv_bn_relu(), cache, faults=[Fault.on_input("x", effect="scale", amount=1.02)],
            budget=1)
    default = d.step("default")
    assert "cosine NaN" not in default.summary
    assert "(not compared: " in default.summary, default.summary


# -- F2: a precision problem that fusion off uncovers is searched under fusion off -------------
def conv_bn_past_float16():
    """Conv + BatchNorm whose variance (1e9) leaves float16's range: harmless while the BN is
    folded into the Conv, all zero once it runs on its own in float16."""
    rng = np.random.default_rng(0)
    c = 8
    inits = [numpy_helper.from_array(v.astype(np.float32), n) for n, v in (
        ("wc", rng.standard_normal((c, 3, 3, 3)) * 0.3), ("g", np.full(c, 3e4)),
        ("b", np.zeros(c)), ("m", np.zeros(c)), ("v", np.full(c, 1e9)))]
    return _model([helper.make_node("Conv", ["x", "wc"], ["c0"], name="conv", pads=[1, 1, 1, 1]),
                   helper.make_node("BatchNormalization", ["c0", "g", "b", "m", "v"], ["bn"],
                                    name="bn"),
                   helper.make_node("Relu", ["bn"], ["r"], name="relu"),
                   helper.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"),
                   helper.make_node("Flatten", ["p"], ["y"], name="flat")],
                  [_vi("x", [1, 3, 16, 16])], [_vi("y", [1, c])], inits, "conv_bn_past_fp16")


def test_fusion_off_uncovering_a_float16_range_op_gets_the_precision_step_under_fusion_off(
        cache, tmp_path, capsys):
    import onnx

    from pytest_ascend_accuracy.cli import main

    model = conv_bn_past_float16()
    fault = [Fault.on_rule("ConvBatchnormFusionPass")]
    d = run(model, cache, faults=fault)
    assert d.step("fusion_off").first_failure == "bn"
    # then the rules are searched with the set kept (a PP-OCR trial: all fusion off was the fix)
    assert d.restored_by == "fusion_rules+keep_dtype", d.verdict
    assert d.fix_mode == Mode(fusion_rules_off=("GraphFusion:ConvBatchnormFusionPass",),
                              keep_dtype=("bn",))
    assert "fusion_off fails at op bn instead" in d.verdict
    assert "check the operator implementations" not in d.verdict
    assert [s.step for s in d.steps][-3:] == ["fusion_off+high_precision", "fusion_off+keep_dtype",
                                              "fusion_rules+keep_dtype"]
    # the printed fix, pasted verbatim, passes
    assert run(model, cache, faults=fault, mode=d.fix_mode).restored_by == "default"
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    capsys.readouterr()
    assert main(["diagnose", str(path), "--cache-dir", str(tmp_path / "c"), "--fault",
                 "rule:ConvBatchnormFusionPass", "--mode", d.fix_mode.yaml_form()]) == 0
    assert "PASSES" in capsys.readouterr().out


# -- F7: a high-precision base is not tried again, nor called fp16 -----------------------------
def big_softmax():
    w = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    return _model([helper.make_node("MatMul", ["x", "w"], ["l"], name="attn/MatMul"),
                   helper.make_node("Mul", ["l", "temp"], ["ls"], name="attn/scale"),
                   helper.make_node("Softmax", ["ls"], ["p"], name="attn/softmax", axis=-1),
                   helper.make_node("MatMul", ["p", "x"], ["y"], name="attn/out")],
                  [_vi("x", [1, 16, 16])], [_vi("y", [1, 16, 16])],
                  [numpy_helper.from_array(w, "w"),
                   numpy_helper.from_array(np.float32(30000.0), "temp")], "big_softmax")


def test_a_high_precision_base_is_not_converted_again_nor_called_fp16(cache):
    from pytest_ascend_accuracy.core.modes import HIGH_PRECISION

    d = run(big_softmax(), cache, mode=HIGH_PRECISION)
    assert d.restored_by == "keep_dtype", d.verdict
    assert [s.step for s in d.steps] == ["default", "data", "keep_dtype_all", "keep_dtype"]
    assert "under fp16" not in d.verdict and d.verdict.endswith("under mode high_precision")
    assert "high precision does not pass" not in d.verdict
    assert run(big_softmax(), cache, mode=d.fix_mode).restored_by == "default"


def test_a_mode_that_failed_as_a_whole_is_not_searched_again():
    """fusion off judged nothing (``Verdict.problem``, no first op): no precision step under it."""
    from dataclasses import replace
    from types import SimpleNamespace

    from pytest_ascend_accuracy.core.modes import BUFFER_OFF, DEFAULT, FUSION_OFF
    from pytest_ascend_accuracy.triage.flow import _Flow

    whole = SimpleNamespace(passed=False, verdict=SimpleNamespace(first=None))
    memo = {replace(m, label=None): whole for m in (BUFFER_OFF, FUSION_OFF)}
    flow = _Flow(SimpleNamespace(memo=memo), 0.95, "cosine", DEFAULT)
    default = SimpleNamespace(verdict=SimpleNamespace(first=object()))
    assert flow._uncovered(default) is None and flow.steps == []

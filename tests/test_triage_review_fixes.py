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

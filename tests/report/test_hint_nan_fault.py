"""A NaN a faulty device op makes, in a model whose values stay within float16, is no float16
range finding: the hint named every op after it (365 on PP-OCR rec) to keep in float32, which
changed nothing (a PP-OCR trial). NaN where the model does leave the range still counts
(tests/plugin/test_hint_underflow.py, the overflow and softmax hints)."""
import pytest

from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy

pytest.importorskip("onnxruntime")


def test_a_device_ops_nan_gets_no_keep_dtype_hint(tmp_path):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.backends.emulator.faults import Fault
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.testing import models

    model = models.passing_mlp()
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache, faults=[Fault("op", "relu1", "nan")])
    inputs = make_inputs(model)
    actual = backend.run(backend.convert(model), inputs, dump_dir=tmp_path / "dump")
    with pytest.raises(AccuracyFailure) as exc:
        assert_accuracy(actual, golden_dump(model, inputs, cache=cache), 0.95)
    text = str(exc.value)
    assert "NaN/Inf on one side" in text  # the failure itself says what happened
    hint = text[text.index("next step:"):]
    assert "keep_dtype" not in hint, hint  # a probe instead: what high precision says
    assert hint.startswith("next step: values turn NaN/Inf at fc1/MatMulrelu1 though the golden "
                           "values stay within float16"), hint


def test_a_failure_under_a_per_op_threshold_names_the_entry(tmp_path):
    """A check failing only the user's stricter per_op figure got fusion/buffer modes and no
    word of the entry that set it (a PP-OCR trial: cosine 0.999996 < 0.99999999)."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.testing import models

    model = models.passing_mlp()
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache)
    inputs = make_inputs(model)
    actual = backend.run(backend.convert(model), inputs, dump_dir=tmp_path / "dump")
    with pytest.raises(AccuracyFailure) as exc:
        assert_accuracy(actual, golden_dump(model, inputs, cache=cache), 0.95,
                        per_op={"fc2/*": 1.0, "fc2/Add": 1.0})
    text = str(exc.value)
    assert "< 1 (per_op 'fc2/Add')" in text or "< 1.0 (per_op 'fc2/Add')" in text, text
    hint = text[text.index("next step:"):]
    assert ("the failing ops fail only the per_op thresholds set for them ('fc2/Add': "
            "cosine >= 1") in hint and "meet the default cosine >= 0.95" in hint, hint


def test_an_inf_from_a_value_rounded_to_zero_gets_the_probe_which_passes(tmp_path):
    """x + 1000 - 1000 rounds small x to 0 in float16 and x / that is +Inf, every golden value
    in range: the hint named the ops after the rounding to keep in float32 and, pasted, printed
    itself again (a docs trial). The probe it gives now, high precision, passes."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.core.modes import HIGH_PRECISION
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump

    g = helper.make_graph(
        [helper.make_node("Add", ["x", "k"], ["s"], name="shift"),
         helper.make_node("Sub", ["s", "k"], ["u"], name="unshift"),
         helper.make_node("Div", ["x", "u"], ["y"], name="ratio")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        [numpy_helper.from_array(np.array(1000.0, np.float32), "k")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    inputs = {"x": np.full((1, 8), 1e-3, np.float32)}
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache)
    golden = golden_dump(model, inputs, cache=cache)
    actual = backend.run(backend.convert(model), inputs, dump_dir=tmp_path / "d1")
    with pytest.raises(AccuracyFailure) as exc:
        assert_accuracy(actual, golden, 0.95)
    hint = str(exc.value)[str(exc.value).index("next step:"):]
    assert "keep_dtype" not in hint and "convert in mode HIGH_PRECISION" in hint, hint
    fixed = backend.run(backend.convert(model, HIGH_PRECISION), inputs, dump_dir=tmp_path / "d2")
    assert_accuracy(fixed, golden, 0.95)

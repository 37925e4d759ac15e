"""A model that itself computes in float16 (a ``model.half()`` export) and fails: high precision
and keep_dtype keep its float16 ops float16 (ATC --precision_mode; the emulator does the same),
so the hint offers no mode; it says to export in float32 and check that export, whose own hint
(pasted) then fixes it. An attention export whose scores overflow float16 got "convert in high
precision to see whether float16 rounding is the cause" (H337's attn_half.onnx), which pasted
failed as the default did."""
import re

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from tests.test_triage_float16_model import PLUGIN_TEST as TEST, attention  # noqa: E402


def _hint(text):
    block = text[text.index("next step:"):]
    return block[:block.index("\n\n")] if "\n\n" in block else block


def test_a_float16_models_hint_offers_no_mode_and_its_float32_export_is_fixed(pytester):
    (pytester.path / "models").mkdir()
    attention(pytester.path / "models" / "attn_half.onnx", half=True)
    attention(pytester.path / "models" / "attn32.onnx", half=False)
    pytester.makepyfile(test_half=TEST.format(imports="", modes="", name="attn_half.onnx"))
    run = pytester.runpytest("-p", "no:cacheprovider", "test_half.py")
    run.assert_outcomes(failed=1)
    hint = _hint(run.stdout.str())
    assert "the ONNX model itself computes softmax in float16 (its golden is float16)" in hint
    assert ("export the model in float32 (or, where the model casts to float16 before "
            "softmax, drop that Cast) and check that export") in hint, hint
    # no mode: high precision (and keep_dtype) leave a float16 op float16
    assert "modes=[" not in hint and "HIGH_PRECISION" not in hint, hint
    assert "convert in high precision" not in hint, hint
    # ... which the emulator shows: the high precision the hint used to offer fails the same
    pytester.makepyfile(test_half_hp=TEST.format(imports=", HIGH_PRECISION",
                                                 modes=", modes=[HIGH_PRECISION]",
                                                 name="attn_half.onnx"))
    run = pytester.runpytest("-p", "no:cacheprovider", "test_half_hp.py")
    run.assert_outcomes(failed=1)
    assert "first failure in graph order: softmax" in run.stdout.str()
    # the float32 export, as the hint says: its failure names the ops to keep in float32 ...
    pytester.makepyfile(test_f32=TEST.format(imports="", modes="", name="attn32.onnx"))
    run = pytester.runpytest("-p", "no:cacheprovider", "test_f32.py")
    run.assert_outcomes(failed=1)
    hint = _hint(run.stdout.str())
    expr = re.search(r"^\s+modes=\[(.+)\]$", hint, re.M).group(1)
    assert expr.startswith("keep_dtype("), hint
    # ... that, pasted, fix it
    pytester.makepyfile(test_f32_kept=TEST.format(imports=", keep_dtype",
                                                  modes=f", modes=[{expr}]", name="attn32.onnx"))
    run = pytester.runpytest("-p", "no:cacheprovider", "test_f32_kept.py")
    run.assert_outcomes(passed=1)


def test_a_float16_golden_of_a_float32_model_keeps_its_modes(tmp_path):
    """A float16 golden of a float32 model (stored so by another tool): the model says float32,
    so the mode probe stays."""
    from pytest_ascend_accuracy.report.float16_model import in_float16
    from pytest_ascend_accuracy.compare.rows import TensorCompare

    attention(tmp_path / "attn32.onnx", half=False)
    attention(tmp_path / "attn_half.onnx", half=True)
    row = TensorCompare(order=1, op_name="softmax", op_type="SoftmaxV2", original_names=(),
                        slot="output:0", golden_name="softmax", dtype="float16",
                        golden_dtype="float16")
    assert not in_float16(row, str(tmp_path / "attn32.onnx"))
    assert in_float16(row, str(tmp_path / "attn_half.onnx"))
    assert not in_float16(row)  # no model known: a float16 golden alone is no proof (H341)


def test_a_float16_golden_without_its_model_keeps_the_high_precision_probe():
    """A float32 model's golden stored as float16 by another tool, the device's conv1 turned to
    +Inf: assert_accuracy, which knows no model, said 'the ONNX model itself computes conv1 in
    float16 ... no mode' and dropped the HIGH_PRECISION probe a float32 golden gets (H341)."""
    from pytest_ascend_accuracy import AccuracyFailure, DumpSet, assert_accuracy

    x = np.random.default_rng(0).standard_normal(256).astype(np.float32)
    golden = {"conv1": [x.astype(np.float16)], "mul": [(x * 2).astype(np.float16)]}
    device = x.astype(np.float16)
    device[:40] = np.inf
    with pytest.raises(AccuracyFailure) as failed:
        assert_accuracy(DumpSet.from_arrays({"conv1": [device], "mul": golden["mul"]}),
                        DumpSet.from_arrays(golden), 0.99)
    hint = [line for line in str(failed.value).splitlines() if line.startswith("next step")]
    assert hint and "HIGH_PRECISION" in hint[0], hint
    assert "itself computes" not in hint[0], hint

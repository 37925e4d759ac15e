"""A baseline records the numerics of its own model (an upgrade trial: numerics 10, which
rounds the ops inside an If kept as one operator, made every emulator baseline "rebaseline
required", If or not, with op lines the same after the regen; two releases then rewrote each
other's files). A model without such an If records 9, one with it 10."""
import sys
from pathlib import Path

import onnx

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.baseline.env import environment_for
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.graph.onnx_graph import ort_version
from pytest_ascend_accuracy.testing import models

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_control_flow import flat_model, if_model  # noqa: E402


def _toolkit(tmp_path, path):
    converted = EmulatorBackend(Cache(tmp_path / "cache")).convert(path)
    return environment_for(converted)["toolkit_version"]


def test_a_model_with_an_if_kept_as_one_op_records_numerics_10(tmp_path):
    assert _toolkit(tmp_path, if_model(tmp_path / "ifov.onnx")) == \
        f"emulator-10/onnxruntime-{ort_version()}"


def test_models_without_one_record_numerics_9(tmp_path):
    onnx.save(models.passing_mlp(), str(tmp_path / "m.onnx"))
    for path in (tmp_path / "m.onnx", flat_model(tmp_path / "flat.onnx")):
        assert _toolkit(tmp_path, path) == f"emulator-9/onnxruntime-{ort_version()}"


def _toolkit_in(tmp_path, path, mode):
    converted = EmulatorBackend(Cache(tmp_path / "cache")).convert(path, mode=mode)
    return environment_for(converted)["toolkit_version"]


def test_a_branch_constant_reaching_an_op_kept_in_float32_records_numerics_12(tmp_path):
    """12: an If branch's Constant is a weight, no longer rounded to float16 as an op's output;
    only a conversion where it reaches an op that does not round its inputs to float16 computes
    other numbers (keep_dtype of the Conv it feeds, high precision's vector ops). The same
    model in the default mode, or with its weights outer initializers, records 10 still."""
    from pytest_ascend_accuracy.core.modes import Mode
    from test_branch_constant_weights import conv_if_model

    const = conv_if_model(tmp_path / "c.onnx", "constant")
    init = conv_if_model(tmp_path / "i.onnx", "initializer")
    kept = Mode(keep_dtype=("OpType::Conv2D",))
    high = Mode(precision_mode="allow_fp32_to_fp16")  # (the Mul by a ConstantOfShape: vector)
    version = f"/onnxruntime-{ort_version()}"
    assert _toolkit_in(tmp_path, const, kept) == "emulator-12" + version
    assert _toolkit_in(tmp_path, const, high) == "emulator-12" + version
    assert _toolkit_in(tmp_path, const, Mode()) == "emulator-10" + version
    assert _toolkit_in(tmp_path, const, Mode(keep_dtype=("OpType::Mul",))) == \
        "emulator-12" + version  # (its ConstantOfShape input: a weight of the branch)
    assert _toolkit_in(tmp_path, init, kept) == "emulator-10" + version


def test_a_fusion_the_documented_conditions_refuse_records_numerics_13(tmp_path):
    """Review RF: 52fcf3a left some LayerNorms and MatMul+Adds unfused (numbers move) and bumped
    nothing, so a baseline from before read "REGRESSED: the file was edited or cut". Only a
    model with such a pattern records 13; a LayerNorm that still fuses records what it did."""
    import numpy as np
    from test_fusion_limits import _ln

    refused, fused = tmp_path / "ln_eps2d.onnx", tmp_path / "ln.onnx"
    onnx.save(_ln(eps=np.full((1, 1), 1e-5, np.float32)), str(refused))
    onnx.save(_ln(), str(fused))
    assert _toolkit(tmp_path, refused) == f"emulator-13/onnxruntime-{ort_version()}"
    assert _toolkit(tmp_path, fused) == f"emulator-9/onnxruntime-{ort_version()}"


def test_a_float16_only_soc_is_another_environment_for_a_baseline(tmp_path):
    """Review RS: a baseline written with no SoC, run with --soc-version=Ascend310P3 (kept Cube
    ops compute from float16 inputs there), read REGRESSED; an A2 SoC computes as none does."""
    onnx.save(models.passing_mlp(), str(tmp_path / "m.onnx"))

    def soc(name):
        backend = EmulatorBackend(Cache(tmp_path / "cache"), soc_version=name)
        return environment_for(backend.convert(tmp_path / "m.onnx"))["soc_version"]

    assert soc(None) == soc("Ascend910B1") == "emulator"
    assert soc("Ascend310P3") == "emulator (cube-fp16)"

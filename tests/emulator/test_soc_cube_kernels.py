"""The SoC the emulator models picks whether a kept Cube op computes from float32 inputs (audit
36 B F1: a kept Conv ran wholly in float32 on every chip, though CANN gives Conv2D/MatMul
float32 inputs only on Atlas A2/A3 and 200I/500 A2 products; on Atlas inference (310P) and
training (910) ones --keep_dtype falls back to float16 inputs with a float32 output). No SoC
keeps the numbers of before (float32 Cube kernels); an unknown name is refused."""
import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy import keep_dtype
from pytest_ascend_accuracy.backends.emulator.rounding import (
    cube_fp32_kernels, cube_kernels_label, kept_precision, unit_precision)
from pytest_ascend_accuracy.core.modes import Mode
from pytest_ascend_accuracy.errors import ConfigError

CUBE_TYPES = ("Conv", "ConvTranspose", "MatMul", "Gemm")


@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend910B2C", "Ascend910B4-1", "Ascend910_93",
                                 "Ascend910_9391", "Ascend910_9362", "Ascend910_9363",
                                 "Ascend910_9361", "Ascend310B1", "Ascend310B4", "Ascend950PR",
                                 "Ascend950DT"])
def test_atlas_a2_a3_200i_500_a2_and_350_socs_have_float32_cube_kernels(soc):
    """By family (review RS: exact names refused Ascend950PR/DT, Atlas 350, and A3's
    Ascend910_9363, real SoCs an ini shared with device runs names)."""
    assert cube_fp32_kernels(soc) is True and cube_kernels_label(soc) == ""  # as no SoC


@pytest.mark.parametrize("soc", ["Ascend310", "Ascend310P1", "Ascend310P3", "Ascend310P7",
                                 "Ascend310P3vir02", "Ascend910", "Ascend910A", "Ascend910ProA",
                                 "Ascend910PremiumA", "Ascend910ProB",
                                 # an Ascend910 variant, not a 910B (no digit: CANN's family map)
                                 "Ascend910B"])
def test_atlas_inference_and_training_socs_take_float16_only(soc):
    assert cube_fp32_kernels(soc) is False and cube_kernels_label(soc) == "cube-fp16"


def test_no_soc_keeps_the_float32_cube_kernels_of_before():
    assert cube_fp32_kernels(None) is True and cube_kernels_label(None) == ""


@pytest.mark.parametrize("soc, closest", [("Ascend910C1", "closest: Ascend910"),
                                          ("ascend310p3", "closest: "), ("Atlas300I", "")])
def test_an_unknown_soc_is_refused_naming_the_known_families(soc, closest):
    with pytest.raises(ConfigError) as err:
        cube_fp32_kernels(soc, "ascend_soc_version")
    text = str(err.value)
    assert text.startswith(f"ascend_soc_version: unknown SoC {soc!r} for the emulator")
    assert closest in text
    assert ("it knows float32 cube kernels: Ascend910B1-B4 (Atlas A2), Ascend910_93xx (A3), "
            "Ascend310B* (Atlas 200I/500 A2), Ascend950* (Atlas 350); float16 only: Ascend310, "
            "Ascend310P* (Atlas 300I/300V), Ascend910/910A/910B/910ProA/910ProB/910PremiumA "
            "(Atlas training)") in text


def _prec(mode, anchor, cube_fp32=None):
    return unit_precision(mode, anchor_type=anchor, member_names=("op",), member_types=(anchor,),
                          cube_fp32=cube_fp32)


@pytest.mark.parametrize("anchor", CUBE_TYPES)
def test_a_kept_cube_op_is_fp16in_without_float32_cube_kernels(anchor):
    kept = keep_dtype(["op"])
    assert _prec(kept, anchor, cube_fp32=False) == "fp16in"
    assert _prec(kept, anchor, cube_fp32=True) == "fp32"
    assert _prec(kept, anchor) == "fp32"  # no chip named: as before
    # force_fp32 prefers float16 inputs with a float32 output on every chip (--precision_mode)
    for fp32 in (False, True):
        assert _prec(Mode(precision_mode="force_fp32"), anchor, cube_fp32=fp32) == "fp16in"
    # a kept vector op stays float32 on every chip
    assert _prec(kept, "Add", cube_fp32=False) == "fp32"
    assert kept_precision(True, False) == "fp16in" and kept_precision(False, False) == "fp32"


def _conv_model(path):
    w = numpy_helper.from_array(np.ones((2, 1, 3), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 6])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_the_backend_converts_a_kept_conv_by_its_soc(tmp_path):
    """``EmulatorBackend(cache, soc_version=...)``: its class in the key, the SoC in describe();
    a kept Conv fp16in on Ascend310P3, fp32 on Ascend910B1 and with no SoC."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.backends.emulator.plan import PLAN_FILE
    from pytest_ascend_accuracy.core.cache import Cache

    path = _conv_model(tmp_path / "m.onnx")
    cache = Cache(tmp_path / "cache")
    seen = {}
    for soc in (None, "Ascend310P3", "Ascend910B1"):
        backend = EmulatorBackend(cache, soc_version=soc)
        converted = backend.convert(path, keep_dtype(["conv"]))
        plan = json.loads((converted.path.parent / PLAN_FILE).read_text())
        seen[soc] = (converted.key, [op["precision"] for op in plan["ops"]])
    assert seen[None][1] == seen["Ascend910B1"][1] == ["fp32"]
    assert seen["Ascend310P3"][1] == ["fp16in"]
    # keyed by class: no SoC and an A2 one compute alike and share a conversion
    assert seen[None][0] == seen["Ascend910B1"][0] != seen["Ascend310P3"][0]
    assert ", soc Ascend310P3" in EmulatorBackend(cache, soc_version="Ascend310P3").describe()
    assert "soc" not in EmulatorBackend(cache).describe()
    with pytest.raises(ConfigError, match="--soc-version: unknown SoC 'Ascend999'"):
        EmulatorBackend(cache, soc_version="Ascend999")


def test_make_backend_gives_the_emulator_its_soc(tmp_path):
    from pytest_ascend_accuracy.backends import make_backend
    from pytest_ascend_accuracy.core.cache import Cache

    backend = make_backend("emulator", Cache(tmp_path / "c"), soc_version="Ascend310P3")
    assert backend.soc_version == "Ascend310P3" and backend.cube_fp32 is False

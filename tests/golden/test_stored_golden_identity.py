"""A stored golden records the model and inputs it was written from (golden.json), is refused
when used by a test of another model or other inputs, keeps its op inputs through a rewrite,
and its tensors keep the dtype they were written with."""
import hashlib
import json
import os
import warnings

import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.core.regen import Regen
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.golden import stored
from pytest_ascend_accuracy.golden import stored_record as rec
from pytest_ascend_accuracy.golden.onnxruntime_golden import GOLDEN_FORMAT, golden_dump
from pytest_ascend_accuracy.graph.content_digests import inputs_digest
from pytest_ascend_accuracy.testing import models as tiny_models


def inputs_of(seed):
    return {"x": np.random.default_rng(seed).standard_normal((2, 4)).astype(np.float32)}


def computer(model, inputs, dtype=np.float32, calls=None):
    """A compute() as the plugin's: a golden DumpSet carrying what it was computed from."""
    def compute():
        if calls is not None:
            calls.append(1)
        dump = DumpSet.from_arrays({"fc1_MatMul": [np.arange(6, dtype=dtype).reshape(2, 3)],
                                    "relu1": [np.ones(4, dtype)]},
                                   inputs={"fc1_MatMul": [inputs["x"], np.ones((4, 3), dtype)]})
        dump.meta[rec.SOURCE_META] = rec.identity_of(model, inputs).as_meta()
        return dump
    compute.identity = rec.identity_of(model, inputs)  # what the plugin passes to obtain
    return compute


def obtain(policy, golden, compute):
    """``policy.obtain`` as the plugin calls it: with the identity of the model and inputs."""
    return policy.obtain(golden, compute, compute.identity)


def test_written_golden_records_model_and_inputs_and_still_loads(tmp_path, model):
    golden = tmp_path / "golden" / "mlp"
    inputs = inputs_of(0)
    _, status = obtain(stored.GoldenPolicy(), golden, computer(model, inputs))
    assert status == stored.WRITTEN_MISSING
    record = json.loads((golden / rec.RECORD_FILE).read_text())
    assert record["model_sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert record["model"] == "../../models/mlp.onnx"
    assert record["inputs_digest"] == inputs_digest(inputs)
    assert record["golden_format"] == GOLDEN_FORMAT and record["input_shape"] == {}
    assert record["inputs_stored"] is False
    assert set(record["tensors"].values()) == {"float32"} and len(record["tensors"]) == 2
    back = load_dump(golden)  # the record is not read as a tensor
    assert sorted(op.name for op in back) == ["fc1_MatMul", "relu1"]


@pytest.mark.parametrize("other", ["inputs", "model"])
def test_a_golden_of_other_inputs_or_another_model_is_refused_before_use(tmp_path, model, other):
    golden = tmp_path / "golden" / "mlp"
    obtain(stored.GoldenPolicy(), golden, computer(model, inputs_of(0)))
    before = sorted((p.name, p.read_bytes()) for p in golden.iterdir())
    inputs, used_model = inputs_of(0), model
    if other == "inputs":
        inputs = inputs_of(1)
    else:
        used_model = model.parent / "other.onnx"
        onnx.save(tiny_models.overflow_model(), str(used_model))
    with pytest.raises(stored.StoredGoldenMismatch) as err:
        obtain(stored.GoldenPolicy(show=lambda p: "shown/" + os.path.basename(p)), golden,
               computer(used_model, inputs))
    text = str(err.value)
    assert text.startswith("shown/mlp: ")
    assert (f"{other}: written from" in text) and "--accuracy-regen" in text
    assert ("model:" in text) == (other == "model") and ("inputs:" in text) == (other == "inputs")
    assert sorted((p.name, p.read_bytes()) for p in golden.iterdir()) == before  # never rewritten


def test_regen_rewrites_a_mismatched_golden_and_the_next_use_passes(tmp_path, model):
    golden = tmp_path / "golden" / "mlp"
    obtain(stored.GoldenPolicy(), golden, computer(model, inputs_of(0)))
    heard = []
    regen = stored.GoldenPolicy(Regen.FAILING, on_recovery=lambda p, note: heard.append(note))
    with pytest.raises(stored.StoredGoldenMismatch, match="rewrote it from"):
        obtain(regen, golden, computer(model, inputs_of(1)))
    assert heard == [stored.REWRITTEN_MISMATCH]
    record = json.loads((golden / rec.RECORD_FILE).read_text())
    assert record["inputs_digest"] == inputs_digest(inputs_of(1))
    _, status = obtain(stored.GoldenPolicy(), golden, computer(model, inputs_of(1)))
    assert status == stored.USED


def test_matching_golden_is_used_without_computing_it(tmp_path, model):
    golden = tmp_path / "golden" / "mlp"
    obtain(stored.GoldenPolicy(), golden, computer(model, inputs_of(0)))
    cache_is_none = None  # golden_dump would fail on it: a golden that matches is only read

    def compute():
        return golden_dump(model, inputs_of(0), cache=cache_is_none)

    _, status = stored.GoldenPolicy().obtain(golden, compute, rec.identity_of(model, inputs_of(0)))
    assert status == stored.USED


def test_a_golden_without_record_is_used_as_before(tmp_path, model):
    golden = tmp_path / "golden" / "mlp"
    obtain(stored.GoldenPolicy(), golden, computer(model, inputs_of(0)))
    (golden / rec.RECORD_FILE).unlink()
    _, status = obtain(stored.GoldenPolicy(), golden, computer(model, inputs_of(1)))
    assert status == stored.USED


@pytest.mark.parametrize("regen", ["failing", "all"])
def test_a_rewrite_keeps_the_op_inputs_the_golden_held(tmp_path, model, regen):
    golden = tmp_path / "golden" / "mlp"
    compute = computer(model, inputs_of(0))
    stored.store_golden(golden, compute(), store_inputs=True)
    held = sorted(p.name for p in golden.glob("input_*.npy"))
    assert held
    relu = next(golden.glob("relu1.0.*.npy"))  # other bytes than compute() gives: a real
    np.save(relu, np.zeros_like(np.load(relu)))  # rewrite (the same bytes are left as they are)
    if regen == "failing":
        status = stored.GoldenPolicy(Regen.FAILING).after_failure(golden, compute)
        assert status == stored.REWRITTEN_FAILED + stored.KEPT_INPUTS
    else:
        _, status = obtain(stored.GoldenPolicy(Regen.ALL), golden, compute)
    assert sorted(p.name for p in golden.glob("input_*.npy")) == held
    assert json.loads((golden / rec.RECORD_FILE).read_text())["inputs_stored"] is True


def test_a_tensor_resaved_as_float16_is_an_error_naming_the_file(tmp_path, model):
    golden = tmp_path / "golden" / "mlp"
    compute = computer(model, inputs_of(0))
    obtain(stored.GoldenPolicy(), golden, compute)
    relu = next(golden.glob("relu1.0.*.npy"))
    np.save(relu, np.load(relu).astype(np.float16))
    with pytest.raises(stored.StoredGoldenMismatch, match=rf"{relu.name} \(float16, written as float32\)"):
        obtain(stored.GoldenPolicy(), golden, compute)


def test_a_float16_models_golden_is_not_refused(tmp_path, model):
    golden = tmp_path / "golden" / "mlp"
    compute = computer(model, inputs_of(0), dtype=np.float16)
    obtain(stored.GoldenPolicy(), golden, compute)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dump, status = obtain(stored.GoldenPolicy(), golden, compute)
    assert status == stored.USED and dump["relu1"].output().dtype == "float16"


def test_float16_in_a_golden_without_record_is_warned_about(tmp_path, model):
    golden = tmp_path / "golden" / "mlp"
    compute = computer(model, inputs_of(0))
    obtain(stored.GoldenPolicy(), golden, compute)
    (golden / rec.RECORD_FILE).unlink()
    relu = next(golden.glob("relu1.0.*.npy"))
    np.save(relu, np.load(relu).astype(np.float16))
    with pytest.warns(UserWarning, match=rf"{relu.name} \(float16\)"):
        obtain(stored.GoldenPolicy(), golden, compute)


def test_an_os_error_of_computing_the_golden_keeps_its_own_file_name(tmp_path):
    """A model file missing while the golden is computed read "cannot write stored golden: No
    such file or directory", the file's name lost (code review of 0592dc2): only the write's
    own errors are GoldenWriteErrors."""
    def compute():
        raise FileNotFoundError(2, "No such file or directory", "models/weights.bin")

    with pytest.raises(FileNotFoundError) as info:
        stored.GoldenPolicy().obtain(tmp_path / "g", compute)
    assert info.value.filename == "models/weights.bin"


@pytest.mark.parametrize("check", [rec.identity_of, lambda m, x: golden_dump(m, x, cache=None)],
                         ids=["identity_of", "golden_dump"])
def test_a_bare_array_is_refused_naming_the_models_inputs(model, check):
    """Both checks name the inputs of the model they are given (its file, read without
    weights only then), in the same words."""
    from pytest_ascend_accuracy.errors import ConfigError

    with pytest.raises(ConfigError) as exc:
        check(model, inputs_of(0)["x"])
    assert str(exc.value) == ("inputs of 'mlp': expected a mapping {input name: array}, got "
                              "ndarray; the model's inputs: x (give {'x': ...})")

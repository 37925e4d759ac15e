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

"""Project fixtures: where the models are and the inputs they are tested on.

Everything accuracy-related (backends, golden dumps, the cache, comparison) comes from the
pytest-ascend-accuracy plugin; this file only knows about this project's models.
"""
from pathlib import Path

import pytest

MODELS = Path(__file__).parent / "models"


@pytest.fixture
def model_file():
    """``model_file("overflow")`` -> path of ``models/overflow.onnx``."""
    def get(name: str) -> Path:
        return MODELS / f"{name}.onnx"
    return get


@pytest.fixture
def sample_inputs(accuracy_inputs):
    """``sample_inputs(model, seed=0)`` -> {input name: array}, seeded like a YAML suite's
    ``inputs: {seed: 0}`` (uniform [0, 1) floats, the way msit makes random inputs). Taken from
    the plugin's ``accuracy_inputs``, which records the seed: with per-operator baselines on
    (ini ``ascend_accuracy_max_drop``), a rerun remakes the same inputs."""
    def make(model, seed: int = 0):
        return accuracy_inputs(model, seed=seed)
    return make

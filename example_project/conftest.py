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
def sample_inputs():
    """``sample_inputs(model, seed=0)`` -> {input name: array}, seeded like a YAML suite's
    ``inputs: {seed: 0}`` (uniform [0, 1) floats, the way msit makes random inputs)."""
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    def make(model, seed: int = 0):
        return make_inputs(model, seed=seed)
    return make

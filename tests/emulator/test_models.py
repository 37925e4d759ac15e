"""The example models: small, deterministic, and the committed files match their builders."""
import importlib.util
from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx")

from pytest_ascend_accuracy.testing import models  # noqa: E402

MODELS_DIR = Path(__file__).resolve().parents[2] / "example_project" / "models"


@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_committed_model_matches_its_builder_and_is_small(name):
    path = MODELS_DIR / f"{name}.onnx"
    assert path.stat().st_size < 100_000
    committed = onnx.load(str(path))
    onnx.checker.check_model(committed)
    assert committed.graph == models.MODELS[name]().graph, f"regenerate with {MODELS_DIR / 'make_models.py'}"


def test_builders_are_deterministic():
    for build in models.MODELS.values():
        assert build().SerializeToString() == build().SerializeToString()


def test_make_models_script_writes_every_model(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("make_models", MODELS_DIR / "make_models.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main([str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{n}.onnx" for n in models.MODELS)
    assert "wrote" in capsys.readouterr().out

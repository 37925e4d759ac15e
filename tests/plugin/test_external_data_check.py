"""A check of a model whose weights live in ONNX external data, as a user writes it: the
weights stay in their file (the converted model in the cache keeps its own beside it)."""
import onnx
import pytest

from pytest_ascend_accuracy.graph import external
from pytest_ascend_accuracy.testing import models as tiny_models


@pytest.fixture
def by_reference(monkeypatch):
    # in the suite's tiny model, only big tensors (> 100 bytes) stay in the data file
    monkeypatch.setattr(external, "LOAD_BELOW", 100)


def test_a_check_of_a_model_with_external_data(pytester, by_reference):
    folder = pytester.path / "models"
    folder.mkdir()
    onnx.save_model(tiny_models.transformer_block(), str(folder / "block.onnx"),
                    save_as_external_data=True, all_tensors_to_one_file=True,
                    location="block.onnx.data", size_threshold=0)
    pytester.makepyfile("""
        from pytest_ascend_accuracy import accuracy
        from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

        @accuracy(threshold=0.99)
        def test_block(ascend_model, golden_dump, check_accuracy):
            inputs = make_inputs("models/block.onnx")
            actual = ascend_model("models/block.onnx").run(inputs)
            check_accuracy(actual, golden_dump("models/block.onnx", inputs))
    """)
    pytester.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    cache = pytester.path / ".ascend-accuracy"
    data = [p for p in cache.glob("emulator/*/*/model.onnx.data")]
    assert len(data) == 1 and data[0].stat().st_size > 20_000  # the converted weights

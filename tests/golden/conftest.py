"""Shared helpers for the stored-golden tests that run the plugin through ``pytester``.

As in ``tests/plugin/conftest.py``: numpy, onnx and onnxruntime are imported here once, before
an in-process inner run takes its snapshot of ``sys.modules`` (numpy cannot be imported twice
in one process)."""
import numpy  # noqa: F401
import onnx
import onnxruntime  # noqa: F401
import pytest

import pytest_ascend_accuracy.plugin  # noqa: F401
from pytest_ascend_accuracy.testing import models as tiny_models

#: a test with a stored golden at ``golden/mlp`` (relative to the test file)
STORED_TEST = """
from pytest_ascend_accuracy import accuracy

@accuracy(threshold=0.99)
def test_stored(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/passing_mlp.onnx", seed=0)
    golden = golden_dump("models/passing_mlp.onnx", inputs, path="golden/mlp")
    check_accuracy(ascend_model("models/passing_mlp.onnx").run(inputs), golden)
"""


@pytest.fixture
def stored_project(pytester):
    """A pytester project whose one test compares against the stored golden ``golden/mlp``,
    written by a first run (which fails, naming it). Returns the golden's path."""
    directory = pytester.mkdir("models")
    onnx.save(tiny_models.passing_mlp(), str(directory / "passing_mlp.onnx"))
    pytester.makepyfile(test_stored=STORED_TEST)
    pytester.runpytest().assert_outcomes(failed=1)  # written (missing)
    golden = pytester.path / "golden" / "mlp"
    assert (golden / "golden.json").is_file()
    return golden


@pytest.fixture
def model(mlp_onnx_file):
    """``models/mlp.onnx`` (the tiny passing_mlp) under the test's temp folder."""
    return mlp_onnx_file

"""Shared helpers for the plugin tests (what every pytester run needs imported first:
tests/conftest.py, ``_modules_imported_once``)."""
import onnx
import pytest

from pytest_ascend_accuracy.testing import models as tiny_models

#: a test module that exercises every fixture on the tiny models (used by several tests)
ACCURACY_TESTS = '''
from pytest_ascend_accuracy import accuracy, keep_dtype
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.99)
def test_mlp(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/passing_mlp.onnx")
    actual = ascend_model("models/passing_mlp.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/passing_mlp.onnx", inputs))


@accuracy(threshold=0.95, modes=["default", "high_precision", keep_dtype(["norm"])])
def test_overflow(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/overflow.onnx")
    actual = ascend_model("models/overflow.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/overflow.onnx", inputs))
'''


@pytest.fixture
def models_dir(pytester):
    """Tiny ONNX models saved under the pytester project's ``models/``."""
    import onnx

    directory = pytester.mkdir("models")
    for name in ("passing_mlp", "overflow"):
        onnx.save(tiny_models.MODELS[name](), str(directory / f"{name}.onnx"))
    return directory


#: the overflow model's ``norm`` op renamed as exported models name ops (dots, slashes, colons)
NAME = "enc/blk.0:norm"


@pytest.fixture
def block_model(pytester):
    """``models/block.onnx``: the overflow model with its ``norm`` op named ``NAME``."""
    model = tiny_models.overflow_model()
    for node in model.graph.node:
        if node.name == "norm":
            node.name = NAME
    directory = pytester.mkdir("models")
    onnx.save(model, str(directory / "block.onnx"))
    return directory / "block.onnx"


#: one test whose golden is stored in the project (golden/mlp)
STORED_GOLDEN_TEST = """
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

@accuracy(threshold=0.99)
def test_stored(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/passing_mlp.onnx")
    golden = golden_dump("models/passing_mlp.onnx", inputs, path="golden/mlp")
    check_accuracy(ascend_model("models/passing_mlp.onnx").run(inputs), golden)
"""


@pytest.fixture
def stored_golden_test():
    """``STORED_GOLDEN_TEST``, for a test module that cannot import this conftest (with other
    test folders on one command line, ``from conftest import`` finds another one)."""
    return STORED_GOLDEN_TEST

"""An accuracy test of a model reached through a symbolic link, as the Hugging Face hub cache
lays it out (``snapshots/<rev>/model.onnx -> ../../blobs/<sha>``), on a cold cache: with its
weights in external data (the data file a link into ``blobs`` too), and a big file whose own
weights are read as references into it (``wire``, files over 64 MB). T2: 12 of 12 Faster R-CNN
checks failed "External data path escapes model directory" where onnxruntime loads the path."""
import os

import onnx
import pytest

from pytest_ascend_accuracy.graph import external, wire
from pytest_ascend_accuracy.testing import models as tiny_models

TEST = """
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

MODEL = "hub/snapshots/rev1/model.onnx"


@accuracy(threshold=0.99, modes=["default", "high_precision"])
def test_block(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(MODEL)
    actual = ascend_model(MODEL).run(inputs)
    check_accuracy(actual, golden_dump(MODEL, inputs))
"""


@pytest.mark.parametrize("layout", ["external_data", "big_file"])
def test_a_hub_cache_model_is_checked(pytester, monkeypatch, layout):
    monkeypatch.setattr(external, "LOAD_BELOW", 100)  # the weight matrices stay in their file
    blobs, snapshot = pytester.path / "hub" / "blobs", pytester.path / "hub" / "snapshots" / "rev1"
    blobs.mkdir(parents=True)
    snapshot.mkdir(parents=True)
    if layout == "external_data":
        onnx.save_model(tiny_models.transformer_block(), str(blobs / "model.onnx"),
                        save_as_external_data=True, all_tensors_to_one_file=True,
                        location="model.onnx_data", size_threshold=100)
        os.rename(blobs / "model.onnx_data", blobs / "2f0c")
        os.symlink("../../blobs/2f0c", snapshot / "model.onnx_data")
    else:  # read as a file over 64 MB is
        monkeypatch.setattr(wire, "SCAN_ABOVE", 0)
        monkeypatch.setattr(wire, "REF_ABOVE", 100)
        onnx.save_model(tiny_models.transformer_block(), str(blobs / "model.onnx"))
    os.rename(blobs / "model.onnx", blobs / "9f1c")
    os.symlink("../../blobs/9f1c", snapshot / "model.onnx")
    pytester.makepyfile(TEST)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert "escapes model directory" not in result.stdout.str()

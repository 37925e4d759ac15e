"""A sample the model under test refuses names the sample, the shapes and the fix. The
reference (onnxruntime on the ONNX model, whose batch is dynamic) took a sample of batch 2; the
model under test, converted at ``input_shape={"x": [1, 8]}``, refused it with "inputs of 'dyn':
input 'x' has shape [2, 8], the model declares [1, 8]": no sample named, in a check of
thousands. The fix it prints (convert without ``input_shape``) is applied, in a Python test and
in a YAML entry, and the check then runs to its verdict."""
import json

import numpy as np
import onnx
import pytest

from .conftest import spiky_model

TEST = """
import numpy as np
from pytest_ascend_accuracy import accuracy

SAMPLES = [{{"x": np.full((1, 8), 0.1, np.float32)}}, {{"x": np.full((2, 8), 0.1, np.float32)}}]


@accuracy(modes=["high_precision"])
def test_batches(ascend_model, check_dataset):
    check_dataset(ascend_model("dyn.onnx"{shape}), SAMPLES, labels=[0, [0, 0]])
"""

SUITE = """models:
  - name: dyn
    model: dyn.onnx
    modes: [high_precision]
{shape}    dataset: {{samples: samples, labels: labels.json, metric: top1}}
"""

SAID = ("sample '1': the model under test (inputs of 'dyn'): input 'x' has shape [2, 8], the "
        "model declares [1, 8]; the onnxruntime reference took it: the model under test was "
        "converted at input_shape={'x': [1, 8]}, one shape for every sample: convert it without "
        "input_shape (ascend_model(model); in a YAML suite, no input_shape: in its entry) to "
        "convert it at each sample's shape, or give every sample that shape")


@pytest.fixture
def project(pytester):
    onnx.save(spiky_model(dynamic_batch=True), str(pytester.path / "dyn.onnx"))  # x: [N, 8]
    (pytester.path / "samples").mkdir()
    np.savez(pytester.path / "samples" / "0.npz", x=np.full((1, 8), 0.1, np.float32))
    np.savez(pytester.path / "samples" / "1.npz", x=np.full((2, 8), 0.1, np.float32))
    (pytester.path / "labels.json").write_text(json.dumps({"0": 0, "1": [0, 0]}))
    return pytester


def test_a_python_check_names_the_sample_and_converting_per_shape_runs_it(project):
    project.makepyfile(test_ds=TEST.format(shape=', input_shape={"x": [1, 8]}'))
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert f"ascend-accuracy configuration error: {SAID}" in result.outlines
    project.makepyfile(test_ds=TEST.format(shape=""))  # as it says: without input_shape
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_yaml_dataset_item_names_the_sample_and_no_input_shape_runs_it(project):
    project.makefile(".yaml", accuracy_dyn=SUITE.format(shape="    input_shape: {x: [1, 8]}\n"))
    result = project.runpytest("-p", "no:cacheprovider", "-k", "dataset")
    result.assert_outcomes(failed=1, deselected=1)
    assert f"ascend-accuracy configuration error: {SAID}" in result.outlines
    project.makefile(".yaml", accuracy_dyn=SUITE.format(shape=""))  # no input_shape: in it
    project.runpytest("-p", "no:cacheprovider", "-k", "dataset").assert_outcomes(
        passed=1, deselected=1)

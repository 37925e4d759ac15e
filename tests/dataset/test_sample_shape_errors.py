"""A sample of another shape than the model under test was converted at: named, with the fix
worded for whoever converted the model, and that fix applied where it is printed.

The reference (onnxruntime on the ONNX model, whose batch is dynamic) takes samples of batch 1
and 2; the model under test converted at ``x: [1, 8]`` refuses the batch-2 one. The advice
said "convert it without input_shape (ascend_model(model); in a YAML suite, no input_shape: in
its entry)" in every context: ``ascend-accuracy dataset`` without ``--input-shape`` and
``load_device_model`` without ``input_shape`` then failed ("dimension 0 ('N') is dynamic"), and
a YAML entry without ``input_shape:`` failed its own accuracy item (its test ran ``-k dataset``,
which deselected it). Now the library and the CLI convert such a model at each sample's shape,
as ``ascend_model(m)`` does, and a YAML dataset item always does, whatever shape the entry gives
its accuracy item (each suite runs whole: both items). A refusal that is not about the shape
gets no shape advice."""
import json

import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.cli import main
from pytest_ascend_accuracy.dataset import check_dataset, run_dataset_check
from pytest_ascend_accuracy.errors import ConfigError

from .conftest import spiky_model

SAMPLES = [{"x": np.full((1, 8), 0.1, np.float32)}, {"x": np.full((2, 8), 0.1, np.float32)}]
LABELS = [0, [0, 0]]

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

REFUSED = ("sample '1': the model under test (inputs of 'dyn'): input 'x' has shape [2, 8], "
           "the model declares [1, 8]; the onnxruntime reference took it: the model under test "
           "was converted at one shape for every sample, ")
EACH = ", and it converts at each sample's shape; or give every sample that shape"


@pytest.fixture
def project(pytester):
    onnx.save(spiky_model(dynamic_batch=True), str(pytester.path / "dyn.onnx"))  # x: [N, 8]
    (pytester.path / "samples").mkdir()
    for i, sample in enumerate(SAMPLES):
        np.savez(pytester.path / "samples" / f"{i}.npz", **sample)
    (pytester.path / "labels.json").write_text(json.dumps({"0": 0, "1": [0, 0]}))
    return pytester


def test_a_python_check_names_the_sample_and_its_fix_runs_it(project):
    project.makepyfile(test_ds=TEST.format(shape=', input_shape={"x": [1, 8]}'))
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert (f"ascend-accuracy configuration error: {REFUSED}input_shape={{'x': [1, 8]}}: drop "
            f"input_shape= from its ascend_model(...) call{EACH}") in result.outlines
    project.makepyfile(test_ds=TEST.format(shape=""))  # as it says: input_shape= dropped
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


@pytest.mark.parametrize("shape", ["    input_shape: {x: [1, 8]}\n",
                                   "    inputs: {seed: 0, shapes: {x: [1, 8]}}\n"])
def test_a_yaml_dataset_item_converts_per_sample_shape_beside_the_entrys_accuracy_item(
        project, shape):
    """The accuracy item needs a shape for its seeded input ('N' is dynamic); the dataset item
    takes each sample's. The whole suite runs: both items pass."""
    project.makefile(".yaml", accuracy_dyn=SUITE.format(shape=shape))
    result = project.runpytest("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*accuracy_dyn.yaml::dyn?high_precision? PASSED*",
                                 "*accuracy_dyn.yaml::dyn-dataset?high_precision? PASSED*"])


def test_the_library_names_the_sample_and_its_fix_runs_it(device, tmp_path):
    path = tmp_path / "dyn.onnx"
    onnx.save(spiky_model(dynamic_batch=True), str(path))
    with pytest.raises(ConfigError) as info:
        check_dataset(device(path, "high_precision", input_shape={"x": [1, 8]}), SAMPLES,
                      labels=LABELS)
    assert str(info.value) == (f"{REFUSED}input_shape={{'x': [1, 8]}}: drop input_shape= from "
                               f"its load_device_model(...) call{EACH}")
    om = device(path, "high_precision")
    result = check_dataset(om, SAMPLES, labels=LABELS)  # dropped
    assert (result.passed, result.samples, result.rows) == (True, 2, 3)
    # one conversion per sample shape, said (on a device each is an ATC run: a review)
    assert result.conversions == 2 and result.properties()["dataset_conversions"] == "2"
    assert ("converted at 2 input shapes (one conversion each: give every sample one shape to "
            "convert once)") in result.message().splitlines()[1]
    again = check_dataset(om, SAMPLES[1:], labels=LABELS[1:])  # the same model, one shape
    assert again.conversions == 1 and "dataset_conversions" not in again.properties()


def test_the_cli_names_the_sample_and_its_fix_runs_it(project, capsys):
    args = ["dataset", "dyn.onnx", "samples", "--labels", "labels.json", "--mode",
            "high_precision", "--cache-dir", "cache"]
    assert main(args + ["--input-shape", "x:1,8"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"ascend-accuracy: error: {REFUSED}--input-shape x:1,8: run it without --input-shape"
        f"{EACH}")
    assert main(args) == 0  # as it says: without --input-shape
    out = capsys.readouterr().out
    assert out.startswith("dataset accuracy PASSED: top1 1.0000 on the device")
    assert ", converted at 2 input shapes (one conversion each" in out


class _Refusing:
    """A model under test converted at x: [1, 8] whose run refuses every sample: ``problem``."""

    def __init__(self, model, problem, aipp=None):
        self.model, self.problem, self.aipp = model, problem, aipp
        self.input_shape, self.name, self.mode = {"x": [1, 8]}, "dyn", "default"

    def outputs(self, inputs):
        raise ConfigError("inputs of 'dyn'", self.problem)


def test_a_refusal_of_another_kind_gets_no_shape_advice(tmp_path):
    """The advice was added to every refusal once ``input_shape`` was set: to a sample of the
    converted shape, and to an AIPP model's raw images (whose shape is never the model's)."""
    path = tmp_path / "dyn.onnx"
    onnx.save(spiky_model(dynamic_batch=True), str(path))
    for om, samples, labels in ((_Refusing(path, "the device is busy"), SAMPLES[:1], LABELS[:1]),
                                (_Refusing(path, "the image is 8 wide", aipp=object()),
                                 SAMPLES[1:], LABELS[1:])):
        with pytest.raises(ConfigError) as info:
            run_dataset_check(om, samples, labels=labels, trace=False)
        assert str(info.value) == (f"sample '0': the model under test (inputs of 'dyn'): "
                                   f"{om.problem}")


def test_a_per_shape_device_model_keeps_its_public_dump_root(tmp_path):
    """``PerShapeDeviceModel`` (exported by ``dataset``) lost ``dump_root`` when it moved onto
    ``graph.per_shape`` (a review); each run's dump still goes under the root given."""
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.dataset import PerShapeDeviceModel, load_device_model

    path = tmp_path / "dyn.onnx"
    onnx.save(spiky_model(dynamic_batch=True), str(path))
    dev = load_device_model(EmulatorBackend(Cache(tmp_path / "cache")), path,
                            dump_root=tmp_path / "dumps")
    assert isinstance(dev, PerShapeDeviceModel) and dev.dump_root == tmp_path / "dumps"
    dev.run(SAMPLES[1])
    assert list((tmp_path / "dumps").iterdir())

"""A misspelled model, AIPP file or YAML entry's file is an error with the closest real names of
its folder, spelled as the test (or the suite) spelled it: it said "not found" alone, though
models/overflow.onnx lay beside models/overflw.onnx. Each suggestion passes pasted."""
import onnx
import pytest

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp
from pytest_ascend_accuracy.testing import models as tiny_models

TEST = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb


@accuracy(threshold=0.95)
def test_model(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs({model!r})
    check_accuracy(ascend_model({model!r}).run(inputs), golden_dump({model!r}, inputs))


@accuracy()
def test_cam(ascend_model, check_preprocessing):
    check_preprocessing(ascend_model("models/net.onnx", aipp={aipp!r}), random_rgb(2, 16, 16),
                        reference=imagenet_reference)
'''
SUITE = "models:\n  - name: mlp\n    model: {model}\n"


@pytest.fixture
def project(pytester):
    (pytester.path / "models").mkdir()
    onnx.save(tiny_models.passing_mlp(), str(pytester.path / "models" / "passing_mlp.onnx"))
    onnx.save(tiny_models.conv_bn_relu(), str(pytester.path / "models" / "net.onnx"))
    (pytester.path / "aipp").mkdir()
    (pytester.path / "aipp" / "camera.cfg").write_text(imagenet_aipp(src_hw=(16, 16)))
    return pytester


def _closest(run, marker):
    line = next(s for s in run.outlines if marker in s and "(closest: " in s)
    return line.rsplit("(closest: ", 1)[1].split(")", 1)[0]


def test_a_misspelled_model_and_aipp_file_name_their_closest_files(project):
    project.makepyfile(test_paths=TEST.format(model="models/pasing_mlp.onnx",
                                              aipp="aipp/camra.cfg"))
    run = project.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=2)
    model = _closest(run, "ONNX model 'models/pasing_mlp.onnx' not found")
    aipp = _closest(run, "'aipp/camra.cfg' not found")
    assert (model, aipp) == ("models/passing_mlp.onnx", "aipp/camera.cfg")
    project.makepyfile(test_paths=TEST.format(model=model, aipp=aipp))
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_a_yaml_suites_misspelled_model_names_its_closest_file(project):
    (project.path / "accuracy_suite.yaml").write_text(SUITE.format(model="models/pasing_mlp.onnx"))
    run = project.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(errors=1)
    model = _closest(run, "file not found: models/pasing_mlp.onnx")
    assert model == "models/passing_mlp.onnx"
    (project.path / "accuracy_suite.yaml").write_text(SUITE.format(model=model))
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

"""A YAML dataset item's settings, as a YAML user sees them (a trial with the PP-OCR cls model):
op names checked before any sample runs, errors raised while it runs naming the suite's key,
the model named as its accuracy check names it, sample paths printed relative and normalised.
"""
from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy.errors import ConfigError

from .conftest import spiky_model, spiky_samples


def _two_classes():
    """y = x * 2 over 2 classes: too few for top5."""
    from onnx import helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["y"], name="double")], "pair",
        [helper.make_tensor_value_info("x", 1, [1, 2])],
        [helper.make_tensor_value_info("y", 1, [1, 2])],
        [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.fixture
def project(pytester):
    """models/spiky.v2.onnx (a dot in its name), samples/ (zero-padded ids, labels.json by id),
    unpadded/ (s0..s11, labels_list.json in sample order), models/pair.onnx."""
    (pytester.path / "models").mkdir()
    onnx.save(spiky_model(), str(pytester.path / "models" / "spiky.v2.onnx"))
    onnx.save(_two_classes(), str(pytester.path / "models" / "pair.onnx"))
    samples, labels = spiky_samples()
    for folder, name in (("samples", "{:03d}"), ("unpadded", "s{}")):
        (pytester.path / folder).mkdir()
        for i, s in enumerate(samples[:12]):
            np.savez(pytester.path / folder / f"{name.format(i)}.npz", **s)
    (pytester.path / "labels.json").write_text(
        json.dumps({f"{i:03d}": lab for i, lab in enumerate(labels[:12])}))
    (pytester.path / "labels_list.json").write_text(json.dumps(labels[:12]))
    (pytester.path / "pair").mkdir()
    for i in range(3):
        np.savez(pytester.path / "pair" / f"{i}.npz", x=np.array([[i, 1.0]], np.float32))
    (pytester.path / "pair.json").write_text(json.dumps([0, 1, 0]))
    return pytester


def test_misspelled_ignore_of_a_dataset_item_is_refused_before_any_sample_runs(project):
    """ignore: [Sofmax@0] was accepted by a dataset item whose device was right, and with a
    faulted device its late 'configuration error: @accuracy per_op/ignore: ...' replaced the
    dataset failure; both now stop at collection, naming the file, key and the model."""
    project.makefile(".yaml", accuracy_typo='''
models:
  - model: models/spiky.v2.onnx
    ignore: [amplfy2]
    dataset: {samples: samples, labels: labels.json, metric: top1}
''')
    result = project.runpytest("-p", "no:cacheprovider", "accuracy_typo.yaml")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "invalid accuracy suite: accuracy_typo.yaml: models[[]0[]].ignore: ignore entry "
        "'amplfy2' is not an op of model 'spiky.v2'; closest: 'amplify2', 'amplify1'"])
    assert "@accuracy" not in result.stdout.str()


def test_dataset_item_names_the_model_as_its_accuracy_check(project):
    """The dataset lines said spiky_v2 (the converted file's name), the grid spiky.v2."""
    project.makefile(".yaml", accuracy_name='''
models:
  - model: models/spiky.v2.onnx
    dataset: {samples: samples, labels: labels.json, metric: top1}
''')
    result = project.runpytest("-p", "no:cacheprovider", "accuracy_name.yaml")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["  spiky.v2  passed",
                                 "  spiky.v2 [[]default[]] top1 * device vs * reference*",
                                 "FAILED *spiky.v2-dataset[[]default[]] [[]spiky.v2, default[]]*"])
    assert "spiky_v2" not in result.stdout.str()


def test_errors_raised_while_a_dataset_item_runs_name_the_key_and_relative_paths(project):
    """'metric: top5 needs at least 5 classes' named no key; a labels list paired with
    unpadded names printed /abs/typo/ds_list/../../data/... (finding 7)."""
    project.makefile(".yaml", accuracy_run='''
models:
  - name: pair
    model: models/pair.onnx
    dataset: {samples: pair, labels: pair.json, metric: top5}
  - name: unpadded
    model: models/spiky.v2.onnx
    dataset: {samples: ./unpadded/../unpadded, labels: labels_list.json, metric: top1}
''')
    result = project.runpytest("-p", "no:cacheprovider", "accuracy_run.yaml", "-k", "dataset")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*configuration error: accuracy_run.yaml: models[[]0[]].dataset.metric: top5 needs at "
        "least 5 classes*",
        "*configuration error: accuracy_run.yaml: models[[]1[]].dataset.labels: "
        "labels_list.json: labels in sample order pair with the samples of unpadded by "
        "position*"])


def test_dataset_output_of_a_yaml_item_is_checked_at_collection(project):
    project.makefile(".yaml", accuracy_out='''
models:
  - model: models/spiky.v2.onnx
    dataset: {samples: samples, labels: labels.json, metric: top1, output: softmax}
''')
    result = project.runpytest("-p", "no:cacheprovider", "accuracy_out.yaml")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "invalid accuracy suite: accuracy_out.yaml: models[[]0[]].dataset.output: no model "
        "output named 'softmax'; outputs: logits*"])


def test_run_dataset_check_refuses_a_misspelled_name_before_any_sample(device, spiky):
    """check_dataset(..., ignore=[...]) of the library: refused before a sample is read."""
    from pytest_ascend_accuracy.dataset import run_dataset_check

    read = []

    def samples():
        for s in spiky_samples(4)[0]:
            read.append(1)
            yield s

    with pytest.raises(ConfigError) as info:
        run_dataset_check(device(spiky), samples(), metric="agreement", ignore=["amplfy2"])
    assert str(info.value).startswith("per_op/ignore: ignore entry 'amplfy2' is not an op of "
                                      "model 'spiky'; closest: 'amplify2'")
    assert not read


def test_a_traced_sample_whose_dumps_lack_a_name_keeps_the_dataset_failure(device, spiky):
    """A name the model has but the traced comparison does not (a fused op's name where the
    mode does not fuse it) made the trace raise, replacing the dataset failure; it now leaves
    the sample untraced, saying why."""
    from pytest_ascend_accuracy.dataset.culprit import trace_sample
    from pytest_ascend_accuracy.dataset.samples import Sample

    inputs = spiky_samples()[0][3]
    culprit, result, verdict = trace_sample(device(spiky), Sample("003", 3, inputs),
                                            ignore=["amplify9"])
    assert culprit.op is None and verdict is None and result is not None
    assert culprit.line().startswith("first flipped sample 003: not traced to an operator: "
                                     "ignore entry 'amplify9' is not an op of model 'spiky'")

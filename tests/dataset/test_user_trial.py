"""A user trial of ``ascend-accuracy dataset``: a metric function that raises, cannot take
``(outputs, labels)`` or returns NaN is bad input (exit 2, naming ``MODULE:FN``), not a
traceback or an accuracy failure; options the metric does not read are refused, not ignored;
errors about labels name the labels file; ``--metric``/``--postprocess`` take a
``path/to/file.py`` as ``diagnose --reference`` does."""
from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_ascend_accuracy.cli import main
from pytest_ascend_accuracy.dataset import check_dataset
from pytest_ascend_accuracy.dataset.samples import Labels, Sample
from pytest_ascend_accuracy.dataset.callable_metric import CallableMetric
from pytest_ascend_accuracy.errors import ConfigError

from .conftest import spiky_samples

USER_CODE = '''import math
import numpy as np
def bad(outputs, labels):
    raise ValueError("boom")
def one_arg(outputs):
    return 1.0
def nan(outputs, labels):
    return math.nan
def inf_times_zero(outputs, labels):
    with np.errstate(invalid="ignore"):
        return float(np.mean([np.sum(o["logits"] * 0) for o in outputs]))
def no_detections(outputs):
    return []
'''


@pytest.fixture
def trial(spiky, tmp_path, monkeypatch):
    """run(*args) -> the exit status of ``dataset spiky.onnx samples ARGS``, run
    from ``tmp_path``, which holds ``user.py`` and ``labels.json`` (ids s00..s19)."""
    samples, labels = spiky_samples()
    folder = tmp_path / "samples"
    folder.mkdir()
    for i, s in enumerate(samples):
        np.savez(folder / f"s{i:02d}.npz", **s)
    (tmp_path / "labels.json").write_text(json.dumps({f"s{i:02d}": v
                                                      for i, v in enumerate(labels)}))
    (tmp_path / "user.py").write_text(USER_CODE)
    monkeypatch.chdir(tmp_path)

    def run(*args):
        return main(["dataset", str(spiky), "samples", "--cache-dir", "cache"] + list(args))

    return run


def test_a_metric_function_that_raises_is_bad_input_naming_it(trial, capsys):
    assert trial("--metric", "user:bad") == 2
    err = capsys.readouterr().err
    assert "metric user:bad failed on the reference outputs: ValueError: boom " \
           "(raised at user.py:4, in bad)" in err


def test_a_metric_function_of_the_wrong_signature_is_refused_before_converting(trial, capsys):
    assert trial("--metric", "user:one_arg") == 2
    assert "user:one_arg cannot be called as metric(outputs, labels): too many positional " \
           "arguments" in capsys.readouterr().err
    import os

    assert not os.path.exists("cache")  # refused before converting anything


def test_a_metric_returning_nan_is_bad_input_unless_the_device_outputs_hold_nan_or_inf(
        trial, capsys):
    assert trial("--metric", "user:nan") == 2
    assert "metric user:nan returned nan for the onnxruntime fp32 reference's outputs: a " \
           "metric must return a finite number" in capsys.readouterr().err
    # the device's logits hold +Inf (fp16 overflow): its NaN figure is the device's failure
    assert trial("--metric", "user:inf_times_zero") == 1
    assert "inf_times_zero nan on the device vs 0.0000 reference" in capsys.readouterr().out


def test_nan_from_the_device_outputs_alone_is_bad_input_when_they_hold_no_nan():
    sample = Sample("s0", 0, {})
    clean = {"y": np.ones((1, 2), np.float32)}
    metric = CallableMetric(lambda outputs, labels: np.nan if outputs[0] is clean else 0.5,
                            Labels(None))
    metric.add(sample, {"y": np.ones((1, 2), np.float32)}, clean)
    with pytest.raises(ConfigError, match=r"returned nan for the device's \(which hold no "
                                          r"NaN/Inf\) outputs"):
        metric.values()


@pytest.mark.parametrize("args, unused", [
    (["--metric", "agreement", "--labels", "labels.json", "--postprocess", "user:no_detections"],
     "metric agreement does not use --labels or --postprocess: leave them out"),
    (["--metric", "agreement", "--labels", "labels.json"],
     "metric agreement does not use --labels: leave it out (agreement compares"),
    (["--labels", "labels.json", "--postprocess", "user:no_detections"],
     "metric top1 does not use --postprocess: leave it out (postprocess turns outputs into "
     "detections, for metric map only)"),
    (["--metric", "user:nan", "--postprocess", "user:no_detections"],
     "metric user:nan does not use --postprocess"),
    (["--metric", "map", "--labels", "labels.json", "--postprocess", "user:no_detections",
      "--output", "logits"], "metric map does not use --output"),
])
def test_an_option_the_metric_does_not_read_is_refused(trial, capsys, args, unused):
    assert trial("--max-drop", "1", *args) == 2
    assert unused in capsys.readouterr().err


def test_the_library_refuses_labels_for_agreement(device, spiky):
    samples, labels = spiky_samples(3, spiked=())
    with pytest.raises(ConfigError, match=r"metric agreement does not use labels=: leave it out"):
        check_dataset(device(spiky, "high_precision"), samples, metric="agreement", labels=labels)


def test_labels_errors_name_the_labels_file(trial, tmp_path, capsys):
    labels = json.loads((tmp_path / "labels.json").read_text())
    del labels["s00"]
    (tmp_path / "some.json").write_text(json.dumps(labels))
    assert trial("--labels", "some.json") == 2
    assert "error: some.json: no label for sample 's00'" in capsys.readouterr().err
    (tmp_path / "boxes.json").write_text(json.dumps({"s00": [{"bbox": [1, 2, 3]}]}))
    assert trial("--metric", "map", "--labels", "boxes.json",
                 "--postprocess", "user:no_detections") == 2
    assert "error: boxes.json: label of sample 's00': expected {\"bbox\"" in \
        capsys.readouterr().err
    # class indexes given to map: a TypeError traceback ('int' object is not iterable)
    assert trial("--metric", "map", "--labels", "labels.json",
                 "--postprocess", "user:no_detections") == 2
    assert "error: labels.json: label of sample 's00': expected its ground-truth boxes" in \
        capsys.readouterr().err


def test_a_coco_instances_file_as_labels_says_what_labels_are(trial, tmp_path, capsys):
    (tmp_path / "instances_val.json").write_text(json.dumps(
        {"info": {}, "images": [{"id": 1, "file_name": "s00.jpg"}],
         "annotations": [{"id": 1, "image_id": 1, "bbox": [0, 0, 2, 2], "category_id": 1}],
         "categories": [{"id": 1, "name": "a"}]}))
    assert trial("--metric", "map", "--labels", "instances_val.json",
                 "--postprocess", "user:no_detections") == 2
    err = capsys.readouterr().err
    assert "instances_val.json: this is a COCO instances file (top-level images/annotations/" \
           "categories), not labels per sample" in err
    assert '{"<sample id>": [{"bbox": [x, y, w, h], "category_id": c}, ...]}' in err


def test_metric_and_postprocess_take_a_path_to_a_py_file(trial, capsys):
    assert trial("--metric", "map", "--labels", "labels.json",
                 "--postprocess", "user.py:no_detections") == 2  # loaded: it is the labels
    assert "label of sample 's00': expected its ground-truth boxes" in capsys.readouterr().err
    assert trial("--metric", "user.py:bad") == 2
    assert "metric user.py:bad failed on the reference outputs" in capsys.readouterr().err
    assert trial("--metric", "missing.py:bad") == 2
    assert "--metric: cannot load 'missing.py:bad': no such file 'missing.py'" in \
        capsys.readouterr().err


def test_a_metric_module_that_raises_on_import_is_bad_input(trial, tmp_path, capsys):
    (tmp_path / "broken.py").write_text("raise RuntimeError('import boom')\n")
    assert trial("--metric", "broken:fn") == 2
    assert "--metric: cannot load 'broken:fn': importing it raised RuntimeError: import boom" in \
        capsys.readouterr().err


def test_yaml_refuses_labels_for_agreement_and_its_label_errors_name_the_file(
        device, spiky, tmp_path):
    from pytest_ascend_accuracy.plugin.dataset_check import yaml_dataset

    (tmp_path / "samples").mkdir()
    samples, labels = spiky_samples(3, spiked=())
    for i, s in enumerate(samples):
        np.savez(tmp_path / "samples" / f"{i}.npz", **s)
    (tmp_path / "labels.json").write_text(json.dumps({"0": labels[0], "1": labels[1]}))
    with pytest.raises(ConfigError, match=r"models\[0\]\.dataset\.labels: metric agreement does "
                                          r"not use labels"):
        yaml_dataset({"samples": "samples", "labels": "labels.json", "metric": "agreement"},
                     tmp_path, "models[0].dataset")
    kwargs = yaml_dataset({"samples": "samples", "labels": "labels.json"}, tmp_path,
                          "models[0].dataset")
    with pytest.raises(ConfigError, match=r"labels\.json: no label for sample '2'"):
        check_dataset(device(spiky, "high_precision"), **kwargs)


def test_an_infinite_device_figure_from_finite_outputs_is_an_accuracy_failure():
    """A mean log-probability over a probability float16 took to 0 is -inf on the device: the
    device's accuracy failure, not a broken metric (it was refused as bad input, review)."""
    sample = Sample("s0", 0, {})
    ref = {"p": np.array([[1e-9, 1 - 1e-9]], np.float32)}
    dev = {"p": np.array([[0.0, 1.0]], np.float32)}

    def mean_log_prob(outputs, labels):
        with np.errstate(divide="ignore"):
            return float(np.mean([np.log(o["p"]).min() for o in outputs]))

    metric = CallableMetric(mean_log_prob, Labels(None))
    metric.add(sample, ref, dev)
    reference, device = metric.values()
    assert np.isfinite(reference) and device == -np.inf

"""check_dataset, the YAML ``dataset:`` item and the summary/JUnit/HTML figures through pytester."""
from __future__ import annotations

import json

import onnx
import pytest

from .conftest import spiky_project


TEST_FILE = '''
from pytest_ascend_accuracy import accuracy

LABELS = {labels!r}


@accuracy(threshold=0.95, modes=["default", "high_precision"])
def test_spiky(ascend_model, check_dataset):
    result = check_dataset(ascend_model("models/spiky.onnx"), "samples", labels=LABELS)
    assert result.reference == result.device
'''


@pytest.fixture
def project(pytester):
    pytester.makepyfile(test_ds=TEST_FILE.format(labels=spiky_project(pytester.path)))
    return pytester


def test_fixture_fails_fp16_passes_high_precision_with_summary_and_junit(project, monkeypatch):
    monkeypatch.setattr("pytest_ascend_accuracy.plugin.dataset_check.PROGRESS_SECONDS", 0.0)
    result = project.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml",
                               "-o", "junit_family=legacy",
                               "--accuracy-report=rep")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "dataset spiky [[]default[]]: 20/20 samples (*s)",
        "dataset accuracy FAILED: top1 0.4000 on the device vs 0.5000 reference (drop 0.1000 > "
        "max_drop 0.0100)",
        "flipped top-1 (2 of 20): 003, 011",
        "first flipped sample 003: first operator below the threshold: amplify2 (Mul) *",
        "test_ds.py:8: DatasetFailure",
        "*ascend-accuracy*",
        "2 dataset checks: 1 passed, 1 failed",
        "  spiky [[]default[]] top1 0.4000 device vs 0.5000 reference (drop 0.1000 > 0.01), 20 "
        "samples, 2 flipped",
        "  spiky [[]high_precision[]] top1 0.5000 device vs 0.5000 reference (drop 0.0000 <= "
        "0.01), 20 samples, 0 flipped",
        "FAILED test_ds.py::test_spiky[[]default[]] [[]spiky, default[]]: top1 drop 0.1000 > "
        "max_drop 0.01; first failing op amplify2 (sample 003)",
    ])
    junit = (project.path / "junit.xml").read_text()
    assert 'name="dataset_reference" value="0.500000"' in junit
    assert 'name="dataset_device" value="0.400000"' in junit
    assert 'name="dataset_first_failing_op" value="amplify2"' in junit
    pages = sorted(p.parent.name for p in (project.path / "rep").rglob("dataset.html"))
    assert [p[:-9] for p in pages] == ["test_ds.py--test_spiky_default",  # -<digest of the id>
                                       "test_ds.py--test_spiky_high_precision"]
    html = (project.path / "rep" / pages[0] / "dataset.html").read_text()
    assert "amplify2" in html and "<svg" in html


def test_the_xdist_controller_prints_dataset_lines_without_numpy(project):
    """The controller runs no check; the dataset lines' decimals imported numpy there
    (``dataset.metrics``; tests/plugin/test_controller_imports.py for accuracy checks)."""
    pytest.importorskip("xdist")
    result = project.runpytest_subprocess("-n", "1", "-p", "no:cacheprovider",
                                          "-p", "record_controller_modules")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["2 dataset checks: 1 passed, 1 failed"])
    assert json.loads((project.path / "controller_modules.json").read_text()) == []


def test_two_dataset_checks_in_one_test_get_two_pages(project):
    """The second check of a test wrote its dataset.html over the first's (found reviewing)."""
    project.makepyfile(test_two="""
from pytest_ascend_accuracy import accuracy

@accuracy(modes=["high_precision"])
def test_both(ascend_model, check_dataset):
    om = ascend_model("models/spiky.onnx")
    check_dataset(om, "samples", metric="agreement")
    check_dataset(om, "samples", metric="agreement", max_drop=0.5)
""")
    project.runpytest("-p", "no:cacheprovider", "test_two.py",
                      "--accuracy-report=rep2").assert_outcomes(passed=1)
    pages = sorted(p.name for p in (project.path / "rep2").rglob("dataset*.html"))
    assert pages == ["dataset-2.html", "dataset.html"]
    page = next((project.path / "rep2").glob("test_two.py--test_both_high_precision-*"))
    assert "max_drop 0.5" in (page / "dataset-2.html").read_text()


def test_quiet_runs_print_no_progress(project, monkeypatch):
    monkeypatch.setattr("pytest_ascend_accuracy.plugin.dataset_check.PROGRESS_SECONDS", 0.0)
    result = project.runpytest("-p", "no:cacheprovider", "-q", "-k", "high_precision")
    result.assert_outcomes(passed=1)
    assert "samples (" not in result.stdout.str()


METRIC_FUNCTIONS = '''
import math
from pytest_ascend_accuracy import accuracy

def bad(outputs, labels):
    raise ValueError("boom")

def nan(outputs, labels):
    return math.nan

@accuracy(threshold=0.95, modes=["high_precision"])
def test_bad(ascend_model, check_dataset):
    check_dataset(ascend_model("models/spiky.onnx"), "samples", metric=bad)

@accuracy(threshold=0.95, modes=["high_precision"])
def test_nan(ascend_model, check_dataset):
    check_dataset(ascend_model("models/spiky.onnx"), "samples", metric=nan)
'''


def test_a_metric_function_that_raises_fails_the_test_naming_it_and_its_line(project):
    """It failed with the metric's traceback, or for NaN as an accuracy failure ("drop nan")."""
    project.makepyfile(test_metric=METRIC_FUNCTIONS)
    result = project.runpytest("-p", "no:cacheprovider", "test_metric.py")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*metric: metric test_metric:bad failed on the reference outputs: ValueError: boom "
        "(raised at test_metric.py:5, in bad)",
        "*metric: metric test_metric:nan returned nan for the onnxruntime fp32 reference's "
        "outputs: a metric must return a finite number",
    ])
    assert "drop nan" not in result.stdout.str()


def test_yaml_dataset_item(project):
    project.makefile(".yaml", accuracy_suite='''
models:
  - model: models/spiky.onnx
    modes: [default, high_precision]
    dataset: {samples: samples, labels: labels.json, metric: top1, max_drop: 0.01}
''')
    result = project.runpytest("-p", "no:cacheprovider", "accuracy_suite.yaml", "-v")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "*accuracy_suite.yaml::spiky-dataset[[]default[]] FAILED*",
        "*accuracy_suite.yaml::spiky-dataset[[]high_precision[]] PASSED*",
        "*flipped top-1 (2 of 20): 003, 011",
    ])


BAD_DATASETS = [
    ("{samples: nowhere}", ".samples: required: a directory"),
    ("{samples: samples, metric: top3, labels: labels.json}", ".metric: must be one of"),
    ("{samples: samples, labesl: labels.json}", "did you mean 'labels'"),
    ("{samples: samples}", ".labels: metric top1 needs labels"),
]


def test_yaml_dataset_errors_name_the_key(project):
    for k, (dataset, _) in enumerate(BAD_DATASETS):
        project.makefile(".yaml", **{f"accuracy_bad{k}": f'''
models:
  - model: models/spiky.onnx
    dataset: {dataset}
'''})
    files = [f"accuracy_bad{k}.yaml" for k in range(len(BAD_DATASETS))]
    result = project.runpytest("-p", "no:cacheprovider", *files)
    result.assert_outcomes(errors=len(BAD_DATASETS))
    for k, (_, match) in enumerate(BAD_DATASETS):
        result.stdout.fnmatch_lines([f"*accuracy_bad{k}.yaml: models[[]0[]].dataset*{match}*"])


SEQ_TEST = '''
import numpy as np
import pytest
from pytest_ascend_accuracy import accuracy

SAME = [[[1, 5.0001, 1, 1], [1, 1, 2, 1], [1, 1, 1, 5.0003]]]
FLIPPED = [[[1, 9, 1, 1], [1, 2.0, 2.0005, 1], [1, 1, 1, 5]]]


@pytest.mark.parametrize("x", [SAME, FLIPPED], ids=["same", "flipped"])
@accuracy(threshold=0.95)
def test_seq_agreement(ascend_model, check_dataset, x):
    om = ascend_model("models/seq.onnx")
    check_dataset(om, [{"x": np.array(x, np.float32)}], metric="agreement", max_drop=0.0)
'''


def test_user_trial_sequence_output_agrees_per_position(pytester):
    """PP-OCR rec style [1, T, C]: the sample whose top-1 stays at every position passes, the
    one whose position 1 flips (fp16 rounds 2.0005 to 2.0) fails naming it."""
    from .test_sequence_outputs import mul_model

    (pytester.path / "models").mkdir()
    onnx.save(mul_model([1, 3, 4]), str(pytester.path / "models" / "seq.onnx"))
    pytester.makepyfile(test_seq=SEQ_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep")
    result.assert_outcomes(passed=1, failed=1)
    pages = sorted((pytester.path / "rep").rglob("dataset.html"))
    assert len(pages) == 2 and all("flipped positions" in p.read_text() for p in pages)
    result.stdout.fnmatch_lines([
        "dataset accuracy FAILED: agreement 0.0000 on the device vs 1.0000 reference *",
        "flipped top-1 (1 of 1; a sample flips when any of its 3 positions does, 1 of 3 "
        "positions flipped): 0",
        "  seq [[]default[]] agreement 1.0000 device vs 1.0000 reference (drop 0.0000 <= 0), "
        "1 sample, 0 flipped"])


def test_a_dataset_page_stays_beside_a_later_accuracy_check_and_a_rerun_replaces_it(project):
    """The first accuracy report of a test emptied its folder, the dataset.html it had just
    written included; a rerun left the first attempt's dataset.html beside a dataset-2.html
    (review)."""
    project.makepyfile(test_mixed="""
from pathlib import Path
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/spiky.onnx"

@accuracy(modes=["high_precision"])
def test_mixed(ascend_model, golden_dump, check_dataset, check_accuracy):
    om = ascend_model(M)
    check_dataset(om, "samples", metric="agreement")
    check_accuracy(om.run(make_inputs(M)), golden_dump(M, make_inputs(M)))
    first = not Path("attempted").exists()
    Path("attempted").touch()
    assert not first, "fails once: pytest-rerunfailures runs it again"
""")
    args = ["-p", "no:cacheprovider", "test_mixed.py", "--accuracy-report=rep3"]
    pytest.importorskip("pytest_rerunfailures")
    result = project.runpytest(*args, "--reruns", "1")
    assert result.parseoutcomes() == {"passed": 1, "rerun": 1}
    (folder,) = (p for p in (project.path / "rep3").iterdir() if p.is_dir())
    assert sorted(p.name for p in folder.iterdir() if p.suffix == ".html") == [
        "dataset.html", "report.html"]

"""A failing dataset check's page, as ``--accuracy-report`` writes it: it opens on the traced
sample's first failure, indexes the sample's failing ops, and links their tensors, copied next
to the page (``dataset-tensors/``), so the links outlive the dumps. Before, the page had the
chart and the table alone, and no tensor of the sample a user was told to look at (H85)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest

from .conftest import spiky_model, spiky_samples

TEST_FILE = '''
import os
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_one(ascend_model, check_dataset):
    check_dataset(ascend_model("models/spiky.onnx"), "samples", metric="agreement",
                  max_drop=float(os.environ.get("DROP", "0.01")))
'''

TWO_FILE = '''
import pytest
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.dataset.result import DatasetFailure


@accuracy(threshold=0.95)
def test_two(ascend_model, check_dataset):
    om = ascend_model("models/spiky.onnx")
    with pytest.raises(DatasetFailure):
        check_dataset(om, "samples", metric="agreement")
    check_dataset(om, "samples", metric="agreement", max_drop=0.02)
'''


@pytest.fixture
def project(pytester):
    (pytester.path / "models").mkdir()
    onnx.save(spiky_model(), str(pytester.path / "models" / "spiky.onnx"))
    samples, _ = spiky_samples()
    (pytester.path / "samples").mkdir()
    for i, s in enumerate(samples):
        np.savez(pytester.path / "samples" / f"{i:03d}.npz", **s)
    pytester.makepyfile(test_one=TEST_FILE, test_two=TWO_FILE)
    return pytester


def _hrefs(page: Path):
    return re.findall(r'href="([^"]+)"', page.read_text())


def test_a_failing_pages_first_failure_index_and_tensors(project):
    project.runpytest("-p", "no:cacheprovider", "test_one.py",
                      "--accuracy-report=rep").assert_outcomes(failed=1)
    (page,) = (project.path / "rep").rglob("dataset.html")
    text = page.read_text()
    first = re.search(r'<section id="first-failure"><h2>first failure: <a href="#(r\d+)">#\d+ '
                      r'amplify2</a></h2><p>NaN/Inf on one side only at (\d+) position', text)
    assert first, text[-3000:]
    assert "<h2>first flipped sample 003, every operator compared</h2>" in text
    assert f'<td id="{first.group(1)}">' in text  # the section jumps to the op's row
    index = re.search(r'<nav class="failures" id="failing-ops"><h2>failing ops \((\d+)\)', text)
    assert index and int(index.group(1)) >= 1
    files = [h for h in _hrefs(page) if not h.startswith("#")]
    assert files and all(h.startswith("dataset-tensors/") for h in files), files
    assert all((page.parent / h).is_file() for h in files)  # every link resolves
    assert files[0].endswith("amplify2-output_0.actual.npy")
    assert files[1].endswith("amplify2-output_0.golden.npy")
    actual, golden = (np.load(page.parent / h) for h in files[:2])
    # the copies are the traced sample's tensors as compared: the overflow the page names
    assert np.isposinf(actual).sum() == int(first.group(2)) and np.isfinite(golden).all()
    assert actual.dtype == np.float16 and golden.dtype == np.float32


def test_a_rerun_that_passes_removes_the_earlier_copies(project, monkeypatch):
    project.runpytest("-p", "no:cacheprovider", "test_one.py",
                      "--accuracy-report=rep").assert_outcomes(failed=1)
    (page,) = (project.path / "rep").rglob("dataset.html")
    assert (page.parent / "dataset-tensors").is_dir()
    # the same test, now within its max_drop (agreement 0.9 of the reference's 1.0): no trace;
    # a max_drop of 1.0 is refused, as no device could fail it
    monkeypatch.setenv("DROP", "0.5")
    project.runpytest("-p", "no:cacheprovider", "test_one.py",
                      "--accuracy-report=rep").assert_outcomes(passed=1)
    assert "dataset accuracy PASSED" in page.read_text()
    assert not (page.parent / "dataset-tensors").exists()
    assert [h for h in _hrefs(page) if not h.startswith("#")] == []


def test_a_tests_second_failing_check_copies_into_a_folder_of_its_own(project):
    project.runpytest("-p", "no:cacheprovider", "test_two.py",
                      "--accuracy-report=rep").assert_outcomes(failed=1)
    folder = project.path / "rep" / "test_two.py--test_two"
    links = {name: [h for h in _hrefs(folder / name) if not h.startswith("#")]
             for name in ("dataset.html", "dataset-2.html")}
    assert links["dataset.html"] and all(h.startswith("dataset-tensors/")
                                         for h in links["dataset.html"])
    assert links["dataset-2.html"] and all(h.startswith("dataset-2-tensors/")
                                           for h in links["dataset-2.html"])
    assert all((folder / h).is_file() for hs in links.values() for h in hs)


def test_the_traced_section_says_which_sample_and_why():
    """The section read "first flipped sample" over a map check's trace of the sample whose
    scores moved most (no sample flips under mAP)."""
    from pytest_ascend_accuracy.dataset.result import Culprit
    from pytest_ascend_accuracy.plugin.dataset_page import _traced

    moved = Culprit("img_7", op="head/Conv", role="scores moved most in sample")
    assert _traced(moved) == "scores moved most in sample img_7, every operator compared"
    assert _traced(Culprit("003", op="x")) == "first flipped sample 003, every operator compared"


def test_a_diagnosed_failures_page_and_index_link_its_diagnosis(project):
    result = project.runpytest("-p", "no:cacheprovider", "test_one.py", "--accuracy-diagnose",
                               "--accuracy-report=rep")
    result.assert_outcomes(failed=1)
    (named,) = [line.split("full diagnosis: ", 1)[1] for line in result.outlines
                if "full diagnosis: " in line]
    (page,) = (project.path / "rep").rglob("dataset.html")
    line = re.search(r'<p id="diagnosis">diagnosis \(--accuracy-diagnose\): <a href="([^"]+)">',
                     page.read_text())
    assert line and line.group(1) == "diagnosis/diagnosis.html"
    assert (page.parent / line.group(1)).parent == project.path / Path(named).parent
    assert (page.parent / line.group(1)).is_file()
    import json

    (entry,) = json.loads((project.path / "rep" / "index.json").read_text())["folders"]
    assert entry["diagnosis"] == f"{page.parent.name}/diagnosis/diagnosis.html"


INTERRUPTED = '''
import numpy as np
from pytest_ascend_accuracy import accuracy

_save = np.save
calls = []


def save_then_ctrl_c(f, values, *a, **k):
    calls.append(1)
    if len(calls) == 3:  # Ctrl-C arrives while the trace copies its third tensor
        raise KeyboardInterrupt
    return _save(f, values, *a, **k)


@accuracy(threshold=0.95)
def test_ctrl_c_while_copying(ascend_model, check_dataset, monkeypatch):
    om = ascend_model("models/spiky.onnx")
    monkeypatch.setattr(np, "save", save_then_ctrl_c)
    check_dataset(om, "samples", metric="agreement")
'''


def test_a_ctrl_c_while_the_trace_copies_leaves_no_copies(project):
    """The copies went straight into ``dataset-tensors/``: a Ctrl-C left two of them and a
    temp file with no page, where a folder holds its whole set or nothing (a review)."""
    project.makepyfile(test_interrupt=INTERRUPTED)
    # (a subprocess: an in-process run hands its KeyboardInterrupt on to this session)
    project.runpytest_subprocess("-p", "no:cacheprovider", "test_interrupt.py",
                                 "--accuracy-report=rep")
    # no file and no folder of the test, not even an empty one (it was listed in the index
    # as an earlier run's), and no staging folder
    assert sorted(p.name for p in (project.path / "rep").iterdir()) == ["index.html",
                                                                        "index.json"]


KILLED = '''
import os
import signal

from pytest_ascend_accuracy.plugin import dataset_page


def _killed(self, *a, **k):  # the worker dies (SIGKILL, the OOM killer) after the copies
    os.kill(os.getpid(), signal.SIGKILL)


if os.environ.get("PYTEST_XDIST_WORKER"):
    dataset_page.DatasetPage.write = _killed
'''


def test_a_killed_workers_copies_go_when_the_session_ends(project):
    """Staged inside the test's folder, a killed worker's copies stayed for good: the session's
    end removes dead writers' staging folders from DIR only (a review)."""
    pytest.importorskip("xdist")
    project.makeconftest(KILLED)
    project.runpytest_subprocess("-p", "no:cacheprovider", "test_one.py", "-n", "1",
                                 "--accuracy-report=rep")
    left = sorted(p.relative_to(project.path / "rep").as_posix()
                  for p in (project.path / "rep").rglob("*"))
    assert left == ["index.html", "index.json"], left

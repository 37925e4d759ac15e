"""Two model files of one name in one session (every ONNX node test is ``model.onnx`` in its own
folder, Hugging Face optimum writes ``model.onnx`` in each model's folder): the summary named
both ``model``, one grid row ``model  FAILED`` for a pass and a failure, ``(1 model x 1 mode)``
and ``[model, default]`` on the FAILED line (an audit of the ONNX node tests). Each is named by
the shortest end of its path that tells it from the other (``bert/model``, ``gpt2/model``), the
same under ``-n 2``, where each worker sees its own checks only."""
import json
import re

import onnx
import pytest

from pytest_ascend_accuracy.testing import models as tiny_models

pytest.importorskip("onnxruntime")

TESTS = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


def _check(path, ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(path)
    check_accuracy(ascend_model(path).run(inputs), golden_dump(path, inputs))


@accuracy(threshold=0.95)
def test_bert(ascend_model, golden_dump, check_accuracy):
    _check("bert/model.onnx", ascend_model, golden_dump, check_accuracy)


@accuracy(threshold=0.95)
def test_gpt2(ascend_model, golden_dump, check_accuracy):
    _check("gpt2/model.onnx", ascend_model, golden_dump, check_accuracy)


@accuracy(threshold=0.95)
def test_mlp(ascend_model, golden_dump, check_accuracy):
    _check("mlp.onnx", ascend_model, golden_dump, check_accuracy)
'''


def _project(pytester):
    """bert/model.onnx passes, gpt2/model.onnx fails (the overflow model), mlp.onnx passes."""
    for folder, make in (("bert", tiny_models.passing_mlp), ("gpt2", tiny_models.overflow_model)):
        onnx.save(make(), str(pytester.mkdir(folder) / "model.onnx"))
    onnx.save(tiny_models.passing_mlp(), str(pytester.path / "mlp.onnx"))
    pytester.makepyfile(test_stems=TESTS)


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_two_files_of_one_name_are_two_rows_named_by_their_folders(pytester, workers):
    if workers:
        pytest.importorskip("xdist")
    _project(pytester)
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep", *workers)
    run.assert_outcomes(passed=2, failed=1)
    out = run.stdout.str()
    assert "3 accuracy checks: 2 passed, 1 failed (3 models x 1 mode)" in out, out
    rows = re.findall(r"^  (\S+) +(passed|FAILED)$", out, re.M)
    assert sorted(rows) == [("bert/model", "passed"), ("gpt2/model", "FAILED"),
                            ("mlp", "passed")], out  # a stem no other file has stays short
    assert re.search(r"^FAILED test_stems\.py::test_gpt2 \[gpt2/model, default\]: ", out, re.M)
    assert "[model, default]" not in out
    # a folder per test, and the run's index names each check as the summary does
    index = json.loads((pytester.path / "rep" / "index.json").read_text())
    assert sorted((f["folder"], f["check"]) for f in index["folders"]) == [
        ("test_stems.py--test_bert", "bert/model, default"),
        ("test_stems.py--test_gpt2", "gpt2/model, default"),
        ("test_stems.py--test_mlp", "mlp, default")]


TWO_IN_ONE = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95)
def test_both(ascend_model, golden_dump, check_accuracy):
    for path in ("bert/model.onnx", "gpt2/model.onnx"):
        inputs = make_inputs(path)
        check_accuracy(ascend_model(path).run(inputs), golden_dump(path, inputs))
'''


def test_a_test_converting_two_files_of_one_name_names_the_failing_one(pytester):
    """Its failure block's advice is for one model's ``ascend_model`` call: "the ascend_model
    call of model alone" named neither."""
    for folder, make in (("bert", tiny_models.passing_mlp), ("gpt2", tiny_models.overflow_model)):
        onnx.save(make(), str(pytester.mkdir(folder) / "model.onnx"))
    pytester.makepyfile(test_both=TWO_IN_ONE)
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep")
    run.assert_outcomes(failed=1)
    out = run.stdout.str()
    assert "in the ascend_model call of gpt2/model alone" in out, out
    assert "call of model alone" not in out
    assert re.search(r"^FAILED test_both\.py::test_both \[gpt2/model, default\]: ", out, re.M)
    assert sorted(re.findall(r"^  (\S+) +(passed|FAILED)$", out, re.M)) == [
        ("bert/model", "passed"), ("gpt2/model", "FAILED")], out
    pages = {p.parent.name: p.read_text() for p in (pytester.path / "rep").glob("*/report.html")}
    assert "test_both.py::test_both [gpt2/model, default]" in pages["test_both.py--test_both-2"]
    index = json.loads((pytester.path / "rep" / "index.json").read_text())
    checks = sorted(f["check"] for f in index["folders"])
    assert checks == ["bert/model, default", "gpt2/model, default"]


def test_labels_are_the_shortest_path_end_that_tells_files_apart():
    from pytest_ascend_accuracy.plugin.model_labels import distinct_labels

    keys = [("model", "/r/a/x/model.onnx"), ("model", "/r/b/x/model.onnx"),
            ("model", "/r/gpt2/model.onnx"), ("model", None), ("mlp", "/r/mlp.onnx"),
            ("net", "/net.onnx"), ("net", "/sub/net.onnx")]
    assert distinct_labels(keys + keys[:2]) == {
        ("model", "/r/a/x/model.onnx"): "a/x/model", ("model", "/r/b/x/model.onnx"): "b/x/model",
        ("model", "/r/gpt2/model.onnx"): "gpt2/model",
        ("model", None): "model",  # an in-memory model or a dump (no file known): its name
        ("mlp", "/r/mlp.onnx"): "mlp",
        ("net", "/net.onnx"): "/net", ("net", "/sub/net.onnx"): "sub/net"}
    # a check of dumps (no file known) beside one file of its name: one row, as it was
    assert distinct_labels([("det", None), ("det", "/r/det.onnx")]) == {
        ("det", None): "det", ("det", "/r/det.onnx"): "det"}
    assert distinct_labels([("m", "/r/m.onnx"), ("m", "/r/m.pb")]) == {
        ("m", "/r/m.onnx"): "/r/m.onnx", ("m", "/r/m.pb"): "/r/m.pb"}


DATASET = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95)
def test_both(ascend_model, check_dataset):
    for path in ("bert/model.onnx", "gpt2/model.onnx"):
        samples = [make_inputs(path, seed=k) for k in range(2)]
        check_dataset(ascend_model(path), samples, metric="agreement", max_drop=0.9)
'''


def test_dataset_lines_name_two_files_of_one_name_by_their_folders(pytester):
    for folder, make in (("bert", tiny_models.passing_mlp), ("gpt2", tiny_models.overflow_model)):
        onnx.save(make(), str(pytester.mkdir(folder) / "model.onnx"))
    pytester.makepyfile(test_data=DATASET)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(passed=1)
    out = run.stdout.str()
    assert re.search(r"^  bert/model \[default\] agreement ", out, re.M), out
    assert re.search(r"^  gpt2/model \[default\] agreement ", out, re.M), out

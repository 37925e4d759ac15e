"""``--accuracy-report DIR``: a test's folder appears only with its whole set (compare.csv,
compare.json, report.html, a failure's tensors/), and DIR/index.json + index.html list the
folders of this run.

A reports trial found, after Ctrl-C under ``-n 2``, folders holding compare.csv alone (rows
reading FAILED for tests JUnit never listed); a check refused after its compare (a per_op entry
naming a folded op) left a compare.csv reading all-passing beside a test that FAILED "no check
verdict"; and a rerun into the same DIR kept an earlier run's folder with nothing saying which
run wrote which."""
import json
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import ACCURACY_TESTS

SET = ["compare.csv", "compare.json", "report.html"]


def _folders(root):
    return sorted(p.name for p in root.iterdir() if p.is_dir())


def _hidden(root):
    return sorted(p.name for p in root.rglob(".*"))


@pytest.mark.parametrize("cut, test, written", [
    ("json_report.write_json", "test_mlp", ["compare.csv"]),  # after the CSV, before the JSON
    ("html_report.write_html", "test_overflow", ["compare.csv", "compare.json", "tensors"]),
], ids=["before-json", "before-html"])
def test_an_interrupt_between_the_writes_leaves_no_folder_and_no_temp_files(
        pytester, models_dir, monkeypatch, cut, test, written):
    import importlib

    module, name = cut.split(".")
    target = importlib.import_module(f"pytest_ascend_accuracy.report.{module}")
    reached = []

    def interrupted(result, path, *args, **kwargs):
        from pathlib import Path

        reached.append(sorted(p.name for p in Path(path).parent.iterdir()))
        raise KeyboardInterrupt

    monkeypatch.setattr(target, name, interrupted)
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep", "-k", test,
                                no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert reached and reached[0] == written  # the interrupt came between the set's writes
    root = pytester.path / "rep"
    assert _folders(root) == [] and _hidden(root) == []
    index = json.loads((root / "index.json").read_text(encoding="utf-8"))
    assert index["run"]["interrupted"] is True and index["folders"] == []


def _folded_model(path):
    """x -> fc1 -> relu -> fc2, fc2's weight a Transpose of a constant: folded at conversion."""
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h1"], name="fc1"),
             helper.make_node("Relu", ["h1"], ["h3"], name="relu"),
             helper.make_node("Transpose", ["w2t"], ["w2"], name="w2_transpose", perm=[1, 0]),
             helper.make_node("MatMul", ["h3", "w2"], ["logits"], name="fc2")]
    weights = [numpy_helper.from_array(rng.normal(size=s).astype(np.float32), n)
               for n, s in (("w1", (16, 32)), ("w2t", (10, 32)))]
    graph = helper.make_graph(nodes, "folded",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
                              weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_a_check_refused_after_its_compare_writes_no_report_that_reads_as_a_verdict(pytester):
    _folded_model(pytester.mkdir("models") / "folded.onnx")
    pytester.makepyfile(test_folded='''
        from pytest_ascend_accuracy import accuracy

        M = "models/folded.onnx"

        @accuracy(threshold=0.99, per_op={"w2_transpose": 0.9})
        def test_folded(accuracy_inputs, ascend_model, golden_dump, check_accuracy):
            inputs = accuracy_inputs(M, seed=0)
            check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
    ''')
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*per_op entry 'w2_transpose' names only ops never compared*"])
    root = pytester.path / "rep"
    assert _folders(root) == [] and _hidden(root) == []  # no compare.csv reading all-passing
    assert json.loads((root / "index.json").read_text(encoding="utf-8"))["folders"] == []


def _links(page):
    return re.findall(r'href="([^"#][^"]*)"', page.read_text(encoding="utf-8"))


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "n2"])
def test_the_index_lists_this_runs_folders_and_tells_older_ones_apart(
        pytester, models_dir, workers):
    if workers:
        pytest.importorskip("xdist")
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    args = ["-p", "no:cacheprovider", "--accuracy-report=rep", *workers]
    pytester.runpytest(*args).assert_outcomes(passed=3, failed=1)
    root = pytester.path / "rep"
    first = json.loads((root / "index.json").read_text(encoding="utf-8"))
    assert len(first["folders"]) == 4 and first["other_folders"] == []
    failed = [f for f in first["folders"] if not f["passed"]]
    assert [(f["nodeid"], f["first_failing_op"]) for f in failed] == [
        ("test_acc.py::test_overflow[default]", "norm")]
    page = (root / "index.html").read_text(encoding="utf-8")
    assert "FAILED" in page and ">norm<" in page

    # run 2 into the same DIR, one test deselected: its folder stays, not listed as this run's
    pytester.runpytest(*args, "-k", "not overflow").assert_outcomes(passed=1)
    index = json.loads((root / "index.json").read_text(encoding="utf-8"))
    assert index["run"]["id"] != first["run"]["id"]
    ours = [f["folder"] for f in index["folders"]]
    assert ours == ["test_acc.py--test_mlp"] and index["checks"] == 1
    assert sorted(index["other_folders"]) == sorted(set(_folders(root)) - set(ours))
    assert len(index["other_folders"]) == 3  # the overflow folders of run 1: not deleted
    for name in _folders(root):
        saved = json.loads((root / name / "compare.json").read_text(encoding="utf-8"))
        assert sorted(p.name for p in (root / name).iterdir() if p.name != "tensors") == SET
        assert (saved["run"]["id"] == index["run"]["id"]) is (name in ours)
        assert saved["run"]["nodeid"].startswith("test_acc.py::test_")
        assert saved["run"]["passed"] is saved["verdict"]["passed"]
        for link in _links(root / name / "report.html"):
            assert (root / name / link).is_file(), link
    links = _links(root / "index.html")
    assert links == ["test_acc.py--test_mlp/report.html"] and (root / links[0]).is_file()
    assert "3 folders in this directory not written by this run" in (
        root / "index.html").read_text(encoding="utf-8")


def test_a_failure_names_the_csv_where_the_set_lies(pytester, models_dir):
    """The CSV is written aside with the set: the failure's "full report:" line names its
    place in DIR, which exists once the test has failed."""
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep",
                                "-k", "overflow and default")
    result.assert_outcomes(failed=1)
    line = next(x for x in result.outlines if x.startswith("full report: "))
    assert line.startswith("full report: rep/test_acc.py--test_overflow_default-")
    assert (pytester.path / line[len("full report: "):]).is_file()


def test_an_interrupt_while_the_baseline_is_judged_leaves_no_folder(pytester, monkeypatch):
    # a review: the set was published on the way out, reading "baseline not judged: the
    # baseline check stopped with an error" for a test a Ctrl-C stopped
    from pytest_ascend_accuracy.plugin import check_flow
    from pytest_ascend_accuracy.testing import models as tiny_models

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(check_flow, "_judge_baseline", interrupted)
    onnx.save(tiny_models.passing_mlp(), str(pytester.path / "mlp.onnx"))
    pytester.makeini("[pytest]\nascend_accuracy_max_drop = 0.002\n")
    pytester.makepyfile(test_m="""
from pytest_ascend_accuracy import accuracy

@accuracy()
def test_mlp(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("mlp.onnx", seed=0)
    check_accuracy(ascend_model("mlp.onnx").run(inputs), golden_dump("mlp.onnx", inputs))
""")
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep",
                                no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    root = pytester.path / "rep"
    assert _folders(root) == [] and _hidden(root) == []

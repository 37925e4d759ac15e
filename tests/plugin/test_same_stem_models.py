"""Two model files of one name in one session (every ONNX node test is ``model.onnx`` in its own
folder, Hugging Face optimum writes ``model.onnx`` in each model's folder): the summary named
both ``model``, one grid row ``model  FAILED`` for a pass and a failure, ``(1 model x 1 mode)``
and ``[model, default]`` on the FAILED line (an audit of the ONNX node tests). Each is named by
the shortest end of its path that tells it from the other (``bert/model``, ``gpt2/model``), the
same under ``-n 2``, where each worker sees its own checks only.

The path is the one the test gave, as shown from where pytest ran: a review found labels made of
the links' targets (``links/bert/model.onnx`` into ``store/s1`` read ``s1/model``; the Hugging
Face hub cache's ``snapshots/rev1/model.onnx -> ../../blobs/<sha>`` read
``models--org--gpt2/blobs/model``, a path that does not exist) and of folders above the run
(``model.onnx`` at the rootdir beside ``sub/model.onnx`` read ``<rootdir's name>/model``). One
file reached by two paths stays one model."""
import json
import os
import re

import onnx
import pytest

from pytest_ascend_accuracy.testing import models as tiny_models

pytest.importorskip("onnxruntime")

PASSES, FAILS = tiny_models.passing_mlp, tiny_models.overflow_model


def _project(pytester, files, links=(), **tests):
    """``files`` ({path: the tiny model it holds}) saved, ``links`` ((link, target as the link
    holds it)) made (skipped where this system makes no symbolic links), ``tests`` written."""
    for path, make in files.items():
        target = pytester.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        onnx.save(make(), str(target))
    for link, target in links:
        (pytester.path / link).parent.mkdir(parents=True, exist_ok=True)
        try:
            os.symlink(target, pytester.path / link)
        except (OSError, NotImplementedError) as exc:  # (Windows without the privilege)
            pytest.skip(f"no symbolic links here: {exc}")
    pytester.makepyfile(**tests)


def _rows(out: str) -> list:
    return sorted(re.findall(r"^  (\S+) +(passed|FAILED)$", out, re.M))


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


@accuracy(threshold=0.95)
def test_root(ascend_model, golden_dump, check_accuracy):
    _check("model.onnx", ascend_model, golden_dump, check_accuracy)
'''


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_two_files_of_one_name_are_two_rows_named_by_their_folders(pytester, workers):
    """bert/model.onnx passes, gpt2/model.onnx fails (the overflow model), mlp.onnx passes, and
    model.onnx where pytest runs, in no folder of its own, is named as its path is shown."""
    if workers:
        pytest.importorskip("xdist")
    _project(pytester, {"bert/model.onnx": PASSES, "gpt2/model.onnx": FAILS,
                        "mlp.onnx": PASSES, "model.onnx": PASSES}, test_stems=TESTS)
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep", *workers)
    run.assert_outcomes(passed=3, failed=1)
    out = run.stdout.str()
    assert "4 accuracy checks: 3 passed, 1 failed (4 models x 1 mode)" in out, out
    assert _rows(out) == [("bert/model", "passed"), ("gpt2/model", "FAILED"),
                          ("mlp", "passed"),  # a stem no other file has stays short
                          ("model.onnx", "passed")], out  # not '<rootdir's name>/model'
    assert re.search(r"^FAILED test_stems\.py::test_gpt2 \[gpt2/model, default\]: ", out, re.M)
    assert "[model, default]" not in out
    # a folder per test, and the run's index names each check as the summary does
    index = json.loads((pytester.path / "rep" / "index.json").read_text())
    assert sorted((f["folder"], f["check"]) for f in index["folders"]) == [
        ("test_stems.py--test_bert", "bert/model, default"),
        ("test_stems.py--test_gpt2", "gpt2/model, default"),
        ("test_stems.py--test_mlp", "mlp, default"),
        ("test_stems.py--test_root", "model.onnx, default")]


TWO_IN_ONE = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95)
def test_both(ascend_model, golden_dump, check_accuracy):
    for path in ("bert/model.onnx", "gpt2/model.onnx"):
        inputs = make_inputs(path)
        check_accuracy(ascend_model(path).run(inputs), golden_dump(path, inputs))
'''
BERT_GPT2 = {"bert/model.onnx": PASSES, "gpt2/model.onnx": FAILS}


def test_a_test_converting_two_files_of_one_name_names_the_failing_one(pytester):
    """Its failure block's advice is for one model's ``ascend_model`` call: "the ascend_model
    call of model alone" named neither."""
    _project(pytester, BERT_GPT2, test_both=TWO_IN_ONE)
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep")
    run.assert_outcomes(failed=1)
    out = run.stdout.str()
    assert "in the ascend_model call of gpt2/model alone" in out, out
    assert "call of model alone" not in out
    assert re.search(r"^FAILED test_both\.py::test_both \[gpt2/model, default\]: ", out, re.M)
    assert _rows(out) == [("bert/model", "passed"), ("gpt2/model", "FAILED")], out
    pages = {p.parent.name: p.read_text() for p in (pytester.path / "rep").glob("*/report.html")}
    assert "test_both.py::test_both [gpt2/model, default]" in pages["test_both.py--test_both-2"]
    index = json.loads((pytester.path / "rep" / "index.json").read_text())
    checks = sorted(f["check"] for f in index["folders"])
    assert checks == ["bert/model, default", "gpt2/model, default"]


LINKED = '''
import pytest
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

HF = "hf/models--org--{}/snapshots/rev1/model.onnx"


def _check(path, ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(path)
    check_accuracy(ascend_model(path).run(inputs), golden_dump(path, inputs))


@accuracy(threshold=0.95)
def test_bert(ascend_model, golden_dump, check_accuracy):
    _check("links/bert/model.onnx", ascend_model, golden_dump, check_accuracy)


@accuracy(threshold=0.95)
def test_both(ascend_model, golden_dump, check_accuracy):
    for path in ("links/bert/model.onnx", "links/gpt2/model.onnx"):
        _check(path, ascend_model, golden_dump, check_accuracy)


@accuracy(threshold=0.95)
@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_hub(name, ascend_model, golden_dump, check_accuracy):
    _check(HF.format(name), ascend_model, golden_dump, check_accuracy)


@accuracy(threshold=0.95)
def test_target(ascend_model, golden_dump, check_accuracy):  # the file links/bert names
    _check("store/s1/model.onnx", ascend_model, golden_dump, check_accuracy)
'''
#: links/<name>/model.onnx into store/s<k>/, and the Hugging Face hub cache's layout
#: (models--org--<name>/snapshots/<revision>/model.onnx -> ../../blobs/<sha256>)
STORE = {"store/s1/model.onnx": PASSES, "store/s2/model.onnx": FAILS,
         "hf/models--org--bert/blobs/9f1c": PASSES, "hf/models--org--gpt2/blobs/77ab": FAILS}
LINKS = (("links/bert/model.onnx", "../../store/s1/model.onnx"),
         ("links/gpt2/model.onnx", "../../store/s2/model.onnx"),
         ("hf/models--org--bert/snapshots/rev1/model.onnx", "../../blobs/9f1c"),
         ("hf/models--org--gpt2/snapshots/rev1/model.onnx", "../../blobs/77ab"))


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_a_linked_file_is_named_by_the_path_its_test_gave(pytester, workers):
    """Not by the link's target (``s1/model``, ``models--org--gpt2/blobs/model``); the link's
    target, checked by its own path too, is the same model: one row, named by the path met
    first in test-id order (``test_bert``'s), whichever worker ran which test."""
    if workers:
        pytest.importorskip("xdist")
    _project(pytester, STORE, LINKS, test_linked=LINKED)
    run = pytester.runpytest("-p", "no:cacheprovider", *workers)
    run.assert_outcomes(passed=3, failed=2)
    out = run.stdout.str()
    assert "6 accuracy checks: 4 passed, 2 failed (4 models x 1 mode)" in out, out
    assert _rows(out) == [("bert/model", "passed"), ("gpt2/model", "FAILED"),
                          ("models--org--bert/snapshots/rev1/model", "passed"),
                          ("models--org--gpt2/snapshots/rev1/model", "FAILED")], out
    assert re.search(r"^FAILED test_linked\.py::test_both \[gpt2/model, default\]: ", out, re.M)
    assert re.search(r"^FAILED test_linked\.py::test_hub\[gpt2\] "
                     r"\[models--org--gpt2/snapshots/rev1/model, default\]: ", out, re.M), out
    assert "in the ascend_model call of gpt2/model alone" in out  # the test's own text
    assert "s1/model" not in out and "s2/model" not in out and "blobs/model" not in out


def test_labels_are_the_shortest_path_end_that_tells_files_apart(tmp_path):
    from pytest_ascend_accuracy.plugin.model_labels import distinct_labels

    named = [("model", "/r/a/x/model.onnx", None), ("model", "/r/b/x/model.onnx", None),
             ("model", "/r/gpt2/model.onnx", None), ("model", None, None),
             ("mlp", "/r/mlp.onnx", None), ("net", "/net.onnx", None),
             ("net", "/sub/net.onnx", None)]
    assert distinct_labels(named + named[:2]) == {
        ("model", "/r/a/x/model.onnx"): "a/x/model", ("model", "/r/b/x/model.onnx"): "b/x/model",
        ("model", "/r/gpt2/model.onnx"): "gpt2/model",
        ("model", None): "model",  # an in-memory model or a dump (no file known): its name
        ("mlp", "/r/mlp.onnx"): "mlp",
        ("net", "/net.onnx"): "/net", ("net", "/sub/net.onnx"): "sub/net"}
    # a check of dumps (no file known) beside one file of its name: one row, as it was
    assert distinct_labels([("det", None, None), ("det", "/r/det.onnx", None)]) == {
        ("det", None): "det", ("det", "/r/det.onnx"): "det"}
    # the path the test gave, the first one met for a file, not its real path
    assert distinct_labels([("model", "/s/1/model.onnx", "/r/bert/model.onnx"),
                            ("model", "/s/1/model.onnx", "/r/alias/model.onnx"),
                            ("model", "/s/2/model.onnx", "/r/gpt2/model.onnx")]) == {
        ("model", "/s/1/model.onnx"): "bert/model", ("model", "/s/2/model.onnx"): "gpt2/model"}
    # a file in no folder of its own, and two files of one folder: as shown from where
    # pytest ran (``base``), not absolute
    base = tmp_path / "proj"
    files = [("m", str(base / "m.onnx"), None), ("m", str(base / "m.pb"), None),
             ("model", str(base / "model.onnx"), None),
             ("model", str(base / "sub" / "model.onnx"), None)]
    assert distinct_labels(files, base) == {
        ("m", str(base / "m.onnx")): "m.onnx", ("m", str(base / "m.pb")): "m.pb",
        ("model", str(base / "model.onnx")): "model.onnx",
        ("model", str(base / "sub" / "model.onnx")): "sub/model"}


DATASET = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95)
def test_both(ascend_model, check_dataset):
    for path in ("{0}bert/model.onnx", "{0}gpt2/model.onnx"):
        samples = [make_inputs(path, seed=k) for k in range(2)]
        check_dataset(ascend_model(path), samples, metric="agreement", max_drop=0.9)
'''


@pytest.mark.parametrize("linked", [False, True])
def test_dataset_lines_name_two_files_of_one_name_by_their_folders(pytester, linked):
    if linked:  # the dataset record carries the path its test gave too
        _project(pytester, STORE, LINKS, test_data=DATASET.format("links/"))
    else:
        _project(pytester, BERT_GPT2, test_data=DATASET.format(""))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(passed=1)
    out = run.stdout.str()
    assert re.search(r"^  bert/model \[default\] agreement ", out, re.M), out
    assert re.search(r"^  gpt2/model \[default\] agreement ", out, re.M), out

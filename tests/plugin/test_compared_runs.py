"""A test that makes its golden before running the model, and every YAML entry, has the run
compared as it runs (``plugin.compared_runs``): a passing check writes no dump file, a failing
one fails with the same block as a run made first, its dump kept and named, and ``compare``
pasted from it reads it."""
import csv
import re
from pathlib import Path

import pytest

from pytest_ascend_accuracy.dump.layout import AscendDumpWriter

GOLDEN_FIRST = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95)
def test_golden_first(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/{model}.onnx")
    golden = golden_dump("models/{model}.onnx", inputs)
    actual = ascend_model("models/{model}.onnx").run(inputs)
    check_accuracy(actual, golden)


@accuracy(threshold=0.95)
def test_run_first(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/{model}.onnx")
    actual = ascend_model("models/{model}.onnx").run(inputs)
    check_accuracy(actual, golden_dump("models/{model}.onnx", inputs))
'''


@pytest.fixture
def writes(monkeypatch):
    """Dump files written, counted (the runs happen in this process)."""
    count = []
    real = AscendDumpWriter.write_op

    def counting(self, *args, **kwargs):
        count.append(args[1] if len(args) > 1 else kwargs.get("op_name"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(AscendDumpWriter, "write_op", counting)
    return count


def _block(run, test):
    """The failure block of ``test``, paths of its tmp dirs and timings out."""
    text = run.stdout.str()
    start = text.index(f"_ {test} _")
    end = text.find("\n___", start + 1)
    block = text[start:end if end > 0 else None].split("\n", 1)[1]
    block = block.split("\n=====")[0]
    block = re.sub(r"test_acc\.py:\d+", "test_acc.py:N", block)
    return re.sub(r"\S*(pytest-\d+|ascend-dumps)\S*", "PATH", block)


def test_a_passing_check_with_its_golden_first_writes_no_dump(pytester, models_dir, writes):
    pytester.makepyfile(test_acc=GOLDEN_FIRST.format(model="passing_mlp"))
    run = pytester.runpytest("-p", "no:cacheprovider", "-k", "golden_first")
    run.assert_outcomes(passed=1)
    assert writes == []
    run = pytester.runpytest("-p", "no:cacheprovider", "-k", "run_first")
    run.assert_outcomes(passed=1)
    assert writes  # the run before the golden: its dump written, as before


def test_a_failing_check_with_its_golden_first_fails_alike_and_keeps_its_dump(
        pytester, models_dir, capsys):
    from pytest_ascend_accuracy.cli import main

    pytester.makepyfile(test_acc=GOLDEN_FIRST.format(model="overflow"))
    run = pytester.runpytest("-p", "no:cacheprovider", "-rf")
    run.assert_outcomes(failed=2)
    first, later = _block(run, "test_golden_first"), _block(run, "test_run_first")
    assert "first failure in graph order: norm" in first or "norm" in first
    assert first.replace("test_golden_first", "T") == later.replace("test_run_first", "T")
    kept = [line for line in run.stdout.lines if line.startswith("dump kept: ")]
    assert len(kept) == 2
    path = kept[0][len("dump kept: "):]
    assert (pytester.path / path).is_dir() and any((pytester.path / path).rglob("*.*"))
    goldens = list((pytester.path / ".ascend-accuracy" / "golden").glob("*/*/golden.json"))
    capsys.readouterr()
    assert main(["compare", path, str(goldens[0].parent / "npy")]) == 1  # pasted
    assert "norm" in capsys.readouterr().out


def test_the_report_of_a_check_with_its_golden_first_is_the_same(pytester, models_dir, writes):
    pytester.makepyfile(test_acc=GOLDEN_FIRST.format(model="passing_mlp"))
    run = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep")
    run.assert_outcomes(passed=2)
    assert len(set(writes)) == len(writes) > 0  # run_first's dump only: KL computed as it ran
    sets = {p.parent.name: p for p in (pytester.path / "rep").rglob("compare.csv")}
    # each test's one set in its own folder (choosing a golden counted no check: -2)
    assert sorted(sets) == ["test_acc.py--test_golden_first", "test_acc.py--test_run_first"]
    first, later = (list(csv.reader(Path(sets[k]).open())) for k in sorted(sets))
    assert len(first) == len(later) > 1 and first[0] == later[0]
    header = first[0]
    kl = header.index("KullbackLeiblerDivergence")
    for a, b in zip(first[1:], later[1:]):
        assert a == b
        assert a[kl] not in ("", "NaN")  # computed while running: the report asks for it


YAML = """
models:
  - name: mlp
    model: models/passing_mlp.onnx
    threshold: 0.95
  - name: overflow
    model: models/overflow.onnx
    threshold: 0.95
"""


def test_a_yaml_entry_is_compared_as_it_runs(pytester, models_dir, writes):
    (pytester.path / "accuracy_models.yaml").write_text(YAML)
    run = pytester.runpytest("-p", "no:cacheprovider", "accuracy_models.yaml", "-k", "mlp")
    run.assert_outcomes(passed=1)
    assert writes == []
    run = pytester.runpytest("-p", "no:cacheprovider", "accuracy_models.yaml", "-k", "overflow")
    run.assert_outcomes(failed=1)
    assert writes  # the failing entry's dump, written to be kept and reported
    assert any(line.startswith("dump kept: ") for line in run.stdout.lines)


TWO_GOLDENS = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95)
def test_two_inputs(ascend_model, golden_dump, check_accuracy):
    first, second = (make_inputs("models/passing_mlp.onnx", seed=s) for s in (0, 1))
    goldens = [golden_dump("models/passing_mlp.onnx", x) for x in (first, second)]
    om = ascend_model("models/passing_mlp.onnx")
    for x, golden in zip((first, second), goldens):
        check_accuracy(om.run(x), golden)
'''


def test_each_run_is_compared_with_the_golden_of_its_inputs(pytester, models_dir, writes):
    pytester.makepyfile(test_acc=TWO_GOLDENS)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(passed=1)
    assert writes == []  # the first run against the first golden, not the last one made


FAILS_AFTER = """
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95)
def test_fails_after_its_check(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/passing_mlp.onnx")
    golden = golden_dump("models/passing_mlp.onnx", inputs)
    check_accuracy(ascend_model("models/passing_mlp.onnx").run(inputs), golden)
    assert False, "the test's own assert"
"""


def test_a_test_failing_after_its_passing_check_keeps_the_dump(pytester, models_dir):
    pytester.makepyfile(test_acc=FAILS_AFTER)
    run = pytester.runpytest("-p", "no:cacheprovider", "--basetemp", str(pytester.path / "bt"))
    run.assert_outcomes(failed=1)
    dumps = [d for d in (pytester.path / "bt").glob("*/ascend-dumps/dump-*")
             if not d.parents[1].is_symlink()]  # (pytest's <name>current link)
    assert len(dumps) == 1 and any(p.is_file() for p in dumps[0].rglob("*")), dumps


BASELINE_GOLDEN_FIRST = """
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.05, max_drop=0.002, scale_tolerance=None)
def test_overflow_kept(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/overflow.onnx", seed=0)
    golden = golden_dump("models/overflow.onnx", inputs)
    check_accuracy(ascend_model("models/overflow.onnx").run(inputs), golden)
"""


def _report_json(pytester):
    import json

    found = list((pytester.path / "rep").rglob("compare.json"))
    assert len(found) == 1, found
    return json.loads(found[0].read_text())


def test_a_baseline_regression_reports_the_dump_it_keeps(pytester, models_dir):
    from test_baseline_option import BASELINE, _raise_cosine

    pytester.makepyfile(test_bl=BASELINE_GOLDEN_FIRST)
    pytester.runpytest("-q").assert_outcomes(failed=1)  # the baseline written
    _raise_cosine(pytester.path / BASELINE, "norm", 0.1)
    run = pytester.runpytest("-q", "--accuracy-report=rep")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines(["  norm: cosine 0.496693 -> 0.396693 (drop 0.100000 > 0.002)"])
    report = _report_json(pytester)
    root = report["actual_root"]
    assert root and Path(root).is_dir(), root  # the dump kept, named as a run-first test's
    assert all(Path(r["source"]).is_file() for r in report["rows"] if r.get("metrics")), report


def test_a_test_failing_after_its_check_names_the_kept_dump_in_its_report(pytester, models_dir):
    pytester.makepyfile(test_acc=FAILS_AFTER)
    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep").assert_outcomes(
        failed=1)
    root = _report_json(pytester)["actual_root"]
    assert root and any(p.is_file() for p in Path(root).rglob("*")), root


def test_a_finished_test_holds_no_run_inputs(pytester, models_dir):
    # a review: each TestContext kept its runs' inputs (a 16 MB input a test) for the session
    from pytest_ascend_accuracy.plugin.fixtures import CONTEXT_KEY

    pytester.makepyfile(test_acc=GOLDEN_FIRST.format(model="passing_mlp"))
    rec = pytester.inline_run("-p", "no:cacheprovider")
    rec.assertoutcome(passed=2)
    items = rec.getcalls("pytest_collection_finish")[0].session.items
    assert [len(item.stash[CONTEXT_KEY].runs) for item in items] == [0, 0]


def test_a_test_skipped_after_its_check_runs_nothing_again(pytester, models_dir, writes):
    pytester.makepyfile(test_acc=FAILS_AFTER.replace('assert False, "the test\'s own assert"',
                                                     'import pytest; pytest.skip("later")'))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(skipped=1)
    assert writes == []  # no one inspects a skipped test's dump: not run again to write it


def test_a_run_compared_as_it_runs_shows_the_compare_s_progress_line(pytester, models_dir):
    # issue 17's progress line for long compares: a written run's compare drew it, and a run
    # compared as it runs compares all the same
    pytester.makepyfile(test_acc=GOLDEN_FIRST.format(model="passing_mlp"))
    run = pytester.runpytest("-p", "no:cacheprovider", "-k", "golden_first",
                             "--accuracy-progress")
    run.assert_outcomes(passed=1)
    assert re.search(r"ascend-accuracy: comparing (\d+)/\1 tensors", run.stdout.str())

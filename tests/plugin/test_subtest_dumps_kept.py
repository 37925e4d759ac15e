"""A check that fails inside a subtest (pytest 9's ``subtests`` fixture) keeps the dump its
failure block names: the block printed `dump kept: .../dump-0` and the folder was gone after
the session (CI trial), removed as a passing test's when the other subtest passed, or when
the test function returned (pytest fails the test for its failed subtest only later)."""
import pytest

pytest.importorskip("_pytest.subtests")  # pytest >= 9: the subtests fixture is pytest's own

SUBTESTS = '''
from pytest_ascend_accuracy import accuracy

MODELS = {order!r}


@accuracy(threshold=0.95)
def test_models(subtests, ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    for name in MODELS:
        with subtests.test(model=name):
            model = f"models/{{name}}.onnx"
            inputs = accuracy_inputs(model, seed=0)
            check_accuracy(ascend_model(model).run(inputs), golden_dump(model, inputs))
'''


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
@pytest.mark.parametrize("order, workers", [
    (["overflow", "passing_mlp"], []),
    (["passing_mlp", "overflow"], []),
    (["overflow", "passing_mlp"], ["-n", "2"]),
], ids=["failing-first", "failing-last", "xdist"])
def test_a_failed_subtest_keeps_the_dump_it_names(pytester, models_dir, order, workers):
    pytester.makepyfile(test_sub=SUBTESTS.format(order=order))
    result = pytester.runpytest("-p", "no:cacheprovider", "--basetemp", str(pytester.path / "bt"),
                                *workers)
    result.stdout.fnmatch_lines(["*FAILED test_sub.py::test_models - contains 1 failed subtest"])
    kept = [line.split("dump kept: ", 1)[1] for line in result.stdout.lines
            if line.startswith("dump kept: ")]
    assert len(kept) == 1, result.stdout.str()
    assert (pytester.path / kept[0]).is_dir(), f"'dump kept: {kept[0]}' names no folder"
    assert any((pytester.path / kept[0]).iterdir())

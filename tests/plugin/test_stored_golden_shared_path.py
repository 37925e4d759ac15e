"""One stored golden path given by two tests with other inputs (a test parametrized over input
shapes or seeds, one ``path=``): one always failed against the other's golden, and under
``--accuracy-regen`` each rewrote the file the other had just written, in every session (H103,
PP-OCR cls at widths 192 and 100). Refused before the second test reads it, saying so, without
rewriting anything; a path of its own, as the refusal says, passes."""

TESTS = '''
import pytest
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/passing_mlp.onnx"


@pytest.mark.parametrize("seed", [0, 1])
@accuracy(threshold=0.99)
def test_shared(ascend_model, golden_dump, check_accuracy, seed):
    inputs = make_inputs(M, seed=seed)
    golden = golden_dump(M, inputs, path={PATH})
    check_accuracy(ascend_model(M).run(inputs), golden)
'''

REFUSED = ("*golden file golden/shared is used in this session by "
           "test_shared.py::test_shared[[]0[]] with other inputs (another seed or inputs "
           "file): a stored golden holds one model's golden on one set of inputs, so each test "
           "would fail against the other's, and "
           "--accuracy-regen would rewrite it for each in turn. Give this test a golden path "
           "of its own (golden_dump(..., path=...), a YAML entry's golden:)")


def test_one_golden_path_for_two_inputs_is_refused_and_never_rewritten_in_turn(
        pytester, models_dir):
    pytester.makepyfile(test_shared=TESTS.replace("{PATH}", '"golden/shared"'))
    first = pytester.runpytest("-p", "no:cacheprovider")
    first.assert_outcomes(failed=2)  # [0] wrote it (missing), [1] refused
    first.stdout.fnmatch_lines([REFUSED])
    record = (pytester.path / "golden" / "shared" / "golden.json").read_bytes()

    for args in ((), ("--accuracy-regen",)):
        again = pytester.runpytest("-p", "no:cacheprovider", *args)
        again.assert_outcomes(passed=1, failed=1)
        again.stdout.fnmatch_lines([REFUSED])
        assert "rewrote" not in again.stdout.str()
        assert (pytester.path / "golden" / "shared" / "golden.json").read_bytes() == record

    # two xdist workers reaching the path at once: exactly one goes on, the other is refused
    # (H106: a claim written after the golden was read let both through, and under
    # --accuracy-regen each rewrote the file, one crashing on the other's rewrite)
    both = pytester.runpytest("-p", "no:cacheprovider", "-n", "2", "--accuracy-regen")
    refused = [line for line in both.outlines if line.startswith("FAILED ")
               and "no check verdict" in line  # (the section's line: the short summary's too)
               and "is used in this session by test_shared.py::test_shared[" in line]
    assert len(refused) == 1, both.outlines
    reports = "\n".join(both.outlines).split("short test summary info")[0]  # (9.2's summary
    assert reports.count("rewrote it from") <= 1  # repeats each message whole, lines and all)
    assert "FileReplacedError" not in both.stdout.str()

    # as the refusal says: each test its own path
    pytester.makepyfile(test_shared=TESTS.replace("{PATH}", 'f"golden/shared_{seed}"'))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=2)  # written missing
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


TWICE = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/passing_mlp.onnx"


@accuracy(threshold=0.99)
def test_twice(ascend_model, golden_dump, check_accuracy):
    for seed in (0, 1):
        inputs = make_inputs(M, seed=seed)
        golden = golden_dump(M, inputs, path="golden/one")
        check_accuracy(ascend_model(M).run(inputs), golden)
'''


def test_one_test_giving_one_path_two_inputs_is_refused_too(pytester, models_dir):
    pytester.makepyfile(test_twice=TWICE)
    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-regen-all")
    again = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-regen")
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["*golden file golden/one is used in this session by an earlier "
                                "golden_dump call of this test with other inputs*"])
    assert "rewrote it from" not in again.stdout.str()


LINKED = '''
import pytest
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/passing_mlp.onnx"


@pytest.mark.parametrize("seed, path", [(0, "golden/real"), (1, "golden/alias")])
@accuracy(threshold=0.99)
def test_linked(ascend_model, golden_dump, check_accuracy, seed, path):
    inputs = make_inputs(M, seed=seed)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs, path=path))
'''


def test_one_golden_given_through_a_link_is_one_path(pytester, models_dir):
    """golden/alias -> golden/real: two names of one golden, keyed apart, let both tests through
    to rewrite it in turn (H108)."""
    pytester.makepyfile(test_linked=LINKED)
    pytester.runpytest("-p", "no:cacheprovider", "-k", "real")  # writes golden/real
    (pytester.path / "golden" / "alias").symlink_to("real", target_is_directory=True)
    result = pytester.runpytest("-p", "no:cacheprovider", "--accuracy-regen")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*golden file golden/alias is used in this session by "
                                 "test_linked.py::test_linked[[]0-golden/real[]] with other "
                                 "inputs*"])

"""A check must judge something, and its hint must hold for a golden stored without inputs
(a fresh-eyes user review): ``ignore: ["*"]`` passed a model failing 139 of 140 tensors, and
the README's overflow example with ``golden_dump(path=...)`` said "no float16 overflow seen"
and offered modes that did not fix it, where the cached golden named ``keep_dtype(['norm'])``."""

TEST_IGNORE_ALL = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95)
def test_all_ignored(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/overflow.onnx")
    check_accuracy(ascend_model("models/overflow.onnx").run(inputs),
                   golden_dump("models/overflow.onnx", inputs), ignore=[{pattern!r}])
'''


def test_ignoring_every_op_fails_and_says_what_to_narrow(pytester, models_dir):
    pytester.makepyfile(test_ign=TEST_IGNORE_ALL.format(pattern="*"))
    pytester.makefile(".yaml", accuracy_ign='''
models:
  - name: overflow
    model: models/overflow.onnx
    threshold: 0.95
    ignore: ["*"]
  - name: mlp
    model: models/passing_mlp.onnx
    ignore: ["relu*"]
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2, passed=1)  # the mlp keeps ops relu* does not match
    assert ("accuracy FAILED: no tensor was judged: of the compared tensors, 5 ignored by "
            "ignore=['*']; name only the ops to accept in ignore= (ignore: in a YAML suite, "
            "--ignore on the command line)") in result.stdout.str()
    result.stdout.fnmatch_lines(["*next step: every compared tensor was ignored or skipped: "
                                 "name only the ops to accept in ignore= (ignore: in a YAML "
                                 "suite, --ignore on the command line)"])


def test_a_golden_stored_with_outputs_only_gets_the_operand_hint_and_it_works_pasted(
        pytester, models_dir):
    test = '''
from pytest_ascend_accuracy import accuracy, keep_dtype
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.95{modes})
def test_stored(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/overflow.onnx")
    check_accuracy(ascend_model("models/overflow.onnx").run(inputs),
                   golden_dump("models/overflow.onnx", inputs, path="goldens/overflow"))
'''
    pytester.makepyfile(test_stored=test.format(modes=""))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)  # writes the golden
    assert not list((pytester.path / "goldens").rglob("*input*"))  # outputs only
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines([
        "next step: golden operands leave the float16 range (norm input:4 reaches |1e+09|)*",
        "  modes=[keep_dtype(['norm'])]"])
    assert "no float16 overflow seen" not in failed.stdout.str()
    pytester.makepyfile(test_stored=test.format(modes=", modes=[keep_dtype(['norm'])]"))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)  # pasted: passes


TEST_NO_CHECK = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/overflow.onnx"


@accuracy(threshold=0.95)
def test_runs_only(ascend_model):
    ascend_model(M).run(make_inputs(M))


@accuracy(threshold=0.95)
def test_outputs_its_own_way(ascend_model):
    assert ascend_model(M).outputs(make_inputs(M))
    assert len(ascend_model(M).run(make_inputs(M), dump=False)) == 1


def test_unmarked(ascend_model):
    ascend_model(M).run(make_inputs(M))


@accuracy(threshold=0.95)
def test_not_dumped(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    check_accuracy(ascend_model(M).run(inputs, dump=False), golden_dump(M, inputs))
'''


def test_a_marked_test_that_dumped_its_model_and_checked_nothing_is_warned_about(
        pytester, models_dir):
    """It passed silently: ``@accuracy`` with ``om.run(inputs)`` and no ``check_accuracy``. A
    warning, not a failure (a review found tests this cannot tell from it: assert_accuracy from
    the library, outputs judged their own way). And
    a check of a run made with dump=False said to read the device dump with load_dump(...),
    which there is none of (user review)."""
    pytester.makepyfile(test_none=TEST_NO_CHECK)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=3, failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*accuracy FAILED: no tensor was compared: the actual run was not dumped (its 1 model "
        "output only, as run(inputs, dump=False) returns them)*",
        "next step: the run was not dumped: run the model with its dump: om.run(inputs) "
        "(dump=True is the default; run(inputs, dump=False) returns the model's outputs only)",
        "*NothingCheckedWarning: test_none.py::test_runs_only is marked @accuracy and dumped a "
        "run of overflow, but started no check: pass the dump to check_accuracy(actual, golden)*",
    ])
    assert out.count("NothingCheckedWarning") == 1, out  # not the others
    assert "load_dump" not in out
    # the advice pasted: run(inputs) instead of run(inputs, dump=False) compares, and fails on
    # what the model really does (the overflow), no longer on a missing dump
    pytester.makepyfile(test_none=TEST_NO_CHECK.replace("run(inputs, dump=False)", "run(inputs)"))
    pasted = pytester.runpytest("-p", "no:cacheprovider", "-k", "not_dumped")
    pasted.assert_outcomes(failed=1)
    pasted.stdout.fnmatch_lines(["*first failure in graph order: norm*"])


def test_under_w_error_a_test_that_checked_nothing_errors_and_the_session_goes_on(
        pytester, models_dir):
    """The warning came from the report hook: under -W error it was an INTERNALERROR that
    stopped the session after that test, and -n 2 exited 0 (a CI trial). Raised in the
    test's teardown, it is that test's error and the others still run."""
    pytester.makepyfile(test_w='''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/passing_mlp.onnx"


@accuracy(threshold=0.95)
def test_runs_only(ascend_model):
    ascend_model(M).run(make_inputs(M))


@accuracy(threshold=0.95)
def test_checks(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "-W", "error")
    result.assert_outcomes(passed=2, errors=1)
    assert "INTERNALERROR>" not in result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["ERROR test_w.py::test_runs_only*NothingCheckedWarning*"])

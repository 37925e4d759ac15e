"""``check_accuracy`` given its arguments the wrong way round, or a converted model where its
run's dump goes: refused saying so, with the call that works. Swapped, the check judged the
device against the golden's values (relative metrics divide by the device's, the scale guard
measures the other side) and failed or passed naming figures of the wrong side."""

TESTS = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/passing_mlp.onnx"


@accuracy(threshold=0.99)
def test_swapped(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    om = ascend_model(M)
    check_accuracy({FIRST}, {SECOND})


@accuracy(threshold=0.99)
def test_model_not_its_run(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    check_accuracy({MODEL}, golden_dump(M, inputs))
'''


def _write(pytester, first, second, model):
    pytester.makepyfile(test_args=TESTS.replace("{FIRST}", first).replace("{SECOND}", second)
                        .replace("{MODEL}", model))


def test_swapped_arguments_and_a_model_for_its_run_are_refused_with_the_call_that_works(
        pytester, models_dir):
    _write(pytester, "golden_dump(M, inputs)", "om.run(inputs)", "ascend_model(M)")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*check_accuracy: the arguments are swapped: the first is this test's golden "
        "(golden_dump's), the second its device run (a run of ascend_model's); swap them, "
        "check_accuracy(actual, golden)"])
    result.stdout.fnmatch_lines([
        "FAILED test_args.py::test_model_not_its_run: no check verdict: TypeError: expected a "
        "DumpSet or a path to a dump, got AscendModel (a converted model: pass its run's dump, "
        "om.run(inputs))"])

    # the calls as the errors give them
    _write(pytester, "om.run(inputs)", "golden_dump(M, inputs)", "ascend_model(M).run(inputs)")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_a_stored_golden_first_is_refused_too(pytester, models_dir):
    """A stored golden (``golden_dump(..., path=...)``, the CI flow) carries no record of its
    source in its DumpSet: swapped, it was judged with its sides reversed (a review)."""
    _write(pytester, 'golden_dump(M, inputs, path="golden/mlp")', "om.run(inputs)",
           "ascend_model(M).run(inputs)")
    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-regen-all")  # writes golden/mlp
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*check_accuracy: the arguments are swapped*"])
    _write(pytester, "om.run(inputs)", 'golden_dump(M, inputs, path="golden/mlp")',
           "ascend_model(M).run(inputs)")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_two_device_runs_or_two_goldens_may_be_compared(pytester, models_dir):
    """Only the golden-first, device-second order is refused."""
    _write(pytester, "om.run(inputs)", "om.run(inputs)", "ascend_model(M).run(inputs)")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
    _write(pytester, "golden_dump(M, inputs)", "golden_dump(M, inputs)",
           "ascend_model(M).run(inputs)")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)

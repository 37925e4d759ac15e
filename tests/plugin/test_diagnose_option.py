"""``--accuracy-diagnose``: the debugging flow appended to a failing test, as a user sees it."""
from conftest import ACCURACY_TESTS


def test_failing_test_gets_the_diagnosis_and_fix_files(pytester, models_dir):
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    result = pytester.runpytest("-q", "--accuracy-diagnose", "--accuracy-report=rep",
                                "-k", "overflow and default")
    result.assert_outcomes(failed=1, deselected=3)
    result.stdout.fnmatch_lines([
        "accuracy FAILED: * first failure in graph order: norm (#2)",
        "diagnosis (--accuracy-diagnose, * new conversion*): default fails at op norm; high "
        "precision passes; keep_dtype {norm} restores cosine 1.000000 under fp16",
        "  fix files written to rep/test_acc.py--test_overflow_default-*/diagnosis/ "
        "(atc_args.txt, keep_dtype.cfg)",
        "  full diagnosis: rep/test_acc.py--test_overflow_default-*/diagnosis/diagnosis.txt",
    ])
    fix = next((pytester.path / "rep").glob("test_acc.py--test_overflow_default-*")) / "diagnosis"
    assert (fix / "keep_dtype.cfg").read_text() == "norm\n"


def test_passing_tests_and_runs_without_the_flag_cost_no_diagnosis(pytester, models_dir):
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    result = pytester.runpytest("-q", "-k", "overflow and default")
    result.assert_outcomes(failed=1, deselected=3)
    assert "diagnosis (--accuracy-diagnose" not in result.stdout.str()
    result = pytester.runpytest("-q", "--accuracy-diagnose", "-k", "mlp")
    result.assert_outcomes(passed=1, deselected=3)
    assert not (pytester.path / ".ascend-accuracy" / "diagnoses").exists()


def test_dumps_not_made_by_ascend_model_say_why_there_is_no_diagnosis(pytester, models_dir):
    pytester.makepyfile("""
        from pytest_ascend_accuracy import accuracy
        from pytest_ascend_accuracy.dump.model import DumpSet
        import numpy as np

        @accuracy(threshold=0.95)
        def test_arrays(check_accuracy):
            a = DumpSet.from_arrays({"op": [np.array([1.0, 0.0])]})
            g = DumpSet.from_arrays({"op": [np.array([0.0, 1.0])]})
            check_accuracy(a, g)
    """)
    result = pytester.runpytest("-q", "--accuracy-diagnose")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["diagnosis (--accuracy-diagnose): not run: this test compared "
                                 "dumps it did not produce with ascend_model(...).run(inputs)"])


def test_budget_must_be_positive(pytester):
    result = pytester.runpytest("--accuracy-diagnose-budget=0")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--accuracy-diagnose-budget: must be at least 1, got 0*"])


def test_the_tests_own_atc_options_enter_the_diagnosis_and_its_atc_args(pytester, models_dir):
    """atc_args.txt held the fix's options only: a test's own (input_format="ND" here) were
    neither used by the diagnosis' conversions nor written, so the file pasted as the fixed
    conversion's ATC options missed them (review)."""
    pytester.makepyfile(test_own="""
        from pytest_ascend_accuracy import accuracy
        from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

        @accuracy(threshold=0.95)
        def test_nd(ascend_model, golden_dump, check_accuracy):
            inputs = make_inputs("models/overflow.onnx")
            check_accuracy(ascend_model("models/overflow.onnx", input_format="ND").run(inputs),
                           golden_dump("models/overflow.onnx", inputs))
    """)
    result = pytester.runpytest("-q", "--accuracy-diagnose", "--accuracy-report=rep")
    result.assert_outcomes(failed=1)
    (fix,) = (pytester.path / "rep").glob("test_own.py--test_nd*/diagnosis")
    args = (fix / "atc_args.txt").read_text().split()
    assert "--input_format=ND" in args and any(a.startswith("--keep_dtype=") for a in args), args

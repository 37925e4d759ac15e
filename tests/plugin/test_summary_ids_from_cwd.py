"""The ascend-accuracy summary names a test as pytest's own summary does, relative to where
pytest ran: run from a project's parent folder (``pytest example_project``), it printed
``FAILED tests/test_models.py::...``, relative to the rootdir, which named no file there and
did not run pasted (a paths trial)."""
import onnx

from pytest_ascend_accuracy.testing import models as tiny_models

TEST = '''
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_overflow(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    model = "models/overflow.onnx"
    inputs = accuracy_inputs(model, seed=0)
    check_accuracy(ascend_model(model).run(inputs), golden_dump(model, inputs))
'''


def test_a_failed_check_is_named_as_pytest_names_it_and_runs_pasted(pytester):
    project = pytester.mkdir("proj")
    (project / "pytest.ini").write_text("[pytest]\n")  # the rootdir: proj, not where pytest runs
    (project / "models").mkdir()
    onnx.save(tiny_models.overflow(), str(project / "models" / "overflow.onnx"))
    (project / "tests").mkdir()
    (project / "tests" / "test_m.py").write_text(TEST.replace('"models/', '"proj/models/'))
    run = pytester.runpytest("proj", "-p", "no:cacheprovider", "-rf")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines(["FAILED proj/tests/test_m.py::test_overflow [[]overflow, default]: "
                              "first failing op norm *",
                              "FAILED proj/tests/test_m.py::test_overflow - *"])  # pytest's own
    pasted = pytester.runpytest("proj/tests/test_m.py::test_overflow", "-p", "no:cacheprovider")
    pasted.assert_outcomes(failed=1)

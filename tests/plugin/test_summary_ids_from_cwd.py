"""The ascend-accuracy summary names a test as pytest's own summary does, relative to where
pytest ran: run from a project's parent folder (``pytest example_project``), it printed
``FAILED tests/test_models.py::...``, relative to the rootdir, which named no file there and
did not run pasted (a paths trial)."""
import onnx
import pytest

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
    onnx.save(tiny_models.overflow_model(), str(project / "models" / "overflow.onnx"))
    (project / "tests").mkdir()
    (project / "tests" / "test_m.py").write_text(TEST.replace('"models/', '"proj/models/'))
    run = pytester.runpytest("proj", "-p", "no:cacheprovider", "-rf")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines(["FAILED proj/tests/test_m.py::test_overflow [[]overflow, default]: "
                              "first failing op norm *",
                              "FAILED proj/tests/test_m.py::test_overflow - *"])  # pytest's own
    pasted = pytester.runpytest("proj/tests/test_m.py::test_overflow", "-p", "no:cacheprovider")
    pasted.assert_outcomes(failed=1)


@pytest.mark.parametrize("cwd, expected", [
    ("/w/proj", "tests/test_m.py::test_overflow[default]"),
    ("/w", "proj/tests/test_m.py::test_overflow[default]"),
    ("/w/proj/tests", "test_m.py::test_overflow[default]"),
    ("/w/other", "../proj/tests/test_m.py::test_overflow[default]"),
])
def test_ids_are_spelled_as_pytest_spells_them_from_where_it_ran(cwd, expected):
    """Our own spelling, not ``Config.cwd_relative_nodeid``: its argument became a NodeId object
    in pytest 9.2, and the summary crashed there with a str (CI's fresh install)."""
    from pytest_ascend_accuracy.plugin.terminal_report import relative_ids

    assert relative_ids(cwd, "/w/proj")("tests/test_m.py::test_overflow[default]") == expected

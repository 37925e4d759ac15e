"""A baseline that records stored inputs (``accuracy_inputs(m, inputs=...)``) is judged with
them checked: its arrays folder left out of a commit, or an array edited, passed unseen (the
test passes its own arrays and never read them) while the file said ``stored: true`` and
nobody else could rerun it (a baselines trial). Refused naming the folder and the problem;
``--accuracy-regen``, as printed, rewrites them."""
import shutil

import numpy as np

TEST = """
import numpy as np
from pytest_ascend_accuracy import accuracy

M = "models/passing_mlp.onnx"


@accuracy(threshold=0.95, max_drop=0.002)
def test_mine(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    x = np.linspace(0, 1, 16, dtype=np.float32).reshape(1, 16)
    inputs = accuracy_inputs(M, inputs={"x": x})
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
"""


def _arrays(pytester):
    return [p for p in (pytester.path / "accuracy-baselines").rglob("*.npy")]


def test_missing_or_edited_stored_inputs_fail_naming_them_and_regen_rewrites_them(
        pytester, models_dir):
    pytester.makepyfile(test_mine=TEST)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)  # written
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    (array,) = _arrays(pytester)
    folder = array.parent

    np.save(array, np.load(array) * 2)  # edited
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*accuracy-baselines/*: the inputs it stores (*{folder.name}): "
                                 "changed: stored input 'x' (00-x.npy) is not the array it "
                                 "records; nobody can rerun it on them*"])

    shutil.rmtree(folder)  # left out of a commit
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*: missing stored input 'x' (00-x.npy); nobody can rerun*",
                                 "*--accuracy-regen*"])

    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-regen").assert_outcomes(failed=1)
    assert len(_arrays(pytester)) == 1
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

"""A time-major CTC output ``[T, 1, C]`` in pytest: the ``check_dataset`` fixture and a YAML
``dataset:`` item count samples, not time steps (audit 32, F1: 2 of 50 samples decoding to
other text passed ``max_drop=0.01`` at agreement 0.9984), and take ``batch_axis``."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

from .test_time_major_outputs import ctc_model, ctc_samples

TEST_FILE = '''
import numpy as np
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_ctc(ascend_model, check_dataset):
    r = check_dataset(ascend_model("ctc.onnx"), "ctcs", metric="agreement", max_drop=0.01{extra})
    print("RESULT", r.samples, r.rows, r.device)
'''


@pytest.fixture
def project(pytester):
    onnx.save(ctc_model(), str(pytester.path / "ctc.onnx"))
    (pytester.path / "ctcs").mkdir()
    for i, s in enumerate(ctc_samples()):
        np.savez(pytester.path / "ctcs" / f"{i:02d}.npz", **s)
    return pytester


def test_the_fixture_fails_two_of_fifty_samples_flipped(project):
    project.makefile(".py", test_ctc=TEST_FILE.format(extra=""))
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*dataset accuracy FAILED: agreement 0.9600 on the device vs 1.0000 reference (drop "
        "0.0400 > max_drop 0.0100)*",
        "*samples read along axis 1 of output 'y' (e.g. [[]20, 1, 10[]]: the axis of the inputs' "
        "batch size, 1; axis 0, of 20, is not); batch_axis=AXIS says another*",
        "*flipped top-1 (2 of 50; a sample flips when any of its 20 to 29 positions does, 2 of "
        "1225 positions flipped): 07, 31*"])


def test_the_fixture_takes_batch_axis(project):
    project.makefile(".py", test_ctc=TEST_FILE.format(extra=", batch_axis=0"))
    result = project.runpytest("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*RESULT 50 1225 0.998367*"])


@pytest.mark.parametrize("axis, outcome", [("", "failed"), (", batch_axis: 1", "failed"),
                                           (", batch_axis: 0", "passed")])
def test_a_yaml_dataset_item_reads_the_batch_axis(project, axis, outcome):
    project.makefile(".yaml", accuracy_ctc=f'''
models:
  - model: ctc.onnx
    input_shape: {{x: [1, 1, 10, 20]}}
    dataset: {{samples: ctcs, metric: agreement, max_drop: 0.01{axis}}}
''')
    result = project.runpytest("-p", "no:cacheprovider", "accuracy_ctc.yaml", "-k", "dataset")
    result.assert_outcomes(**{outcome: 1})


def test_a_yaml_batch_axis_of_another_kind_is_refused(project):
    project.makefile(".yaml", accuracy_bad='''
models:
  - model: ctc.onnx
    input_shape: {x: [1, 1, 10, 20]}
    dataset: {samples: ctcs, metric: agreement, batch_axis: [1]}
''')
    result = project.runpytest("-p", "no:cacheprovider", "accuracy_bad.yaml")
    result.stdout.fnmatch_lines(["*accuracy_bad.yaml: models[[]0[]].dataset.batch_axis: "
                                 "expected an axis of the output*got [[]1[]]*"])

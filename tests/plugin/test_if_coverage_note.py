"""A pass that judged most of the model only through an ``If``'s outputs says so, and JUnit's
``accuracy_coverage`` does not count the ops inside the If as compared (an audit:
silero_vad.onnx passed comparing 4 tensors, 205 of its 209 ops that ran inside ``If_0``, with
``accuracy_coverage`` 1.0000 and nothing printed). Ops inside fused ops still count: the fused
op's output stands for them."""
import re
from pathlib import Path

import pytest

from vad_like_model import vad_like_model

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy

AUDIO = np.linspace(-1, 1, 16).astype(np.float32)[None]
SR = np.array(16000, np.int64)


@accuracy(threshold=0.99)
def test_audio(ascend_model, golden_dump, check_accuracy):
    inputs = {"x": AUDIO, "sr": SR}
    actual = ascend_model("vad_like.onnx").run(inputs)
    check_accuracy(actual, golden_dump("vad_like.onnx", inputs))


@accuracy(threshold=0.9)
def test_mlp(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("passing_mlp.onnx")  # nothing inside an If: no note
    check_accuracy(ascend_model("passing_mlp.onnx").run(inputs),
                   golden_dump("passing_mlp.onnx", inputs))
'''

SUITE = '''
models:
  - name: vad
    model: vad_like.onnx
    inputs: {x: audio.npy, sr: sr.npy}
    threshold: 0.99
'''

NOTE = ("JudgedThroughIfWarning: vad_like [default]: 6 of 8 ops that ran were judged only "
        "through the outputs of pick (the device runs an If as one operator and dumps none of "
        "its branch's tensors); accuracy_coverage 0.2500 counts the 2 compared")


def _coverages(path) -> list:
    return re.findall(r'name="accuracy_coverage" value="([0-9.]+)"', Path(path).read_text())


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_pass_judged_through_an_if_says_so_and_its_coverage_counts_only_compared_ops(
        pytester, xdist):
    if xdist:
        pytest.importorskip("xdist")
    import numpy as np

    from vad_like_model import AUDIO, SR

    from pytest_ascend_accuracy.testing.models import save_models

    vad_like_model(pytester.path / "vad_like.onnx")
    save_models(pytester.path, ["passing_mlp"])
    np.save(pytester.path / "audio.npy", AUDIO)
    np.save(pytester.path / "sr.npy", SR)
    pytester.makepyfile(test_vad=TEST)
    pytester.makefile(".yaml", accuracy_vad=SUITE)
    # (a subprocess: in this one the YAML item's warning finds this test's frame as the user's)
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--junitxml=j.xml", *xdist)
    run.assert_outcomes(passed=3, warnings=2)
    text = run.stdout.str()
    assert text.count(NOTE) == 2, text  # the test's, at its line, and the YAML item's
    assert f"test_vad.py:12: {NOTE}" in text
    assert f"accuracy_vad.yaml:2: {NOTE}" in text  # its entry's line
    assert sorted(_coverages(pytester.path / "j.xml")) == ["0.2500", "0.2500", "1.0000"]


def test_the_fraction_counts_compared_and_fused_ops_of_those_that_ran():
    from pytest_ascend_accuracy.compare.rows import Coverage
    from pytest_ascend_accuracy.plugin.accuracy_check import coverage_fraction

    class Result:
        coverage = Coverage(10, compared=("a", "b"), fused=("c",), folded=("k",),
                            in_ifs=tuple("defghi"))

    assert coverage_fraction(Result) == pytest.approx(3 / 9)


def test_under_w_error_the_failed_test_keeps_its_check_s_junit_and_report(pytester):
    """A review: the warning was raised before the check's verdict was published, so under
    ``-W error`` JUnit said 'no check verdict' with no coverage, and the report index lacked
    the check. It is raised after: the test fails (the warning is an error there), its check's
    properties and report are there, as for any test failing after its checks passed."""
    import json

    import numpy as np

    from vad_like_model import AUDIO, SR

    vad_like_model(pytester.path / "vad_like.onnx")
    np.save(pytester.path / "audio.npy", AUDIO)
    np.save(pytester.path / "sr.npy", SR)
    pytester.makefile(".yaml", accuracy_vad=SUITE)
    pytester.makepyfile(test_vad=TEST.split("@accuracy(threshold=0.9)")[0])
    run = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--junitxml=j.xml", "--accuracy-report=rep",
        "-W", "error::pytest_ascend_accuracy.report.if_coverage.JudgedThroughIfWarning")
    run.assert_outcomes(failed=2)
    assert _coverages(pytester.path / "j.xml") == ["0.2500", "0.2500"]
    junit = (pytester.path / "j.xml").read_text()
    assert 'name="accuracy_first_failing_reason" value="no check verdict' not in junit
    assert junit.count('name="accuracy_first_failing_reason" value="its checks passed, then '
                       'the test failed: vad_like [default]: 6 of 8 ops') == 2, junit
    index = json.loads((pytester.path / "rep" / "index.json").read_text())
    assert index["checks"] == 2, index

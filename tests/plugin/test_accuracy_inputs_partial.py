"""``accuracy_inputs(model, seed=0, inputs={"sr": ...})``: the arrays given are used and every
other input is seeded, drawn as ``seed=0`` alone draws it. Before, the given mapping had to
hold every input ("model input 'input' not given") and ``seed=`` was dropped without a word (an
audit on silero-vad: there was no way to pin ``sr`` and seed the audio). A baseline check stores
such mixed inputs next to its baseline, and a rerun reproduces them. Without ``seed=``, a
mapping that leaves an input out is refused naming it and ``seed=0``."""
import numpy as np
import onnx
import pytest

pytest.importorskip("onnxruntime")

from tests.graph.test_compared_inputs_seeded import sr_model  # noqa: E402

TEST = '''
import numpy as np
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/vad.onnx"


@accuracy(threshold=0.99{extra})
def test_vad(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, {args}inputs={{"sr": np.array(8000, np.int64)}},
                             input_shape={{"input": (1, 576)}})
    assert int(inputs["sr"]) == 8000
    alone = make_inputs(M, seed=0, input_shape={{"input": (1, 576), "sr": ()}})
    assert np.array_equal(inputs["input"], alone["input"])  # the draw of seed=0 alone
    print("ORIGIN", type(inputs).__name__, getattr(inputs, "origin", None))
    golden = golden_dump(M, inputs)
    check_accuracy(ascend_model(M, input_shape={{"input": (1, 576)}}).run(inputs), golden)
'''


@pytest.fixture
def project(pytester):
    (pytester.path / "models").mkdir()
    onnx.save(sr_model(), str(pytester.path / "models" / "vad.onnx"))
    return pytester


def test_the_given_array_is_used_and_the_others_are_seeded(project):
    project.makepyfile(test_vad=TEST.format(extra="", args="seed=0, "))
    result = project.runpytest("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=1)  # before: model input 'input' not given
    result.stdout.fnmatch_lines(["*ORIGIN BaselineInputs seed+user*"])


def test_without_a_seed_a_missing_input_is_named_with_seed_0(project):
    project.makepyfile(test_vad=TEST.format(extra="", args=""))
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*accuracy_inputs(inputs=...) of 'vad': model input 'input' not given; inputs: input, "
        "sr. Give it too, or add seed=0 to seed the inputs you leave out: "
        "accuracy_inputs(..., seed=0, inputs={...})*"])


def test_a_baseline_check_stores_the_mixed_inputs_and_a_rerun_reproduces_them(project):
    project.makepyfile(test_vad=TEST.format(extra=", max_drop=0.01", args="seed=0, "))
    first = project.runpytest("-p", "no:cacheprovider")
    first.assert_outcomes(failed=1)  # the baseline is written: missing
    first.stdout.fnmatch_lines(["*baseline missing*"])
    (baseline,) = (project.path / "accuracy-baselines" / "models" / "vad").rglob("*.yaml")
    text = baseline.read_text()
    assert "stored: true" in text, text
    stored = sorted(p.name for p in baseline.with_name(baseline.stem + ".inputs").iterdir())
    assert stored == ["00-input.npy", "01-sr.npy"], stored
    assert int(np.load(baseline.with_name(baseline.stem + ".inputs") / "01-sr.npy")) == 8000
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)  # same arrays

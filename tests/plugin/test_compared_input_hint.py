"""A seeded golden run that fails where a seeded integer input decides a branch names the input,
the value drawn and how to give it yourself, in pytest's, a YAML suite's and the CLI's spelling.
The model is silero-vad's shape: ``If(Equal(sr, 16000))``, the ``then`` branch a Conv of kernel
256, so 128 samples fail there (``tests/graph/test_compared_inputs_seeded.py``). Seeded, ``sr``
is 16000; before, it was 9 and the run took the ``else`` branch, whose failures never named
``sr``. Each printed form is pasted as printed, with ``sr.npy`` holding 8000 (the 8 kHz path)."""
import re
import shlex
import subprocess
import sys

import numpy as np
import onnx
import pytest

pytest.importorskip("onnxruntime")

from tests.graph.test_compared_inputs_seeded import sr_model  # noqa: E402

TEST = '''
{imports}from pytest_ascend_accuracy import accuracy

M = "models/vad.onnx"


@accuracy(threshold=0.99)
def test_vad(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, {given}, input_shape={{"input": (1, 128)}})
    golden = golden_dump(M, inputs)
    check_accuracy(ascend_model(M, input_shape={{"input": (1, 128)}}).run(inputs), golden)
'''
SUITE = '''models:
  - name: vad
    model: models/vad.onnx
    inputs: {inputs}
    input_shape: {{input: [1, 128]}}
    threshold: 0.99
'''
SAID = ("seeded input 'sr' drew 16000 (seed 0), the constant the model compares it with "
        "(Equal 'is16k'): the run took the path that value picks")
PYTEST = re.compile(r"pytest: (seed=0, inputs=\{.*?\}) in the test's accuracy_inputs\(\.\.\.\) "
                    r"\((import numpy)\)")
YAML = re.compile(r"; YAML: inputs: (\{.*?\}); ascend-accuracy")
CLI = re.compile(r"(ascend-accuracy diagnose .*?)\)$", re.M)


@pytest.fixture
def project(pytester):
    (pytester.path / "models").mkdir()
    onnx.save(sr_model(), str(pytester.path / "models" / "vad.onnx"))
    return pytester


def _arrays(folder):
    """sr.npy: 8000, the other path; input.npy: 128 samples."""
    np.save(folder / "sr.npy", np.array(8000, np.int64))
    np.save(folder / "input.npy", np.random.default_rng(1).random((1, 128), dtype=np.float32))


def test_the_error_names_sr_and_the_pytest_form_pasted_passes(project):
    project.makepyfile(test_vad=TEST.format(imports="", given="seed=0"))
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)  # before: passed, on sr=9 (the else branch)
    out = result.stdout.str()
    assert SAID in out, out
    given, imports = PYTEST.search(out).groups()
    assert given == "seed=0, inputs={'sr': numpy.load('sr.npy')}", given
    _arrays(project.path)
    project.makepyfile(test_vad=TEST.format(imports=imports + "\n", given=given))
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_yaml_and_cli_forms_pasted_pass(project):
    suite = project.path / "accuracy.yaml"
    suite.write_text(SUITE.format(inputs="{seed: 0}"), encoding="utf-8")
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert SAID in out, out
    _arrays(project.path)
    suite.write_text(SUITE.format(inputs=YAML.search(out).group(1)), encoding="utf-8")
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    command = shlex.split(CLI.search(out).group(1))
    assert command[:2] == ["ascend-accuracy", "diagnose"], command
    assert command[2].endswith("models/vad.onnx"), command
    done = subprocess.run([sys.executable, "-m", "pytest_ascend_accuracy.cli", *command[1:]],
                          cwd=project.path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


RUN_FIRST = '''
from pytest_ascend_accuracy import accuracy

M = "models/vad.onnx"


@accuracy(threshold=0.99)
def test_vad(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0, input_shape={"input": (1, 128)})
    actual = ascend_model(M, input_shape={"input": (1, 128)}).run(inputs, dump=True)
    check_accuracy(actual, golden_dump(M, inputs))
'''


def test_a_device_run_before_its_golden_names_sr_too(project):
    """The emulated run refused first (a test that runs the device before its golden): its
    error says what the seeded sr drew, as the golden's does (it gave onnxruntime's words)."""
    project.makepyfile(test_vad=RUN_FIRST)
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "emulator run of 'vad' failed" in out and SAID in out, out

"""A golden refused for a seeded index out of its table's range prints the arrays to give, in
pytest's, a YAML suite's and the CLI's spelling; each pasted as printed (with the ``.npy`` files
it names, written here holding indices within the range) makes the check pass. The table is
reached through a Reshape, so seeding cannot bound the indices (tests/graph/test_index_hint.py).
Each text is taken from the output, never retyped."""
import re
import shlex
import subprocess
import sys

import numpy as np
import onnx
import pytest

pytest.importorskip("onnxruntime")

from tests.graph.test_index_hint import reshaped_table_model  # noqa: E402

TEST = '''
{imports}from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.99)
def test_embeddings(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/m.onnx", {given})
    golden = golden_dump("models/m.onnx", inputs)
    check_accuracy(ascend_model("models/m.onnx").run(inputs, dump=True), golden)
'''
SUITE = '''models:
  - name: emb
    model: models/m.onnx
    inputs: {inputs}
    threshold: 0.99
'''
PYTEST = re.compile(r"pytest: (inputs=\{.*?\}) in the test's accuracy_inputs\(\.\.\.\) "
                    r"\((import numpy)\)")
YAML = re.compile(r"; YAML: inputs: (\{.*?\}); ascend-accuracy")
CLI = re.compile(r"(ascend-accuracy diagnose .*?)\)$", re.M)


@pytest.fixture
def project(pytester):
    (pytester.path / "models").mkdir()
    onnx.save(reshaped_table_model(), str(pytester.path / "models" / "m.onnx"))
    return pytester


def _valid_arrays(folder):
    """ids.npy within the table's [0, 1], x.npy any floats: what the advice asks for."""
    rng = np.random.default_rng(3)
    np.save(folder / "ids.npy", rng.integers(0, 2, size=(1, 8)).astype(np.int64))
    np.save(folder / "x.npy", rng.random((1, 8, 4), dtype=np.float32))


def _seeded_refusal(out: str) -> None:
    assert "seeded input 'ids' drew integers from [0, 10) (seed 0), but Gather " \
           "'/embeddings/token_type/Gather' takes [0, 1]" in out, out


def test_the_pytest_form_pasted_passes(project):
    project.makepyfile(test_emb=TEST.format(imports="", given="seed=0"))
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    _seeded_refusal(out)
    given, imports = PYTEST.search(out).groups()
    _valid_arrays(project.path)
    project.makepyfile(test_emb=TEST.format(imports=imports + "\n", given=given))
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_yaml_form_pasted_passes(project):
    suite = project.path / "accuracy.yaml"
    suite.write_text(SUITE.format(inputs="{seed: 0}"), encoding="utf-8")
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    _seeded_refusal(out)
    given = YAML.search(out).group(1)
    _valid_arrays(project.path)  # (relative to the suite's folder)
    suite.write_text(SUITE.format(inputs=given), encoding="utf-8")
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_cli_form_pasted_runs(tmp_path):
    (tmp_path / "models").mkdir()
    onnx.save(reshaped_table_model(), str(tmp_path / "models" / "m.onnx"))
    cli = [sys.executable, "-m", "pytest_ascend_accuracy.cli"]
    done = subprocess.run(cli + ["diagnose", "models/m.onnx"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode != 0, done.stdout + done.stderr
    _seeded_refusal(done.stderr)
    command = shlex.split(CLI.search(done.stderr).group(1))
    assert command[:2] == ["ascend-accuracy", "diagnose"], command
    _valid_arrays(tmp_path)
    again = subprocess.run(cli + command[1:], cwd=tmp_path, capture_output=True, text=True,
                           timeout=600)  # (as printed: its cache the default, in tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "onnxruntime could not run" not in again.stdout + again.stderr


DEVICE_FIRST = '''
{imports}from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.99)
def test_embeddings(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/m.onnx", {given})
    actual = ascend_model("models/m.onnx").run(inputs, dump=True)
    check_accuracy(actual, golden_dump("models/m.onnx", inputs))
'''


@pytest.mark.parametrize("dump", [True, False], ids=["dumped", "outputs"])
def test_a_device_run_before_the_golden_says_the_same_and_the_form_pasted_passes(project, dump):
    """The emulator's own run of the device is refused first where the test runs it before its
    golden: it said onnxruntime's words alone (F27's finding); it now names the input and the
    arrays as the golden's refusal does (``op_values.run_failed``), for a dumped run and for
    ``.outputs(...)`` alike."""
    test = DEVICE_FIRST if dump else DEVICE_FIRST.replace(
        ".run(inputs, dump=True)", ".outputs(inputs)").replace(
        "check_accuracy(actual, golden_dump(\"models/m.onnx\", inputs))",
        "assert actual and golden_dump(\"models/m.onnx\", inputs)")
    project.makepyfile(test_emb=test.format(imports="", given="seed=0"))
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "emulator run of 'm' failed" in out, out
    _seeded_refusal(out)
    given, imports = PYTEST.search(out).groups()
    _valid_arrays(project.path)
    project.makepyfile(test_emb=test.format(imports=imports + "\n", given=given))
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

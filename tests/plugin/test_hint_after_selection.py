"""A first failure after a TopK that only reordered near ties (T2: torchvision Faster R-CNN
failed every mode after its RPN TopKs, and the hint said "no op list is known to fix it").
The hint says so and gives two things to paste, each doing what it says, in a Python test and
in a YAML suite: the ``ignore`` entries of the ops after the selection (pasted, the check
passes: it hides them), and, for the op after it whose values leave float16's range, its own
``keep_dtype`` list, marked as not fixing the first failure (pasted alone, the check still
fails there, the overflow gone; with the ignore, it passes). Each text is taken from the
output, never retyped."""
import json
import re

import onnx
import pytest

pytest.importorskip("onnxruntime")

from near_tie_detector import AFTER, OVERFLOW, near_tie_detector  # noqa: E402

TEST = '''
from pytest_ascend_accuracy import accuracy
{imports}


@accuracy(threshold=0.99{marker})
def test_det(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("models/det.onnx", seed=0)
    golden = golden_dump("models/det.onnx", inputs)
    check_accuracy(ascend_model("models/det.onnx").run(inputs, dump=True), golden)
'''
SUITE = '''models:
  - name: det
    model: models/det.onnx
    inputs: {{seed: 0}}
    threshold: 0.99
{extra}'''
IGNORE = re.compile(r"ignore the \d+ ops after it \(every failing op is among them\): "
                    r"@accuracy\((ignore=\[.*?\])\) \(YAML: (ignore: \[.*?\])\); that hides")
MODES = re.compile(r"^  modes=\[(.+)\]\n    YAML: modes: (\[.+\])\n  \(from "
                   r"pytest_ascend_accuracy (import [\w, ]+)\)$", re.M)


@pytest.fixture
def project(pytester):
    (pytester.path / "models").mkdir()
    onnx.save(near_tie_detector(), str(pytester.path / "models" / "det.onnx"))
    return pytester


def _advice(project):
    """(python ignore, yaml ignore, python modes, yaml modes, import clause) of the failure."""
    project.makepyfile(test_det=TEST.format(imports="", marker=""))
    failed = project.runpytest("-q", "-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    out = failed.stdout.str()
    assert ("next step: the first failing op gather comes after topk:output:1, a selection "
            "(TopK) whose differing indices all reorder ties or near ties") in out, out
    assert "no op list is known to fix it" not in out
    assert "a float16 problem of their own after the selection, which the ignore hides and " \
           "which does not cause the first failure (pasted alone, the check still fails at " \
           "gather)" in out
    ignore, modes = IGNORE.search(out), MODES.search(out)
    assert ignore and modes, out
    assert ignore.group(1) == f"ignore={list(AFTER)!r}"
    assert modes.group(1) == f"keep_dtype({list(OVERFLOW)!r})"
    return (*ignore.groups(), *modes.groups())


def _rows(project, name):
    """{op: row} of the one compare.json under the report folder ``name``."""
    found = next((project.path / name).rglob("compare.json"))
    return {r["op_name"]: r for r in json.loads(found.read_text())["rows"]}


def test_the_ignore_and_keep_dtype_pasted_in_a_python_test_do_what_they_say(project):
    py_ignore, _, py_modes, _, imports = _advice(project)
    p = project
    p.makepyfile(test_det=TEST.format(imports="", marker=f", {py_ignore}"))
    p.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)  # it hides them
    # the keep_dtype alone: still fails at the first failure, as it says, the overflow gone
    p.makepyfile(test_det=TEST.format(imports=f"from pytest_ascend_accuracy {imports}",
                                      marker=f", modes=[{py_modes}]"))
    alone = p.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-report=alone")
    alone.assert_outcomes(failed=1)
    alone.stdout.fnmatch_lines(["*first failing op gather (cosine *"])
    rows = _rows(p, "alone")
    for op in OVERFLOW:
        assert rows[op]["dtype"] == "float32" and "nonfinite_mismatch" not in rows[op]["flags"]
    both = TEST.format(imports=f"from pytest_ascend_accuracy {imports}",
                       marker=f", {py_ignore}, modes=[{py_modes}]")
    p.makepyfile(test_det=both)
    p.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_ignore_and_keep_dtype_pasted_in_a_yaml_suite_do_what_they_say(project):
    _, yaml_ignore, _, yaml_modes, _ = _advice(project)
    p = project
    suite = p.path / "accuracy_det.yaml"
    (p.path / "test_det.py").unlink()
    suite.write_text(SUITE.format(extra=f"    {yaml_ignore}\n"))
    p.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    suite.write_text(SUITE.format(extra=f"    modes: {yaml_modes}\n"))
    alone = p.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-report=alone")
    alone.assert_outcomes(failed=1)
    alone.stdout.fnmatch_lines(["*first failing op gather (cosine *"])
    rows = _rows(p, "alone")
    assert all("nonfinite_mismatch" not in rows[op]["flags"] for op in OVERFLOW)
    suite.write_text(SUITE.format(extra=f"    {yaml_ignore}\n    modes: {yaml_modes}\n"))
    p.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)

"""Every rendering of a check states the baseline verdict, from a review as a user (pytester).

A test that met its threshold but failed its per-operator baseline (``max_drop``: regressed, or
missing on the first run) failed in the terminal and the summary, while ``report.html``,
``compare.json`` and the JUnit properties said it passed: they were written before the
baseline check. A JUnit first failure that is not "value < threshold" (scale guard, not
compared) gave no reason, and an op not compared got ``accuracy_first_failing_cosine=nan``.
``ModelChangedWarning`` and ``BaselineGapWarning`` pointed at ``plugin/check_flow.py`` instead
of the test, and an in-memory model's warning spoke of "the model file"."""
import json
import re
import xml.etree.ElementTree as ET

OVERFLOW_BASELINE = '''
from pytest_ascend_accuracy import accuracy

M = "models/overflow.onnx"


@accuracy(threshold=0.05, scale_tolerance=None, max_drop=0.002)
def test_base(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
'''

BASELINE_FILE = "accuracy-baselines/models/overflow/default.yaml"


def _run(pytester, *args):
    return pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep",
                              "--junitxml=junit.xml", "-o", "junit_family=xunit1", *args)


def _props(pytester):
    root = ET.parse(str(pytester.path / "junit.xml")).getroot()
    return {case.get("name"): dict((p.get("name"), p.get("value")) for p in case.iter("property"))
            for case in root.iter("testcase")}


def _report(pytester, name):
    folder = next(p for p in (pytester.path / "rep").iterdir() if name in p.name)
    page = (folder / "report.html").read_text(encoding="utf-8")
    return page, json.loads((folder / "compare.json").read_text(encoding="utf-8"))


def _headline(page):
    return re.search(r"<h1[^>]*>(.*?)</h1>", page).group(1)


def test_a_missing_then_regressed_baseline_fails_in_junit_html_and_json(pytester, models_dir):
    pytester.makepyfile(test_b=OVERFLOW_BASELINE)
    first = _run(pytester)
    first.assert_outcomes(failed=1)  # the baseline was missing: written, the test fails
    props = _props(pytester)["test_base"]
    assert props["accuracy_passed"] == "false"
    assert props["accuracy_baseline"] == f"missing: {BASELINE_FILE}"
    page, data = _report(pytester, "test_base")
    assert "PASSED" not in _headline(page) and "baseline missing" in _headline(page)
    assert data["verdict"]["passed"] is True  # the threshold check itself did pass
    assert data["baseline"]["passed"] is False and data["baseline"]["status"] == "missing"
    assert data["baseline"]["file"] == BASELINE_FILE

    path = pytester.path / BASELINE_FILE
    text = path.read_text()
    edited = re.sub(r'(op: "norm", slot: "output:0", cosine: )[0-9.]+', r"\g<1>0.900000", text)
    assert edited != text
    path.write_text(edited)
    regressed = _run(pytester)
    regressed.assert_outcomes(failed=1)
    line = "norm: cosine 0.900000 -> 0.396693 (drop 0.503307 > 0.002)"
    props = _props(pytester)["test_base"]
    assert props["accuracy_passed"] == "false"
    assert props["accuracy_baseline"] == f"regressed: {line}"
    assert "accuracy_first_failing_op" not in props  # no op failed the threshold
    page, data = _report(pytester, "test_base")
    head = _headline(page)
    assert "PASSED" not in head and 'class="fail"' in page.split(head)[0][-20:]
    assert "baseline regressed" in head and "norm: cosine 0.900000 -&gt; 0.396693" in head
    assert 'id="baseline"' in page and "accuracy baseline REGRESSED" in page
    assert "threshold check: accuracy PASSED: 5 tensors meet cosine &gt;= 0.05" in page
    assert data["verdict"]["passed"] is True
    assert data["baseline"]["passed"] is False and data["baseline"]["status"] == "regressed"
    assert data["baseline"]["line"] == line
    assert "accuracy baseline REGRESSED" in data["baseline"]["message"]

    path.write_text(text)  # the recorded values again: the test passes, and its reports say so
    _run(pytester).assert_outcomes(passed=1)
    props = _props(pytester)["test_base"]
    assert props["accuracy_passed"] == "true"
    assert props["accuracy_baseline"] == f"passed: {BASELINE_FILE}"
    page, data = _report(pytester, "test_base")
    assert _headline(page).startswith("accuracy PASSED")
    assert f"baseline passed: {BASELINE_FILE}" in page
    assert data["baseline"]["passed"] is True and data["baseline"]["status"] == "passed"


NOT_PLAIN = '''
import numpy as np
from pytest_ascend_accuracy import accuracy, DumpSet
from pytest_ascend_accuracy.dump.model import OpRecord

M = "models/overflow.onnx"


@accuracy(threshold=0.05)
def test_scale(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(M, seed=0)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))


def test_ghost(check_accuracy):
    x = DumpSet.from_arrays({"x": [np.ones(4)]}).ops[0]
    ghost = DumpSet.from_arrays({"ghost": [np.ones(4)]}).ops[0]
    actual = DumpSet([OpRecord(name="x", outputs=x.outputs, order=0),
                      OpRecord(name="ghost", outputs=ghost.outputs, order=1)])
    check_accuracy(actual, DumpSet.from_arrays({"x": [np.ones(4)]}))
'''


def test_junit_gives_the_reason_of_a_failure_that_is_not_below_its_threshold(pytester,
                                                                             models_dir):
    pytester.makepyfile(test_r=NOT_PLAIN)
    _run(pytester).assert_outcomes(failed=2)
    props = _props(pytester)
    scale = props["test_scale"]
    assert scale["accuracy_first_failing_op"] == "norm"
    assert scale["accuracy_first_failing_reason"].startswith("scale: L2 norm 0.3998x the golden's")
    assert float(scale["accuracy_first_failing_cosine"]) > 0.05  # cosine passed; scale did not
    ghost = props["test_ghost"]
    assert ghost["accuracy_passed"] == "false" and ghost["accuracy_first_failing_op"] == "ghost"
    assert ghost["accuracy_first_failing_reason"].startswith("not compared")
    assert "accuracy_first_failing_cosine" not in ghost  # no value: the reason says why
    page, data = _report(pytester, "test_ghost")
    assert "baseline" not in data  # no max_drop: no baseline line anywhere
    assert 'id="baseline"' not in page


IN_MEMORY = '''
from pathlib import Path

from onnx import numpy_helper
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.testing.models import passing_mlp


@accuracy(threshold=0.95, max_drop=0.002)
def test_mem(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    model = passing_mlp()
    scale = Path("scale.txt")
    if scale.exists():  # a retrain nudged the weights
        t = model.graph.initializer[0]
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * float(scale.read_text()),
                                           t.name))
    inputs = accuracy_inputs(model, seed=0)
    check_accuracy(ascend_model(model).run(inputs), golden_dump(model, inputs))
'''


def test_baseline_warnings_point_at_the_test_and_an_in_memory_model_has_no_file(pytester):
    pytester.makepyfile(test_mem=IN_MEMORY)
    _run(pytester).assert_outcomes(failed=1)  # baseline missing: written
    (baseline,) = (pytester.path / "accuracy-baselines").rglob("default.yaml")
    text = baseline.read_text()
    baseline.write_text(re.sub(r"(cosine: )[0-9.]+", r"\1.nan", text, count=1))
    (pytester.path / "scale.txt").write_text("1.01")
    result = _run(pytester)
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "check_flow.py" not in out
    result.stdout.fnmatch_lines([
        "*test_mem.py:*: ModelChangedWarning: accuracy-baselines/*/default.yaml: the model "
        "changed since this baseline was recorded*",
        "*check_accuracy(ascend_model(model).run(inputs), golden_dump(model, inputs))",
    ])
    assert "the model file changed" not in out
    result.stdout.fnmatch_lines([
        "*test_mem.py:*: BaselineGapWarning: accuracy-baselines/*/default.yaml: 1 operator line*",
        "*check_accuracy(ascend_model(model).run(inputs), golden_dump(model, inputs))",
    ])
    call = next(i for i, ln in enumerate((pytester.path / "test_mem.py").read_text()
                                         .splitlines(), 1) if ln.strip().startswith("check_acc"))
    lines = [ln for ln in out.splitlines() if "Warning: accuracy-baselines" in ln]
    assert len(lines) == 2 and all(ln.strip().startswith(f"test_mem.py:{call}: ") for ln in lines)


def test_an_unreadable_baseline_is_one_line_with_its_advice_in_the_summary_and_junit(
        pytester, models_dir):
    """A YAML parser's error spans lines: the summary line was cut before "(--accuracy-regen
    rewrites it)" and the JUnit property held several lines (a review)."""
    pytester.makepyfile(test_b=OVERFLOW_BASELINE)
    _run(pytester)  # writes the baseline (missing)
    (pytester.path / BASELINE_FILE).write_text("garbage: [unclosed\n")
    broken = _run(pytester)
    broken.assert_outcomes(failed=1)
    broken.stdout.fnmatch_lines([f"FAILED test_b.py::test_base [[]overflow, default[]]: baseline "
                                 f"unreadable: {BASELINE_FILE}: baseline is not valid YAML: * "
                                 f"(--accuracy-regen rewrites it)"])
    value = _props(pytester)["test_base"]["accuracy_baseline"]
    assert "\n" not in value and value.endswith("(--accuracy-regen rewrites it)"), value

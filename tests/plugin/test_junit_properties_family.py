"""JUnit properties of Python accuracy tests under every ``junit_family`` (pytester).

pytest's ``record_property`` fixture warns under ``xunit2`` (pytest's default family), which is an
error in setup with ``-W error``; the plugin records into ``item.user_properties`` instead, as its
YAML items do, and pytest's junitxml writes those as ``<property>`` of the test case under every
family (pytest-xdist carries them in the report)."""
import json

import pytest

from junit_report_props import junit_properties

TESTS = """
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

M = "models/overflow.onnx"


@accuracy(threshold=0.95, modes=["default", "high_precision"])
def test_overflow(ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs(M)
    check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))


@accuracy(threshold=0.99)
def test_agreement(ascend_model, check_dataset):
    samples = [make_inputs("models/passing_mlp.onnx", seed=s) for s in range(3)]
    check_dataset(ascend_model("models/passing_mlp.onnx"), samples, metric="agreement")
"""

SUITE = """
models:
  - model: models/overflow.onnx
    threshold: 0.95
"""

#: a user's conftest.py keeping each test's user_properties (what junitxml writes from)
CONFTEST = """
import json

def pytest_runtest_logreport(report):
    if report.when == "teardown":
        with open("user_properties.jsonl", "a") as f:
            f.write(json.dumps([report.nodeid, report.user_properties]) + "\\n")
"""

CHECK = ["accuracy_model", "accuracy_mode", "accuracy_passed", "accuracy_coverage"]
#: (norm fails its threshold and the scale guard: both are its reason)
FAILED_CHECK = CHECK + ["accuracy_first_failing_op", "accuracy_first_failing_cosine",
                        "accuracy_first_failing_reason", "accuracy_hint"]
DATASET = ["dataset_metric", "dataset_reference", "dataset_device", "dataset_drop",
           "dataset_max_drop", "dataset_samples", "dataset_flipped", "dataset_passed"]
#: property names of each test case (the YAML item records as the Python test does)
EXPECTED_NAMES = {
    "test_overflow[default]": FAILED_CHECK,
    "test_overflow[high_precision]": CHECK,
    "test_agreement": DATASET,
    "overflow[default]": FAILED_CHECK,
}
INCOMPATIBLE = "*record_property is incompatible with junit_family*"
#: pytest-benchmark (when installed) warns once xdist is active: not what these tests are about
NO_BENCHMARK_WARNING = ("-W", "ignore:Benchmarks are automatically disabled")


@pytest.fixture
def project(pytester, models_dir):
    pytester.makepyfile(test_acc=TESTS)
    pytester.makefile(".yaml", accuracy_suite=SUITE)
    return pytester


def _assert_properties(props):
    assert {name: sorted(n for n, _ in pairs) for name, pairs in props.items()} == {
        name: sorted(names) for name, names in EXPECTED_NAMES.items()}
    for name in ("test_overflow[default]", "overflow[default]"):
        failed = dict(props[name])
        assert failed["accuracy_model"] == "overflow" and failed["accuracy_mode"] == "default"
        assert failed["accuracy_passed"] == "false"
        assert failed["accuracy_first_failing_op"] == "norm"
        assert 0 < float(failed["accuracy_first_failing_cosine"]) < 0.95
        assert "modes=[" in failed["accuracy_hint"]
    passed = dict(props["test_overflow[high_precision]"])
    assert passed["accuracy_passed"] == "true" and passed["accuracy_mode"] == "high_precision"
    dataset = dict(props["test_agreement"])
    assert dataset["dataset_metric"] == "agreement" and dataset["dataset_samples"] == "3"
    assert dataset["dataset_passed"] == "true"


@pytest.mark.parametrize("family", ["xunit1", "legacy", "xunit2"])
def test_python_tests_write_junit_properties_under_w_error(project, family):
    result = project.runpytest("-p", "no:cacheprovider", "-W", "error", "--junitxml=junit.xml",
                               "-o", f"junit_family={family}")
    result.assert_outcomes(passed=2, failed=2, errors=0)
    result.stdout.no_fnmatch_line(INCOMPATIBLE)
    result.stdout.fnmatch_lines(["FAILED test_acc.py::test_overflow[[]default[]]*",
                                 "FAILED accuracy_suite.yaml::overflow[[]default[]]*"])
    _assert_properties(junit_properties(project.path / "junit.xml"))


def test_default_family_raises_no_warning(project):
    """No ``-W error`` and no ``junit_family``: xunit2, and no warning in the summary."""
    result = project.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml")
    result.assert_outcomes(passed=2, failed=2, errors=0, warnings=0)
    result.stdout.no_fnmatch_line(INCOMPATIBLE)
    _assert_properties(junit_properties(project.path / "junit.xml"))


def test_xunit1_and_xunit2_write_the_same_properties(project):
    written = {}
    for family in ("xunit1", "xunit2"):
        result = project.runpytest("-p", "no:cacheprovider", "-W", "error",
                                   f"--junitxml={family}.xml", "-o", f"junit_family={family}")
        result.assert_outcomes(passed=2, failed=2, errors=0)
        written[family] = junit_properties(project.path / f"{family}.xml")
    assert set(written["xunit1"]) == set(EXPECTED_NAMES)
    for name, pairs in written["xunit1"].items():
        # the cosine printed may differ in its last digits between runs: compare names there
        assert [n for n, _ in written["xunit2"][name]] == [n for n, _ in pairs]
        assert ({n: v for n, v in written["xunit2"][name] if "cosine" not in n}
                == {n: v for n, v in pairs if "cosine" not in n})


def test_without_junitxml_properties_still_reach_the_report(project):
    project.makeconftest(CONFTEST)
    result = project.runpytest("-p", "no:cacheprovider", "-W", "error")
    result.assert_outcomes(passed=2, failed=2, errors=0)
    assert not (project.path / "junit.xml").exists()
    recorded = [json.loads(line) for line in
                (project.path / "user_properties.jsonl").read_text().splitlines()]
    by_test = {nodeid.split("::")[-1]: sorted(n for n, _ in props) for nodeid, props in recorded}
    assert by_test == {name: sorted(names) for name, names in EXPECTED_NAMES.items()}


def test_xdist_workers_send_the_properties(project):
    """Every test's properties cross from its worker to the controller's junitxml, serialised:
    one worker is that path (two converted the models twice, 4.6-5.3 s here against 2.9-3.6 s)."""
    pytest.importorskip("xdist")
    result = project.runpytest("-p", "no:cacheprovider", "-n", "1", "-W", "error",
                               *NO_BENCHMARK_WARNING, "--junitxml=junit.xml",
                               "-o", "junit_family=xunit2")
    result.assert_outcomes(passed=2, failed=2, errors=0)
    result.stdout.no_fnmatch_line(INCOMPATIBLE)
    _assert_properties(junit_properties(project.path / "junit.xml"))

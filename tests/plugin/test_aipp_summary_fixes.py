"""Step 5 (the AIPP file against the reference pre-processing) in the session summary and
JUnit, and where a wrong file's corrected copy goes (a docs trial).

A failed pre-processing check was summarised as "no check verdict" (README lists those: a
golden refused, a typo, an ATC rejection, the test's own assert) and a passed one was not
counted; the corrected copy went to pytest's temp dir, which pytest deletes three runs later,
so the printed path pasted into a suite read "file not found" then.
"""
import re
import xml.etree.ElementTree as ET

import pytest

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp
from pytest_ascend_accuracy.testing import models as tiny_models

GOOD = imagenet_aipp(src_hw=(16, 16))
BAD = GOOD.replace("var_reci_chn_0: 0.0171248", "var_reci_chn_0: 58.395")  # the std

PREP = ("from pytest_ascend_accuracy.aipp.samples import imagenet_reference\n\n"
        "def preprocess(image):\n    return imagenet_reference(image)\n")

TESTS = """
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.aipp.samples import random_rgb
from prep import preprocess

@accuracy()
def test_good(ascend_model, check_preprocessing):
    check_preprocessing(ascend_model("models/net.onnx", aipp="aipp/good.cfg"),
                        random_rgb(2, 16, 16), reference=preprocess)

@accuracy()
def test_bad(ascend_model, check_preprocessing):
    check_preprocessing(ascend_model("models/net.onnx", aipp="aipp/bad.cfg"),
                        random_rgb(2, 16, 16), reference=preprocess)
"""

SUITE = """
models:
  - name: cam
    model: ../models/net.onnx
    aipp: {cfg}
    reference: prep:preprocess
    inputs: {{seed: 0}}
"""


@pytest.fixture
def project(pytester):
    """models/net.onnx (input x 1x3x16x16), aipp/good.cfg and aipp/bad.cfg (16x16 RGB), and
    tests/ with prep.py (the reference pre-processing)."""
    import onnx

    for folder in ("models", "aipp", "tests"):
        (pytester.path / folder).mkdir()
    onnx.save(tiny_models.conv_bn_relu(), str(pytester.path / "models" / "net.onnx"))
    (pytester.path / "aipp" / "good.cfg").write_text(GOOD)
    (pytester.path / "aipp" / "bad.cfg").write_text(BAD)
    (pytester.path / "tests" / "prep.py").write_text(PREP)
    (pytester.path / "pytest.ini").write_text("[pytest]\npythonpath = tests\n")
    return pytester


def _properties(path, name):
    case = next(c for c in ET.parse(path).iter("testcase") if c.get("name") == name)
    return {p.get("name"): p.get("value") for p in case.iter("property")}


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_pre_processing_checks_are_counted_and_a_failure_is_a_verdict(project, xdist):
    (project.path / "tests" / "test_cam.py").write_text(TESTS)
    run = project.runpytest_subprocess if xdist else project.runpytest
    result = run("-p", "no:cacheprovider", "--junitxml=j.xml", *xdist)
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "no check verdict" not in out and "no accuracy check" not in out
    result.stdout.re_match_lines([
        r"^2 pre-processing checks: 1 passed, 1 failed$",
        r"^  aipp/bad\.cfg:1 \(input 0, RGB888_U8\): 0 of 2 images agree$",
        r"^  aipp/good\.cfg:1 \(input 0, RGB888_U8\): 2 of 2 images agree$",
        r"^FAILED tests/test_cam\.py::test_bad: AIPP file aipp/bad\.cfg:1 disagrees with the "
        r"reference pre-processing; corrected AIPP file: aipp/bad\.corrected\.cfg$",
    ])
    bad = _properties(project.path / "j.xml", "test_bad")
    assert bad["preprocessing_passed"] == "false" and bad["accuracy_passed"] == "false"
    assert bad["accuracy_first_failing_reason"].startswith(
        "pre-processing check FAILED: AIPP file aipp/bad.cfg:1 (aipp_op for input 0")
    assert bad["preprocessing_corrected"] == "aipp/bad.corrected.cfg"
    good = _properties(project.path / "j.xml", "test_good")
    assert good["preprocessing_passed"] == "true" and "accuracy_passed" not in good


def test_a_yaml_failure_is_summarised_as_a_pre_processing_verdict(project):
    (project.path / "tests" / "accuracy_cam.yaml").write_text(SUITE.format(cfg="../aipp/bad.cfg"))
    result = project.runpytest("-p", "no:cacheprovider", "--junitxml=j.xml")
    result.assert_outcomes(failed=1)
    assert "no check verdict" not in result.stdout.str()
    result.stdout.re_match_lines([r"^1 pre-processing check: 0 passed, 1 failed$",
                                  r"^FAILED tests/accuracy_cam\.yaml::cam\[default\]: AIPP file "
                                  r"aipp/bad\.cfg:1 disagrees"])
    props = _properties(project.path / "j.xml", "cam[default]")
    assert not props["accuracy_first_failing_reason"].startswith("no check verdict")


CORRECTED = re.compile(r"^corrected AIPP file: (\S+) \(in accuracy_cam\.yaml: aipp: (\S+)\)$",
                       re.M)


def test_the_yaml_corrected_copy_lies_beside_the_file_and_lasts(project):
    """Printed relative to where pytest ran and as the suite spells it; pasted, the suite
    passes in later runs too (pytest removed the temp dir of the old copy after three)."""
    suite = project.path / "tests" / "accuracy_cam.yaml"
    suite.write_text(SUITE.format(cfg="../aipp/bad.cfg"))
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "AIPP file aipp/bad.cfg:1 (aipp_op" in out and f"AIPP file {project.path}" not in out
    assert CORRECTED.search(out).groups() == ("aipp/bad.corrected.cfg",
                                              "../aipp/bad.corrected.cfg")
    assert (project.path / "aipp" / "bad.cfg").read_text() == BAD  # the user's file as it was
    suite.write_text(SUITE.format(cfg="../aipp/bad.corrected.cfg"))  # pasted
    for _ in range(4):
        project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_an_existing_copy_with_other_content_is_kept(project):
    """A hand-edited bad.corrected.cfg is not overwritten: the fixture and the suite write
    bad.corrected-2.cfg and say so; a second run finds its own copy there and writes none."""
    edited = project.path / "aipp" / "bad.corrected.cfg"
    edited.write_text("# my own edit\n" + GOOD)
    (project.path / "tests" / "test_cam.py").write_text(TESTS)
    (project.path / "tests" / "accuracy_cam.yaml").write_text(SUITE.format(cfg="../aipp/bad.cfg"))
    for _ in range(2):
        result = project.runpytest("-p", "no:cacheprovider", "-k", "bad or default")
        result.assert_outcomes(failed=2)
        result.stdout.re_match_lines([  # the suite's item, then the Python test
            r"^corrected AIPP file: aipp/bad\.corrected-2\.cfg \(in accuracy_cam\.yaml: aipp: "
            r"\.\./aipp/bad\.corrected-2\.cfg\) \(aipp/bad\.corrected\.cfg holds other content "
            r"and was kept\)$",
            r"^corrected AIPP file: aipp/bad\.corrected-2\.cfg \(aipp/bad\.corrected\.cfg holds "
            r"other content and was kept\)$"])
    assert edited.read_text().startswith("# my own edit")
    assert sorted(p.name for p in (project.path / "aipp").iterdir()) == [
        "bad.cfg", "bad.corrected-2.cfg", "bad.corrected.cfg", "good.cfg"]


def test_a_yaml_aipp_file_error_names_the_file_as_printed_paths_are(project):
    """Relative to where pytest ran, not /abs/tests/../aipp/typo.cfg."""
    (project.path / "aipp" / "typo.cfg").write_text(GOOD.replace("mean_chn_0", "mean_chan_0"))
    suite = project.path / "tests" / "accuracy_cam.yaml"
    suite.write_text(SUITE.format(cfg="../aipp/typo.cfg"))
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.re_match_lines([r".*: aipp/typo\.cfg:6: mean_chan_0: unknown AIPP key"])
    assert "tests/../aipp" not in result.stdout.str()

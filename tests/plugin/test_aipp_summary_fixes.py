"""Where a wrong AIPP file's corrected copy goes (a docs trial).

The corrected copy went to pytest's temp dir, which pytest deletes three runs later, so the
printed path pasted into a suite read "file not found" then.
"""
import re

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

"""YAML suite review fixes: the dataset item of an AIPP model, a misspelled mode in the
defaults' threshold map, ``scale_tolerance:``, and the corrected AIPP file of a wrong one."""
import re
from pathlib import Path

import numpy as np
import pytest

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, random_rgb
from pytest_ascend_accuracy.testing import models as tiny_models

PREP = ("from pytest_ascend_accuracy.aipp.samples import imagenet_reference\n\n"
        "def preprocess(image):\n    return imagenet_reference(image)\n")

AIPP_SUITE = """
models:
  - name: cam
    model: models/net.onnx
    aipp: {cfg}
    reference: prep:preprocess
    inputs: {{seed: 0}}
{extra}"""


@pytest.fixture
def aipp_project(pytester):
    """models/net.onnx (conv_bn_relu, input x 1x3x16x16), prep.py and good.cfg (16x16 RGB)."""
    import onnx

    (pytester.path / "models").mkdir()
    onnx.save(tiny_models.conv_bn_relu(), str(pytester.path / "models" / "net.onnx"))
    pytester.makepyfile(prep=PREP)
    (pytester.path / "good.cfg").write_text(imagenet_aipp(src_hw=(16, 16)))
    return pytester


def _zeroed(text):
    for c, m in enumerate((123, 116, 103)):  # means zeroed: every sample's top-1 flips
        text = text.replace(f"mean_chn_{c}: {m}", f"mean_chn_{c}: 0")
    return text


@pytest.mark.parametrize("cfg, outcome", [("good.cfg", "passed"), ("zeroed.cfg", "failed")])
def test_yaml_dataset_item_of_an_aipp_model_converts_with_it_and_uses_reference(
        aipp_project, cfg, outcome):
    """The dataset item converted without the AIPP file ('input x has dtype uint8, the model
    wants float32') and fed the reference run the raw frames; now it converts with aipp: and
    feeds the reference run reference(raw frames), as check_dataset(reference_inputs=) does."""
    (aipp_project.path / "zeroed.cfg").write_text(_zeroed(imagenet_aipp(src_hw=(16, 16))))
    val = aipp_project.path / "val"
    val.mkdir()
    for i, frame in enumerate(random_rgb(4, 16, 16, seed=6)):
        np.savez(val / f"s{i}.npz", x=frame[None])
    extra = "    dataset: {samples: val, metric: agreement, max_drop: 0.0}\n"
    (aipp_project.path / "accuracy_cam.yaml").write_text(AIPP_SUITE.format(cfg=cfg, extra=extra))
    result = aipp_project.runpytest("-q", "-p", "no:cacheprovider", "accuracy_cam.yaml",
                                    "-k", "dataset")
    result.assert_outcomes(**{outcome: 1})
    out = result.stdout.str()
    assert "dtype uint8" not in out
    if outcome == "failed":
        assert "dataset accuracy FAILED" in out and "flipped top-1" in out


SUITE_TWO_MODELS = """
defaults:
  threshold: {threshold}
  inputs: {{seed: 0}}
models:
  - model: models/passing_mlp.onnx
    modes: [default, high_precision]
  - name: mlp2
    model: models/passing_mlp.onnx
    modes: [default]
"""


@pytest.mark.parametrize("key, closest", [("defualt", "'default'"),
                                          ("high_precison", "'high_precision'")])
def test_yaml_defaults_threshold_map_refuses_a_mode_no_model_has(
        pytester, models_dir, key, closest):
    """{defualt: 0.99999999} in the defaults was ignored silently (the model passed with the
    default threshold); it is refused as the same typo at model level is."""
    (pytester.path / "accuracy_t.yaml").write_text(
        SUITE_TWO_MODELS.format(threshold=f"{{{key}: 0.99999999}}"))
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*defaults.threshold.{key}: not a mode of any model in this "
                                 f"suite (default, high_precision); closest: {closest}"])


def test_yaml_defaults_threshold_map_applies_a_mode_of_one_model(pytester, models_dir):
    (pytester.path / "accuracy_t.yaml").write_text(
        SUITE_TWO_MODELS.format(threshold="{high_precision: 0.99999999}"))
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)  # only passing_mlp[high_precision] gets it
    result.stdout.fnmatch_lines(["FAILED accuracy_t.yaml::passing_mlp[[]high_precision[]]*"])


SCALE_SUITE = """
defaults:
  inputs: {{seed: 0}}
{defaults}models:
  - model: models/overflow.onnx
    threshold: 0.05
{model}"""


@pytest.mark.parametrize("defaults, model, outcome", [
    ("", "    scale_tolerance: 3\n", "passed"),
    ("", "    scale_tolerance: null\n", "passed"),
    ("  scale_tolerance: null\n", "", "passed"),
    ("  scale_tolerance: null\n", "    scale_tolerance: 2\n", "failed"),  # the model's wins
], ids=["model-3", "model-null", "defaults-null", "model-over-defaults"])
def test_yaml_scale_tolerance_as_the_failure_advises(pytester, models_dir, defaults, model,
                                                     outcome):
    """The scale failure says 'scale_tolerance= tunes this'; YAML refused the key ('unknown
    key'). It is accepted at model level and in the defaults, null turning the guard off."""
    suite = pytester.path / "accuracy_s.yaml"
    suite.write_text(SCALE_SUITE.format(defaults="", model=""))
    first = pytester.runpytest("-q", "-p", "no:cacheprovider")
    first.assert_outcomes(failed=1)
    assert "scale_tolerance= tunes this" in first.stdout.str()
    suite.write_text(SCALE_SUITE.format(defaults=defaults, model=model))  # the advice pasted
    pytester.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(**{outcome: 1})


@pytest.mark.parametrize("value, key", [("0.5", "models[[]0[]].scale_tolerance"),
                                        ("'x'", "models[[]0[]].scale_tolerance")])
def test_yaml_scale_tolerance_is_validated(pytester, models_dir, value, key):
    (pytester.path / "accuracy_s.yaml").write_text(
        SCALE_SUITE.format(defaults="", model=f"    scale_tolerance: {value}\n"))
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*{key}: expected a factor > 1 * or null to turn the guard off*"])


CORRECTED = re.compile(r"^corrected AIPP file: (\S+)$", re.M)


@pytest.mark.parametrize("report", [True, False], ids=["report-dir", "tmp-dir"])
def test_yaml_wrong_aipp_file_writes_the_corrected_copy(aipp_project, report):
    """A wrong AIPP file in a YAML suite named the fields to change but wrote no corrected copy
    (the check_preprocessing fixture writes one); now it is written where the fixture writes
    it, its path printed relative to where pytest ran, and the suite passes with it."""
    bad = imagenet_aipp(src_hw=(16, 16)).replace("var_reci_chn_0: 0.0171248",
                                                 "var_reci_chn_0: 58.395")  # the std
    assert bad != imagenet_aipp(src_hw=(16, 16))
    (aipp_project.path / "bad.cfg").write_text(bad)
    suite = aipp_project.path / "accuracy_cam.yaml"
    suite.write_text(AIPP_SUITE.format(cfg="bad.cfg", extra=""))
    args = ["-q", "-p", "no:cacheprovider"] + (["--accuracy-report=reports"] if report else [])
    result = aipp_project.runpytest(*args)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "var_reci_chn_0: 58.395 -> " in out
    found = CORRECTED.search(out)
    assert found, out
    printed = found.group(1)
    # beside the wrong file (a docs trial: the temporary copy pytest deletes failed pasted)
    assert printed == "bad.corrected.cfg"
    if report:
        assert list((aipp_project.path / "reports").rglob("bad.corrected.cfg"))
    corrected = Path(printed) if Path(printed).is_absolute() else aipp_project.path / printed
    assert corrected.is_file()
    suite.write_text(AIPP_SUITE.format(cfg=printed, extra=""))  # the printed path, pasted
    aipp_project.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_corrected_file_is_also_spelled_as_the_suite_in_a_sub_folder_takes_it(aipp_project):
    """aipp: paths are relative to the suite file; printed relative to where pytest ran, the
    corrected file's path did not paste into a suite in another folder."""
    bad = imagenet_aipp(src_hw=(16, 16)).replace("var_reci_chn_0: 0.0171248",
                                                 "var_reci_chn_0: 58.395")
    suites = aipp_project.path / "suites"
    suites.mkdir()
    (suites / "bad.cfg").write_text(bad)
    (suites / "models").symlink_to(aipp_project.path / "models")
    (suites / "prep.py").write_text(PREP)  # reference: modules are the suite's neighbours
    suite = suites / "accuracy_cam.yaml"
    suite.write_text(AIPP_SUITE.format(cfg="bad.cfg", extra=""))
    result = aipp_project.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-report=reports")
    result.assert_outcomes(failed=1)
    found = re.search(r"^corrected AIPP file: suites/bad\.corrected\.cfg "
                      r"\(in accuracy_cam\.yaml: aipp: (bad\.corrected\.cfg)\)$",
                      result.stdout.str(), re.M)
    assert found, result.stdout.str()
    suite.write_text(AIPP_SUITE.format(cfg=found.group(1), extra=""))  # pasted into the suite
    aipp_project.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_corrected_files_suite_spelling_in_a_folder_yaml_reads_otherwise_pastes(aipp_project):
    """The suite's spelling of the corrected file was written bare: in a folder ``cfg #2`` it
    read ``aipp: cfg #2/bad.corrected.cfg``, which YAML loads as ``cfg`` (the rest a comment).
    It is written as YAML reads it back (``core.yaml_text``), and pasted the suite passes."""
    bad = imagenet_aipp(src_hw=(16, 16)).replace("var_reci_chn_0: 0.0171248",
                                                 "var_reci_chn_0: 58.395")
    suites = aipp_project.path / "suites"
    (suites / "cfg #2").mkdir(parents=True)
    (suites / "cfg #2" / "bad.cfg").write_text(bad)
    (suites / "models").symlink_to(aipp_project.path / "models")
    (suites / "prep.py").write_text(PREP)
    suite = suites / "accuracy_cam.yaml"
    suite.write_text(AIPP_SUITE.format(cfg='"cfg #2/bad.cfg"', extra=""))
    result = aipp_project.runpytest("-q", "-p", "no:cacheprovider", "--accuracy-report=reports")
    result.assert_outcomes(failed=1)
    found = re.search(r"\(in accuracy_cam\.yaml: aipp: (.+)\)$", result.stdout.str(), re.M)
    assert found, result.stdout.str()
    assert found.group(1) == '"cfg #2/bad.corrected.cfg"'
    suite.write_text(AIPP_SUITE.format(cfg=found.group(1), extra=""))  # pasted as printed
    aipp_project.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)

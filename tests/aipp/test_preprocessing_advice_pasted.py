"""The Python spellings of the AIPP advice, pasted into the test as printed (audit H325: the shell
command was applied by a test, these never were).

* the first-op hint of a model converted with an AIPP file: ``check_preprocessing(om, images,
  reference=fn)``; pasted with the test's own handle, raw images and pre-processing function,
  it fails at the AIPP field that is wrong and passes with the right file;
* ``check_preprocessing`` of a model converted without one: ``convert it with
  ascend_model(model, aipp="aipp.cfg")``; pasted, the check runs and passes."""
import re

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp

TEST = '''
import numpy as np
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

RAW = random_rgb(1, 16, 16, seed=3)


def test_cam(ascend_model, golden_dump, check_accuracy, check_preprocessing):
    model = "models/net.onnx"
    om = {convert}
    images, fn = RAW, imagenet_reference
    {pasted}
    golden = golden_dump(model, {{"x": np.stack([fn(i) for i in images])}})
    check_accuracy(om.run({{"x": images}}), golden)
'''


def _files(project):
    good = imagenet_aipp(src_hw=(16, 16))
    project.makefile(".cfg", aipp=good, swapped=good.replace(
        "input_format: RGB888_U8", "input_format: RGB888_U8\n    rbuv_swap_switch: true"))


def _run(project, convert, pasted):
    """The test file with ``convert`` and ``pasted`` filled in, run."""
    project.makepyfile(test_cam=TEST.format(convert=convert, pasted=pasted))
    return project.runpytest("-q", "-p", "no:cacheprovider")


def test_the_hints_check_preprocessing_call_pasted_finds_the_field(aipp_project):
    p = aipp_project
    _files(p)
    failed = _run(p, 'ascend_model(model, aipp="swapped.cfg")', "pass")
    failed.assert_outcomes(failed=1)
    hint = next(x for x in failed.stdout.lines
                if x.startswith("next step: the first operator after AIPP"))
    call = re.search(r"against your own pre-processing: (check_preprocessing\(.*?\)), or from "
                     r"the shell", hint)
    assert call, hint
    checked = _run(p, 'ascend_model(model, aipp="swapped.cfg")', call.group(1))
    checked.assert_outcomes(failed=1)
    out = checked.stdout.str()
    assert "rbuv_swap_switch: true -> false" in out  # the pre-processing named, not an op
    assert "next step: the first operator after AIPP" not in out  # failed before the check
    _run(p, 'ascend_model(model, aipp="aipp.cfg")', call.group(1)).assert_outcomes(passed=1)


def test_the_refusals_ascend_model_call_pasted_converts_with_the_file(aipp_project):
    p = aipp_project
    _files(p)
    check = "check_preprocessing(om, images, reference=fn)"
    refused = _run(p, "ascend_model(model)", check)
    refused.assert_outcomes(failed=1)
    said = re.search(r"the model has no AIPP file: convert it with (ascend_model\(.*?\))$",
                     refused.stdout.str(), re.M)
    assert said, refused.stdout.str()
    _run(p, said.group(1), check).assert_outcomes(passed=1)

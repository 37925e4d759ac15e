"""A refused ATC option's fix is spelled for the call that refused it. ``atc_convert(model,
"default", keep_dtype="keep.cfg")`` said "use keep_dtype=[...]", which atc_convert refused
again (it has no such argument: its mode is one); its own fix, ``mode=keep_dtype([...])``,
passes pasted. ``insert_op_conf=`` said "pass the AIPP file as aipp=...", which atc_convert
refused as an unknown ATC option; it now names ``ascend_model(model, aipp=...)``, which
converts with the file."""
import re

import onnx
import pytest

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp
from pytest_ascend_accuracy.testing import models as tiny_models

TEST = '''
from pytest_ascend_accuracy import keep_dtype


def test_convert(atc_convert, ascend_model):
    converted = {call}
    assert converted is not None
'''


@pytest.fixture
def project(pytester):
    onnx.save(tiny_models.overflow_model(), str(pytester.path / "overflow.onnx"))
    onnx.save(tiny_models.conv_bn_relu(), str(pytester.path / "net.onnx"))
    (pytester.path / "good.cfg").write_text(imagenet_aipp(src_hw=(16, 16)))
    return pytester


def _refusal(project, call):
    project.makepyfile(test_convert=TEST.format(call=call))
    run = project.runpytest("-q", "-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)
    return next(line for line in run.outlines
                if line.startswith("ascend-accuracy configuration error: atc_convert: "))


def test_keep_dtype_given_to_atc_convert_names_its_mode_argument(project):
    line = _refusal(project, 'atc_convert("overflow.onnx", "default", keep_dtype="keep.cfg")')
    fix = re.search(r"use (mode=keep_dtype\(\[\.\.\.\]\)) \(op names or OpType::X; from "
                    r"pytest_ascend_accuracy import keep_dtype\)", line).group(1)
    pasted = 'atc_convert("overflow.onnx", {})'.format(fix.replace("[...]", '["norm"]'))
    project.makepyfile(test_convert=TEST.format(call=pasted))
    project.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_an_aipp_file_given_to_atc_convert_names_ascend_model(project):
    line = _refusal(project, 'atc_convert("net.onnx", "default", insert_op_conf="good.cfg")')
    assert "atc_convert converts without AIPP" in line
    fix = re.search(r'through (ascend_model\(model, aipp="good.cfg"\)) \(its \.converted is the '
                    r'ConvertedModel', line).group(1)  # (the file given, filled in)
    pasted = fix.replace("(model,", '("net.onnx",') + ".converted"
    project.makepyfile(test_convert=TEST.format(call=pasted))
    project.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_fix_keeps_the_mode_given_beside_it(project):
    """``mode=keep_dtype([...])`` beside ``"high_precision"`` dropped high precision."""
    line = _refusal(project, 'atc_convert("overflow.onnx", "high_precision", keep_dtype="k.cfg")')
    fix = re.search(r"use (mode=HIGH_PRECISION \| keep_dtype\(\[\.\.\.\]\)) \(op names or "
                    r"OpType::X; from pytest_ascend_accuracy import HIGH_PRECISION, keep_dtype\)",
                    line).group(1)
    pasted = 'atc_convert("overflow.onnx", {}).mode'.format(fix.replace("[...]", '["norm"]'))
    project.makepyfile(test_convert=TEST.replace("from pytest_ascend_accuracy import keep_dtype",
                                                 "from pytest_ascend_accuracy import "
                                                 "HIGH_PRECISION, keep_dtype").format(
        call=pasted) + "    assert converted.precision_mode == 'allow_fp32_to_fp16'\n")
    project.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_an_aipp_file_in_a_modes_extra_names_ascend_model_too(project):
    line = _refusal(project, 'atc_convert("net.onnx", Mode(extra={"insert_op_conf": "good.cfg"}))'
                    .replace("Mode(", "__import__('pytest_ascend_accuracy').Mode("))
    assert "atc_convert converts without AIPP: convert with the file through ascend_model(" in line


def test_the_aipp_fix_keeps_the_mode_of_the_call(project):
    """``ascend_model(model, aipp=...)`` converts in the test's own mode (default here), not
    the high_precision the atc_convert call asked for (H97)."""
    line = _refusal(project, 'atc_convert("net.onnx", "high_precision", '
                             'insert_op_conf="good.cfg")')
    fix = re.search(r'through (ascend_model\(model, HIGH_PRECISION, aipp="good.cfg"\)) \(from '
                    r'pytest_ascend_accuracy import HIGH_PRECISION\)', line).group(1)
    pasted = fix.replace("(model,", '("net.onnx",') + ".converted"
    project.makepyfile(test_convert=TEST.replace(
        "from pytest_ascend_accuracy import keep_dtype",
        "from pytest_ascend_accuracy import HIGH_PRECISION").format(call=pasted)
        + "    assert converted.mode.precision_mode == 'allow_fp32_to_fp16'\n")
    project.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)

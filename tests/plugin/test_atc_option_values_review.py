"""ATC option values checked as GE's own code checks them (a review of the one option check):
``log=default`` is a level GE's ``main.cc`` ``init()`` takes (it was refused); a bad ``--log`` is
E10010 and a bad ``--display_model_info`` E10006, not E10001; ``--input_format`` with an AIPP
file is NCHW or NHWC only (the ``--input_format`` page, CANN 8.0-9.0) and NHWC is no ONNX
format, so ``input_format="ND"`` beside ``aipp=`` is refused saying what to write, which passes
pasted; a YAML ``extra: {log: null}`` (YAML's null) says to quote it."""
import re

import onnx
import pytest

from pytest_ascend_accuracy import Mode
from pytest_ascend_accuracy.aipp.samples import imagenet_aipp
from pytest_ascend_accuracy.core.atc_option_check import check_atc_options
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.testing import models as tiny_models

TEST = """
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

@accuracy()
def test_cam(ascend_model, check_preprocessing):
    check_preprocessing(ascend_model("net.onnx", aipp="good.cfg"{options}),
                        random_rgb(2, 16, 16), reference=imagenet_reference)
"""


@pytest.fixture
def project(pytester):
    onnx.save(tiny_models.conv_bn_relu(), str(pytester.path / "net.onnx"))
    (pytester.path / "good.cfg").write_text(imagenet_aipp(src_hw=(16, 16)))
    return pytester


def test_input_format_nd_beside_aipp_is_refused_and_the_fix_passes_pasted(project):
    project.makepyfile(test_cam=TEST.format(options=', input_format="ND"'))
    refused = project.runpytest("-q", "-p", "no:cacheprovider")
    refused.assert_outcomes(failed=1)
    text = refused.stdout.str()
    assert "ATC option input_format=ND with AIPP: ATC takes --input_format NCHW or NHWC" in text
    fix = re.search(r'use (input_format="NCHW") or leave it out', text).group(1)
    project.makepyfile(test_cam=TEST.format(options=", " + fix))
    project.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)


@pytest.mark.parametrize("options", [{"input_format": "ND", "insert_op_conf": "a.cfg"},
                                     {"--input_format": "NCDHW", "insert_op_conf": "a.cfg"}])
def test_input_format_with_insert_op_conf_in_the_options(options):
    with pytest.raises(ConfigError, match="with AIPP: ATC takes --input_format NCHW or NHWC"):
        check_atc_options(options, "atc_options", allowed=("insert_op_conf",))
    check_atc_options({"input_format": "ND"}, "atc_options")  # no AIPP: ND is ATC's


def test_a_modes_input_format_meets_the_aipp_file_in_convert(tmp_path):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    onnx.save(tiny_models.conv_bn_relu(), str(tmp_path / "net.onnx"))
    (tmp_path / "good.cfg").write_text(imagenet_aipp(src_hw=(16, 16)))
    with pytest.raises(ConfigError, match="input_format=ND with AIPP"):
        EmulatorBackend(Cache(tmp_path / "c")).convert(
            tmp_path / "net.onnx", Mode(extra=(("input_format", "ND"),)),
            atc_options={"insert_op_conf": str(tmp_path / "good.cfg")})


def test_log_default_is_taken_and_the_error_codes_are_ges():
    check_atc_options({"log": "default"}, "ascend_model")
    for option, value, code in (("log", "verbose", "E10010"),
                                ("display_model_info", "yes", "E10006"),
                                ("input_format", "NHWC", "E10001")):
        with pytest.raises(ConfigError, match=f"it stops with {code} at any other value"):
            check_atc_options({option: value}, "ascend_model")


def test_yaml_null_log_says_to_quote_it_and_quoted_passes(pytester):
    onnx.save(tiny_models.passing_mlp(), str(pytester.path / "mlp.onnx"))
    suite = ("models:\n  - name: mlp\n    model: mlp.onnx\n    inputs: {{seed: 0}}\n"
             "    modes: [{{extra: {{log: {value}}}}}]\n")
    pytester.path.joinpath("accuracy_log.yaml").write_text(suite.format(value="null"))
    refused = pytester.runpytest("-q", "-p", "no:cacheprovider", "accuracy_log.yaml")
    refused.stdout.fnmatch_lines(['*YAML reads null as no value: quote it, log: "null"*'])
    pytester.path.joinpath("accuracy_log.yaml").write_text(suite.format(value='"null"'))
    pytester.runpytest("-q", "-p", "no:cacheprovider", "accuracy_log.yaml").assert_outcomes(
        passed=1)

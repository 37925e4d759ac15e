"""AIPP errors name the file relative to where pytest ran, as the README says printed paths are.

``ascend_model(m, aipp="aipp/x.cfg")`` resolves the file to an absolute path, and every AIPP
error, at conversion (the file's syntax, a block the model input cannot take) and at run time
(images of another size, keys to add, inputs that are not raw bytes), printed that absolute
path: ``/home/ci/build/aipp/x.cfg:3: ...`` where a test names ``aipp/x.cfg``.
"""
import re

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp

GOOD = imagenet_aipp(src_hw=(16, 16))

FILES = {
    "good.cfg": GOOD,
    "quoted.cfg": GOOD.replace("input_format: RGB888_U8", 'input_format: "RGB888_U8"'),
    "wide.cfg": GOOD.replace("src_image_size_w: 16", "src_image_size_w: 20"),
    "open.cfg": "\n".join(line for line in GOOD.splitlines() if "src_image_size" not in line),
}

TESTS = '''
import numpy as np
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

M = "models/net.onnx"


@accuracy()
def test_syntax(ascend_model):
    ascend_model(M, aipp="aipp/quoted.cfg")


@accuracy()
def test_block_size(ascend_model):
    ascend_model(M, aipp="aipp/wide.cfg")


@accuracy()
def test_image_size(ascend_model):
    ascend_model(M, aipp="aipp/good.cfg").run({"x": random_rgb(1, 20, 20)[0]})


@accuracy()
def test_keys_to_add(ascend_model):
    ascend_model(M, aipp="aipp/open.cfg").run({"x": random_rgb(1, 20, 20)[0]})


@accuracy()
def test_not_raw(ascend_model):
    ascend_model(M, aipp="aipp/good.cfg").run({"x": np.zeros((1, 16, 16, 3), np.float32)})


@accuracy()
def test_no_block(ascend_model, check_preprocessing):
    check_preprocessing(ascend_model(M, aipp="aipp/good.cfg"), random_rgb(1, 16, 16),
                        reference=imagenet_reference, rank=3)
'''

EXPECTED = {
    "test_syntax": r"aipp/quoted\.cfg:3: input_format: \"RGB888_U8\" is quoted",
    "test_block_size": r"aipp/wide\.cfg:\d+: src_image_size_w: the image after AIPP is 20 wide",
    "test_image_size": r"aipp/good\.cfg:5: src_image_size_h: 16, but the images of 'x' are 20",
    "test_keys_to_add": r"aipp/open\.cfg:1: src_image_size_w: not set.* add to the aipp_op "
                        r"block at aipp/open\.cfg:1$",
    "test_not_raw": r"inputs of the AIPP model \(aipp/good\.cfg\): 'x' must be raw uint8",
    "test_no_block": r"aipp/good\.cfg: no aipp_op block for input 3",
}


def test_aipp_errors_name_the_file_relative_to_where_pytest_ran(aipp_project):
    (aipp_project.path / "aipp").mkdir()
    for name, text in FILES.items():
        (aipp_project.path / "aipp" / name).write_text(text)
    aipp_project.makepyfile(test_cam=TESTS)
    result = aipp_project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=len(EXPECTED))
    out = result.stdout.str()
    assert not [line for line in out.splitlines() if ".cfg" in line and
                str(aipp_project.path) in line]
    for test, pattern in EXPECTED.items():  # each failure's own text, in full
        assert re.search(f"^ascend-accuracy configuration error: {pattern}", out, re.M), test


def test_a_file_outside_the_current_directory_keeps_its_spelling(tmp_path, monkeypatch):
    from pytest_ascend_accuracy.aipp.config import parse_aipp_config, shown_path
    from pytest_ascend_accuracy.aipp.user_files import load_reference
    from pytest_ascend_accuracy.errors import ConfigError

    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    inside = tmp_path / "here" / "aipp.cfg"
    assert shown_path(str(inside)) == "aipp.cfg"
    outside = str(tmp_path / "there.cfg")
    assert shown_path(outside) == outside and shown_path("rel/a.cfg") == "rel/a.cfg"
    assert shown_path("<aipp>") == "<aipp>"
    try:
        parse_aipp_config("aipp_op { bogus_key: 1 }", str(inside))
    except ConfigError as exc:
        assert str(exc).startswith("aipp.cfg:1: bogus_key: unknown AIPP key")
    else:
        raise AssertionError("not refused")
    try:  # a YAML suite's reference: file beside the suite, its folder absolute
        load_reference("prep/missing.py:fn", tmp_path / "here", "reference")
    except ConfigError as exc:
        assert str(exc) == "reference: no such file 'prep/missing.py'"
    else:
        raise AssertionError("not refused")

"""AIPP trial findings 4, 5, 6: check_preprocessing checks the images before the reference.

4. NCHW uint8 frames crashed inside the user's reference ("operands could not be broadcast
   together with shapes (1,32,40) (3,)") before the file's own layout check ran.
5. A file whose block is for input 1, checked with the default rank, said "no aipp_op block for
   input 0 (related_input_rank); blocks cover inputs [1]": no rank to pass, no input names.
6. Errors named an input 'input' the model does not have (its input is 'x').
"""
import pytest

from pytest_ascend_accuracy.aipp import check_preprocessing, read_aipp_config
from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, imagenet_reference, random_rgb
from pytest_ascend_accuracy.errors import ConfigError


def never_called(image):
    raise AssertionError(f"the reference got an image of shape {image.shape}")


@pytest.fixture
def cfg(tmp_path):
    path = tmp_path / "net.cfg"
    path.write_text(imagenet_aipp(src_hw=(16, 16)))
    return read_aipp_config(path)


def test_nchw_images_are_refused_before_the_reference_with_a_transpose_that_works(cfg):
    frames = random_rgb(2, 16, 16, seed=1)
    nchw = frames.transpose(0, 3, 1, 2).copy()
    with pytest.raises(ConfigError) as e:
        check_preprocessing(cfg, nchw, never_called, inputs=["x"])
    msg = str(e.value)
    assert "input_format: RGB888_U8 expects H x W x 3 bytes" in msg
    assert "the images of 'x' include one of shape (3, 16, 16): that is C x H x W" in msg
    assert "images.transpose(0, 2, 3, 1)" in msg
    images = nchw  # noqa: F841 - the advice, pasted
    assert check_preprocessing(cfg, images.transpose(0, 2, 3, 1), imagenet_reference).passed


def test_a_wrong_source_size_is_refused_before_the_reference(cfg):
    with pytest.raises(ConfigError, match="src_image_size_w: 16, but the images of 'x' are 17 "
                                          "wide and 16 high"):
        check_preprocessing(cfg, random_rgb(1, 16, 17), never_called, inputs=["x"])


def test_without_the_model_no_input_name_is_made_up(cfg):
    with pytest.raises(ConfigError) as e:
        check_preprocessing(cfg, random_rgb(1, 16, 17), never_called)
    assert "'input'" not in str(e.value) and "but the images are 17 wide" in str(e.value)


def test_a_missing_block_names_the_blocks_inputs_and_the_rank_to_pass(tmp_path):
    path = tmp_path / "two.cfg"
    path.write_text(imagenet_aipp(src_hw=(16, 16)).replace(
        "aipp_mode: static", "aipp_mode: static\n    related_input_rank: 1"))
    images = random_rgb(2, 16, 16)
    with pytest.raises(ConfigError) as e:
        check_preprocessing(path, images, imagenet_reference, inputs=["x", "s"])
    assert str(e.value).endswith(
        "two.cfg: no aipp_op block for input 0 ('x') (related_input_rank: 0); the file's block "
        "is for input 1 ('s'); the model's inputs: 0 'x', 1 's': check it with rank=1")
    assert e.value.cli_text.endswith("check it with --aipp-input 1")
    # pasted
    assert check_preprocessing(path, images, imagenet_reference, inputs=["x", "s"], rank=1).passed


TESTS = '''
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb

def test_wrong_size(ascend_model, check_preprocessing):
    om = ascend_model("models/net.onnx", aipp="good.cfg")
    check_preprocessing(om, random_rgb(2, 16, 17), reference=imagenet_reference)
'''


def test_the_fixture_names_the_model_input(aipp_project):
    aipp_project.makefile(".cfg", good=imagenet_aipp(src_hw=(16, 16)))
    aipp_project.makepyfile(test_aipp=TESTS)
    result = aipp_project.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*good.cfg:*src_image_size_w: 16, but the images of 'x' are 17 "
                                 "wide and 16 high*"])

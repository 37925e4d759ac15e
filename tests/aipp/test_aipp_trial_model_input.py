"""The AIPP file against the model it converts with (AIPP user trial).

- An AIPP output size that is not the model input's (``crop_size_h: 14`` for a 1x3x16x16
  input) was accepted at conversion and failed at run time naming neither the file nor the key;
  ``conversion_aipp`` given the model refuses it naming the file, line, key and input size.
- Errors while running named the cache entry's copy (``.ascend-accuracy/emulator/.../aipp.cfg:9``)
  instead of the file the model was converted with.
"""
import onnx
import pytest

from pytest_ascend_accuracy.aipp import emulation
from pytest_ascend_accuracy.aipp.emulation import conversion_aipp
from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, random_rgb
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.testing.models import conv_bn_relu  # input x: 1x3x16x16

CAMERA = imagenet_aipp(src_hw=(20, 24), crop=(2, 4, 16, 16))  # 24x20 frames, centre 16x16


def _convert(tmp_path, text, input_shape=None, name="camera.cfg"):
    cfg = tmp_path / name
    cfg.write_text(text)
    return conversion_aipp({"insert_op_conf": str(cfg)}, conv_bn_relu(), input_shape)


def test_the_right_size_converts(tmp_path):
    assert _convert(tmp_path, CAMERA) is not None
    model = tmp_path / "net.onnx"  # a model path works as a ModelProto does
    onnx.save(conv_bn_relu(), str(model))
    cfg = tmp_path / "camera.cfg"
    assert conversion_aipp({"insert_op_conf": str(cfg)}, str(model)) is not None


def test_a_crop_of_the_wrong_height_names_file_line_key_and_input(tmp_path):
    text = CAMERA.replace("crop_size_h: 16", "crop_size_h: 14")
    with pytest.raises(ConfigError) as e:
        _convert(tmp_path, text)
    line = text.splitlines().index("    crop_size_h: 14") + 1
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'camera.cfg'}:{line}: crop_size_h: the image after AIPP is "
                          f"16 wide and 14 high (crop_size_h 14), but model input 'x' is 1x3x16x16")
    assert "must be the size the model is fed (--input_shape)" in msg


def test_no_crop_names_the_source_size_and_padding_counts(tmp_path):
    with pytest.raises(ConfigError, match=r"src_image_size_h: the image after AIPP is 24 wide and "
                                          r"20 high \(src_image_size_h 20, no crop\)"):
        _convert(tmp_path, imagenet_aipp(src_hw=(20, 24)))
    padded = CAMERA.replace("crop_size_h: 16", "crop_size_h: 12").replace(
        "crop_size_w: 16", "crop_size_w: 12")
    padded = padded.replace("}\n", "    padding: true\n    top_padding_size: 2\n"
                                   "    bottom_padding_size: 2\n    left_padding_size: 2\n"
                                   "    right_padding_size: 2\n}\n")
    assert _convert(tmp_path, padded) is not None  # 12 + 2 + 2 = 16
    with pytest.raises(ConfigError, match=r"crop_size_w 12 \+ left_padding_size 2 \+ "
                                          r"right_padding_size 3\), but model input 'x' is "
                                          r"1x3x16x16"):
        _convert(tmp_path, padded.replace("right_padding_size: 2", "right_padding_size: 3"))


def test_input_shape_overrides_the_declared_dims(tmp_path):
    with pytest.raises(ConfigError, match="model input 'x' is 1x3x32x32"):
        _convert(tmp_path, CAMERA, {"x": (1, 3, 32, 32)})


def test_channels_and_rank_are_checked(tmp_path):
    gray = "aipp_op {\n aipp_mode: static\n input_format: YUV400_U8\n}\n"
    with pytest.raises(ConfigError, match=r"camera.cfg:3: input_format: YUV400_U8 gives 1 "
                                          r"channel\(s\) after AIPP, but model input 'x' is "
                                          r"1x3x16x16"):
        _convert(tmp_path, gray)
    with pytest.raises(ConfigError, match=r"related_input_rank: input 1 does not exist: the model "
                                          r"has 1 input\(s\) \(x\)"):
        _convert(tmp_path, imagenet_aipp(rank=1))


def test_an_image_sized_output_is_left_to_run_time(tmp_path):
    # no src_image_size and no crop size: the images fix the size
    assert _convert(tmp_path, imagenet_aipp()) is not None


def test_run_time_errors_name_the_converted_file_not_the_cache_copy(tmp_path):
    import numpy as np

    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    model = tmp_path / "net.onnx"
    onnx.save(conv_bn_relu(), str(model))
    cfg = tmp_path / "ok.cfg"
    cfg.write_text(CAMERA)
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    om = backend.convert(model, "default", atc_options={"insert_op_conf": str(cfg)})
    line = CAMERA.splitlines().index("    src_image_size_h: 20") + 1
    with pytest.raises(ConfigError) as e:
        backend.outputs(om, {"x": random_rgb(1, 16, 16)})
    assert str(e.value).startswith(f"{cfg}:{line}: src_image_size_h: 20, but the images of 'x'")
    with pytest.raises(ConfigError) as e:
        backend.outputs(om, {"x": np.zeros((1, 3, 16, 16), np.float32)})
    assert f"inputs of the AIPP model ({cfg})" in str(e.value) and "cache" not in str(e.value)


def test_a_content_no_conversion_of_this_process_read_names_the_entry_copy(tmp_path):
    entry = tmp_path / "entry"
    entry.mkdir()
    (entry / emulation.AIPP_FILE).write_text(CAMERA.replace("mean_chn_0: 123", "mean_chn_0: 121"))
    loaded = emulation.AippInputs.load(entry, ["x"])
    assert loaded.blocks["x"].path == str(entry / emulation.AIPP_FILE)
    assert emulation.AippInputs.load(entry, ["x"], source="mine.cfg").blocks["x"].path == "mine.cfg"

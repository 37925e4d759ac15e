"""Run-time AIPP errors name the user's file: the one the failing model was converted with, and
the keys to set when the file leaves the output size to the images.

- Two AIPP files of one content (front/ and rear/ cameras) share a cache entry, keyed by
  content: errors of the model converted with front/camera.cfg named rear/camera.cfg, the last
  one converted.
- A file without ``src_image_size_w/h`` passes the images' size on: images of another size
  than the model input failed in the model's input check ("input 'x' has shape [1, 3, 20, 24],
  the model declares [1, 3, 16, 16]"), naming neither the file nor what to add to it.
"""
import re

import onnx
import pytest

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, random_nv12, random_rgb
from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.testing.models import conv_bn_relu  # input x: 1x3x16x16


@pytest.fixture
def setup(tmp_path):
    model = tmp_path / "net.onnx"
    onnx.save(conv_bn_relu(), str(model))
    return model, EmulatorBackend(Cache(tmp_path / "cache"))


def _convert(backend, model, cfg):
    return backend.convert(model, atc_options={"insert_op_conf": str(cfg)})


def test_errors_name_the_file_each_model_was_converted_with(setup, tmp_path):
    model, backend = setup
    text = imagenet_aipp(src_hw=(20, 24), crop=(2, 4, 16, 16))
    files = []
    for camera in ("front", "rear"):
        (tmp_path / camera).mkdir()
        files.append(tmp_path / camera / "camera.cfg")
        files[-1].write_text(text)
    front, rear = (_convert(backend, model, f) for f in files)
    for om, cfg in ((front, files[0]), (rear, files[1]), (front, files[0])):
        for run in (lambda: backend.outputs(om, {"x": random_rgb(1, 10, 10)}),
                    lambda: backend.run(om, {"x": random_rgb(1, 10, 10)}, dump=False)):
            with pytest.raises(ConfigError) as info:
                run()
            assert str(info.value).startswith(f"{cfg}:"), (cfg, str(info.value))


NO_SOURCE_SIZE = "aipp_op {\n    aipp_mode: static\n    input_format: %s\n%s}\n"


@pytest.mark.parametrize("fmt, extra, images, shown", [
    ("RGB888_U8", "", random_rgb(1, 20, 24), "24 wide and 20 high (no crop, no padding)"),
    ("RGB888_U8", "    crop: false\n    src_image_size_h: 0\n", random_rgb(1, 20, 24),
     "24 wide and 20 high (no crop, no padding)"),
    # crop or padding without src_image_size: ATC refuses the file (test_aipp_operator_ranges)
    ("YUV420SP_U8", "", random_nv12(1, 20, 24), "24 wide and 20 high (no crop, no padding)"),
])
def test_a_size_left_to_the_images_names_the_file_and_the_keys_to_add(setup, tmp_path, fmt,
                                                                      extra, images, shown):
    model, backend = setup
    cfg = tmp_path / "camera.cfg"
    cfg.write_text(NO_SOURCE_SIZE % (fmt, extra))
    om = _convert(backend, model, cfg)  # nothing to hold the images' size against yet
    with pytest.raises(ConfigError) as info:
        backend.outputs(om, {"x": images})
    msg = str(info.value)
    assert re.match(rf"{re.escape(str(cfg))}:\d+: src_image_size_w: not set, so the AIPP "
                    rf"output's size follows the images'", msg), msg
    assert shown in msg and "model input 'x' is 1x3x16x16" in msg, msg
    # the advice, pasted: the lines to add go into the block, the lines named are changed
    added = re.findall(r"(?m)^    (\w+: \S+)$", msg)
    assert added and all(k in " ".join(added) for k in ("src_image_size_w", "crop_size_h"))
    text = cfg.read_text()
    for number, line in re.findall(r"line (\d+) to (\w+: \w+)", msg):
        lines = text.splitlines()
        lines[int(number) - 1] = "    " + line
        text = "\n".join(lines) + "\n"
    cfg.write_text(text.replace("}", "".join(f"    {a}\n" for a in added) + "}"))
    backend.outputs(_convert(backend, model, cfg), {"x": images})
    # or the images it names
    w, h = map(int, re.search(r"Feed images (\d+) wide and (\d+) high", msg).groups())
    cfg.write_text(NO_SOURCE_SIZE % (fmt, extra))
    fed = random_nv12(1, h, w) if fmt == "YUV420SP_U8" else random_rgb(1, h, w)
    backend.outputs(_convert(backend, model, cfg), {"x": fed})


def test_images_of_the_model_size_need_no_source_size(setup, tmp_path):
    model, backend = setup
    cfg = tmp_path / "camera.cfg"
    cfg.write_text(NO_SOURCE_SIZE % ("RGB888_U8", ""))
    out = backend.outputs(_convert(backend, model, cfg), {"x": random_rgb(1, 16, 16)})
    assert out

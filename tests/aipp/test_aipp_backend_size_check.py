"""The emulator's convert checks an AIPP file's output size against the model input it feeds,
as ATC refuses a mismatch: at conversion, naming the file and key, and on a cache hit too
(an AIPP user trial: it converted, then failed at run time naming neither)."""
import onnx
import pytest

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp
from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.testing.models import conv_bn_relu  # input x: 1x3x16x16


def test_convert_refuses_an_aipp_output_the_model_input_cannot_take(tmp_path):
    model = tmp_path / "net.onnx"
    onnx.save(conv_bn_relu(), str(model))
    good = imagenet_aipp(src_hw=(20, 24), crop=(2, 4, 16, 16))
    cfg = tmp_path / "camera.cfg"
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    cfg.write_text(good)
    backend.convert(model, atc_options={"insert_op_conf": str(cfg)})
    cfg.write_text(good.replace("crop_size_h: 16", "crop_size_h: 14"))
    for _ in range(2):  # the second time the entry could be a cache hit: checked all the same
        with pytest.raises(ConfigError, match=r"camera\.cfg:\d+: crop_size_h: the image after "
                                              r"AIPP is 16 wide and 14 high"):
            backend.convert(model, atc_options={"insert_op_conf": str(cfg)})


def test_an_input_without_a_declared_shape_is_left_to_the_run(tmp_path):
    """A model input with no declared shape was called "a scalar" and blamed on
    related_input_rank (a review): its size is only known at run time."""
    from onnx import TensorProto, helper

    from pytest_ascend_accuracy.aipp.emulation import conversion_aipp

    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    cfg = tmp_path / "camera.cfg"
    cfg.write_text(imagenet_aipp(src_hw=(20, 24), crop=(2, 4, 16, 16)))
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    assert conversion_aipp({"insert_op_conf": str(cfg)}, model) is not None

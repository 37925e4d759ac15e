"""check_preprocessing on a converted model takes a crop size of 0 as the model input's H x W,
as the device does, not the reference's: a reference of another size passed a file whose AIPP
output differs from it (H109), and the search then offered a crop_size the model cannot take."""
import onnx

from .test_aipp_crop_model_size import _model, _scenario  # (the guide's scenario)

TEST = '''
import numpy as np

IMAGES = np.random.default_rng(7).integers(0, 256, (2, 250, 250, 3), dtype=np.uint8)


def test_step5(ascend_model, check_preprocessing):
    om = ascend_model("net.onnx", aipp="aipp.cfg")
    check_preprocessing(om, IMAGES,
                        reference=lambda im: im[:{SIZE}, :{SIZE}].transpose(2, 0, 1) * 1.0)
'''


def test_a_crop_size_of_0_is_the_converted_models_input_size(pytester):
    onnx.save(_model(), str(pytester.path / "net.onnx"))
    (pytester.path / "aipp.cfg").write_text(_scenario())
    pytester.makepyfile(test_step5=TEST.replace("{SIZE}", "224"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*DIFFER AIPP output shape (3, 240, 240) (C, H, W) but the reference pre-processing "
        "gives (3, 224, 224)*",
        "the reference makes 224x224 images but the model input is 240x240, the size AIPP's "
        "output must have (ATC refuses another): no field of the file makes the reference's; "
        "it is another model's pre-processing, or the model is to be converted at 224x224 "
        "(input_shape)"])
    assert "crop_size_h: 0 -> 224" not in result.stdout.str()

    pytester.makepyfile(test_step5=TEST.replace("{SIZE}", "240"))  # the model's own
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_crop_size_of_0_on_a_model_with_dynamic_height_and_width_asks_for_the_size(tmp_path):
    """The crop is the model input's size, which a model declared [1, 3, ?, ?] leaves open: a
    YAML entry printed ``input_shape: {x: [1, 3, 1, 1]}`` (refused pasted: the arrays are
    240 x 240) and the fixture "crop_size_h is left out" (H109). One error names both ways."""
    import pytest
    from onnx import TensorProto, helper

    from pytest_ascend_accuracy.aipp import parse_aipp_config
    from pytest_ascend_accuracy.aipp.shape_from_file import aipp_input_shape
    from pytest_ascend_accuracy.errors import ConfigError

    model = _model()
    model.graph.input[0].CopyFrom(
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "H", "W"]))
    cfg = parse_aipp_config(_scenario(), "aipp.cfg")
    with pytest.raises(ConfigError) as info:
        aipp_input_shape(cfg, model)
    assert ("aipp.cfg:8: crop: true without crop_size_h and crop_size_w crops the model "
            "input's height and width (as ATC does), and input 'x' of the model leaves them "
            "dynamic ([1, 3, ?, ?]): give the size the model is deployed at, as the "
            "conversion's input_shape (ascend_model(..., input_shape=...), a YAML entry's "
            "input_shape:) or in the file (crop_size_h, crop_size_w)") in str(info.value)
    assert aipp_input_shape(cfg, model, {"x": (1, 3, 240, 240)}) == {"x": (1, 3, 240, 240)}
    sized = parse_aipp_config(_scenario().replace(
        "crop: true", "crop: true\n    crop_size_w: 240\n    crop_size_h: 240"), "aipp.cfg")
    assert aipp_input_shape(sized, model) == {"x": (1, 3, 240, 240)}

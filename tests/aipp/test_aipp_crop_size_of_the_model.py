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

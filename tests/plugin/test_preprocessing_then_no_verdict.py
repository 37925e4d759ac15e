"""A test whose pre-processing check passed and whose accuracy check never ran (its inputs
refused) is one line in the summary: it was listed twice, with verdicts
that contradict each other, "1 @accuracy test failed without a check verdict; 1 @accuracy
test failed after its checks passed" (an AIPP trial)."""
from pytest_ascend_accuracy.aipp.samples import imagenet_aipp
from pytest_ascend_accuracy.testing import models as tiny_models

TEST = """
import numpy as np
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.aipp.samples import imagenet_reference, random_rgb


@accuracy()
def test_cam(ascend_model, golden_dump, check_accuracy, check_preprocessing):
    om = ascend_model("models/net.onnx", aipp="aipp/good.cfg")
    images = random_rgb(2, 16, 16)
    check_preprocessing(om, images, reference=imagenet_reference)
    x = np.stack([imagenet_reference(i) for i in images])  # not the raw images AIPP takes
    check_accuracy(om.run({"x": x}), golden_dump("models/net.onnx", {"x": x}))
"""


def test_a_test_is_listed_once_with_its_accuracy_checks_missing_verdict(pytester):
    import onnx

    for folder in ("models", "aipp"):
        (pytester.path / folder).mkdir()
    onnx.save(tiny_models.conv_bn_relu(), str(pytester.path / "models" / "net.onnx"))
    (pytester.path / "aipp" / "good.cfg").write_text(imagenet_aipp(src_hw=(16, 16)))
    pytester.makepyfile(test_cam=TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "after its checks passed" not in out and "its checks passed, then" not in out, out
    result.stdout.re_match_lines([r"^1 @accuracy test failed without a check verdict$",
                                  r"^FAILED test_cam\.py::test_cam: no check verdict: "
                                  r"ascend-accuracy configuration error: inputs of the AIPP",
                                  r"^1 pre-processing check: 1 passed, 0 failed$"])

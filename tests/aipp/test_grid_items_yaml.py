"""The summary grid of a YAML suite with two items of one model (an AIPP trial, finding 10): it
grouped rows by model file, so ``small passed`` showed while the item with the wrong AIPP file
(same model) failed its pre-processing check and ran no accuracy check. Rows are item names."""
import numpy as np

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, random_rgb

SUITE = """
models:
  - name: cam_good
    model: models/net.onnx
    aipp: good.cfg
    reference: prep:preprocess
    inputs: {x: frames.npy}
  - name: cam_swapped
    model: models/net.onnx
    aipp: swapped.cfg
    reference: prep:preprocess
    inputs: {x: frames.npy}
"""


def test_a_failed_item_never_reads_passed_through_another_item_of_its_model(aipp_project):
    good = imagenet_aipp(src_hw=(16, 16))
    aipp_project.makefile(".cfg", good=good, swapped=good.replace(
        "input_format: RGB888_U8", "input_format: RGB888_U8\n    rbuv_swap_switch: true"))
    aipp_project.makepyfile(prep="from pytest_ascend_accuracy.aipp.samples import "
                                 "imagenet_reference\n\ndef preprocess(image):\n"
                                 "    return imagenet_reference(image)\n")
    np.save(aipp_project.path / "frames.npy", random_rgb(1, 16, 16, seed=4))
    (aipp_project.path / "accuracy_cam.yaml").write_text(SUITE)
    result = aipp_project.runpytest("-q", "-p", "no:cacheprovider", "accuracy_cam.yaml")
    result.assert_outcomes(passed=1, failed=1)
    lines = result.stdout.str().splitlines()
    grid = lines[lines.index("  model     default") - 1:]
    assert grid[:3] == ["1 accuracy check: 1 passed, 0 failed (1 model x 1 mode)",
                        "  model     default", "  cam_good  passed"]
    assert not any(line.startswith("  net ") for line in lines)

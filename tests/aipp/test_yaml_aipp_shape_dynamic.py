"""A YAML entry with ``aipp:`` of a model with dynamic dimensions converts as
``ascend_model(m, aipp=cfg)`` does (beb7612): C x H x W from the AIPP file, the batch from the
entry's images (the accuracy item) or each sample's (the dataset item). The YAML route left the
shape to ``input_shape:`` and failed with 'input 'x' dimensions 0, 2 ('?'), 3 ('?') are dynamic
... add to the entry: input_shape: {x: [1, 3, 1, 1]}', which pasted fails the AIPP size check.
Seeded inputs have no images to give the batch: their advice shows the file's sizes and pasted
into the entry, it passes."""
import numpy as np
import onnx

from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, random_rgb
from pytest_ascend_accuracy.testing.models import conv_bn_relu  # input x: 1x3x16x16

SUITE = """
models:
  - name: frames
    model: dyn.onnx
    aipp: camera.cfg
    reference: prep:center
    inputs: {x: frames.npy}
    dataset: {samples: samples, metric: agreement}
  - name: seeded
    model: dyn.onnx
    aipp: camera.cfg
    reference: prep:center
    inputs: {seed: 1}
"""

PREP = """from pytest_ascend_accuracy.aipp.samples import imagenet_reference

def center(frame):
    return imagenet_reference(frame[2:18, 4:20])
"""


def _dynamic_net():
    """conv_bn_relu with its input declared as the PP-OCR cls model's: [-1, 3, '?', '?']."""
    model = conv_bn_relu()
    dims = model.graph.input[0].type.tensor_type.shape.dim
    dims[0].Clear()
    dims[0].dim_value = -1
    for d in dims[2:]:
        d.Clear()
        d.dim_param = "?"
    return model


def test_a_yaml_aipp_entry_takes_c_h_w_from_its_file_and_the_advice_pastes(pytester):
    onnx.save(_dynamic_net(), str(pytester.path / "dyn.onnx"))
    pytester.makefile(".cfg", camera=imagenet_aipp(src_hw=(20, 24), crop=(2, 4, 16, 16)))
    pytester.makepyfile(prep=PREP)
    np.save(pytester.path / "frames.npy", random_rgb(2, 20, 24, seed=5))
    (pytester.path / "samples").mkdir()
    for i, frame in enumerate(random_rgb(2, 20, 24, seed=7)):
        np.savez(pytester.path / "samples" / f"{i}.npz", x=frame[None])
    (pytester.path / "accuracy_dyn.yaml").write_text(SUITE)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "accuracy_dyn.yaml")
    result.assert_outcomes(passed=2, failed=1)  # frames, frames-dataset; seeded: the advice
    result.stdout.fnmatch_lines([
        "FAILED accuracy_dyn.yaml::seeded[[]default[]] - *",
        "1 failed, 2 passed in *"])
    line = next(x for x in result.stdout.lines if "accuracy_dyn.yaml: seeded: input 'x'" in x)
    assert "dimension 0 is dynamic ([?, 3, 16, 16]) (the AIPP file camera.cfg fixes C x H x W " \
           "of 'x': 3 x 16 x 16)" in line
    advice = line.split("add to the entry: ", 1)[1]
    assert advice == "input_shape: {x: [1, 3, 16, 16]}"
    (pytester.path / "accuracy_dyn.yaml").write_text(
        SUITE.replace("inputs: {seed: 1}", "inputs: {seed: 1}\n    " + advice))
    pasted = pytester.runpytest("-q", "-p", "no:cacheprovider", "accuracy_dyn.yaml", "-k",
                                "seeded")
    pasted.assert_outcomes(passed=1, deselected=2)

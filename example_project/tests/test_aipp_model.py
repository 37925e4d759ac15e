"""A model converted with an AIPP file (ATC ``--insert_op_conf``): it takes raw camera frames.

Step 5 of the accuracy flow: before blaming any operator, check that the AIPP file does what
the reference network's own pre-processing does (``check_preprocessing``); then the model test
runs raw frames through the converted model and compares every operator with the golden run of
the reference-pre-processed frames. A wrong AIPP file fails the first test with the fields to
correct (e.g. ``var_reci_chn_0: 58.395 -> 0.017125``) and a corrected file.
"""
from pathlib import Path

import numpy as np

from pytest_ascend_accuracy import accuracy
from preprocessing import camera_frames, preprocess

AIPP = Path(__file__).parents[1] / "aipp" / "camera_rgb.cfg"


def test_aipp_matches_reference_preprocessing(model_file, ascend_model, check_preprocessing):
    om = ascend_model(model_file("conv_bn_relu"), aipp=AIPP)
    check_preprocessing(om, camera_frames(), reference=preprocess)


@accuracy(threshold=0.99)
def test_aipp_model_on_raw_frames(model_file, ascend_model, golden_dump, check_accuracy,
                                  accuracy_inputs):
    model = model_file("conv_bn_relu")
    frames = camera_frames(1)
    # through accuracy_inputs, a per-operator baseline (ini ascend_accuracy_max_drop) stores
    # these frames next to itself, so a rerun compares the same data
    actual = ascend_model(model, aipp=AIPP).run(accuracy_inputs(model, inputs={"x": frames}))
    golden = golden_dump(model, {"x": np.stack([preprocess(f) for f in frames])})
    check_accuracy(actual, golden)

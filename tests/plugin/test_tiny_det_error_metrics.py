"""The real PP-OCRv4 detector at 160x160 judged by each scale-free error metric, as a user
writes it (``@accuracy(threshold=..., metric="rel_l2")``). On the deterministic inputs its last
op, a Sigmoid, outputs a probability map all below 4.5e-7 (float16 subnormals), and on the
emulator's float16 device msaccucmp's figures measured float16's subnormal grid: rel_l2
0.494926, kl 1.308260, max_rel 3, mean_rel 0.001989, acc_rel 50.920635 (msaccucmp's own
functions give the same), failing msit's rel_l2 0.05 and kl 0.005 and any max_rel under 3.
Positions below float16's smallest normal on both sides, of one sign and within 2**-22 + 1/8
of the golden value, now count as equal for these metrics too (``compare/tiny_values.py``):
the check passes, and a device whose Sigmoid flips the map's sign fails every one of them.
rel_l2 and kl judge the whole model (every other op meets msit's thresholds); max_rel,
mean_rel and acc_rel judge the Sigmoid by ``per_op`` (a float16 device's other tensors hold
values near 0 whose relative errors reach 15661: no whole-model threshold of theirs is
usable). Needs the ``ocr`` test extra (``pip install rapidocr-onnxruntime``: only its model
file is used); skipped without it."""

import pytest

from pytest_ascend_accuracy.testing.ocr_models import MISSING, ocr_model_path

DET = ocr_model_path("det")
pytestmark = pytest.mark.skipif(DET is None, reason=MISSING)

#: a user's marker arguments for each metric: msit's IsPrecisionError thresholds for rel_l2
#: and kl (RED > 0.05, KL > 0.005), the Sigmoid's own for the others, all of which msaccucmp's
#: figures fail on this map
MARKERS = {"rel_l2": "threshold=0.05", "kl": "threshold=0.005",
           "max_rel": 'threshold=1e9, per_op={"p2o.Sigmoid.0": 0.5}',
           "mean_rel": 'threshold=1e9, per_op={"p2o.Sigmoid.0": 0.001}',
           "acc_rel": 'threshold=1e9, per_op={"p2o.Sigmoid.0": 1.0}'}

HEAD = '''
from pytest_ascend_accuracy import accuracy

DET = {det!r}
SHAPE = {{"x": [1, 3, 160, 160]}}


def _run(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs(DET, input_shape=SHAPE)
    actual = ascend_model(DET, input_shape=SHAPE).run(inputs)
    check_accuracy(actual, golden_dump(DET, inputs, input_shape=SHAPE))
'''
TEST = '''

@accuracy({marker}, metric={metric!r})
def test_{metric}(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    _run(ascend_model, golden_dump, check_accuracy, accuracy_inputs)
'''
#: the faulted device: every test of the run gets an emulator whose Sigmoid flips its sign
FAULTED = '''
from pytest_ascend_accuracy import backends
from pytest_ascend_accuracy.backends.emulator.faults import Fault

_MAKE = backends.make_backend


def _faulted(*args, **kwargs):
    return _MAKE(*args, faults=[Fault.on_op("p2o.Sigmoid.0", effect="scale", amount=-1.0)],
                 **kwargs)


def pytest_configure(config):
    backends.make_backend = _faulted


def pytest_unconfigure(config):
    backends.make_backend = _MAKE
'''


def test_each_scale_free_metric_passes_the_correct_device_and_fails_a_faulted_one(pytester):
    pytester.makepyfile(test_det=HEAD.format(det=DET) + "".join(
        TEST.format(metric=k, marker=v) for k, v in MARKERS.items()))
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(passed=len(MARKERS))

    pytester.makeconftest(FAULTED)
    faulted = pytester.runpytest("-p", "no:cacheprovider")
    faulted.assert_outcomes(failed=len(MARKERS))
    faulted.stdout.fnmatch_lines_random([
        f"FAILED test_det.py::test_{metric} *: first failing op p2o.Sigmoid.0 ({metric} *"
        for metric in MARKERS])

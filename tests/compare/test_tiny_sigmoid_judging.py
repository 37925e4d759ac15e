"""Judging a float16 tensor made of values below float16's smallest normal (2**-14, ~6.1e-5):
the real PP-OCRv4 detector's probability map on an input with no text is all below 2.6e-5, and
its cosine (0.997705 at 736x736, 0.883 at 160x160; msaccucmp's own function gives the same)
measured float16's subnormal grid: ``@accuracy(threshold=0.999)`` failed a device whose every op
rounds correctly to float16 (the logits carry the float16 error of the ops before, 0.04 where
the map is largest, which the sigmoid's tail turns into a 4% relative error). Positions below
that bound on both sides, of one sign and within 2**-22 + 1/8 of the golden value of each other,
now count as equal in the judged cosine (``compare/tiny_values.py``); a fault that moves values
into the normal range, flips their sign or moves them by more (a bias, a shuffle) still fails.
The tensors here are built like the real ones: a sigmoid of logits in its saturated tail, the
device's logits rounded to float16 and off by a few of their ulps, its output rounded too.
"""
import json
from dataclasses import replace

import numpy as np
import pytest

from pytest_ascend_accuracy.compare import pair_sums
from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.result import CompareResult
from pytest_ascend_accuracy.compare.tiny_values import CLOSE_WORDS
from pytest_ascend_accuracy.dump.model import DumpSet


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _det_map(rng, shape=(1, 1, 96, 96), text=False):
    """(golden float32, device float16) of a detector's last Sigmoid: logits deep in its tail
    (below -10.5, as the real model's), the device's logits float16 and off by 0.04 on average
    (the real model's: 0.043 where its map is largest), its output float16; ``text``: a block
    of logits around +2 (probabilities near 1)."""
    logits = -10.5 - rng.gamma(2.0, 3.0, shape)
    if text:
        logits[..., 20:40, 10:70] = rng.normal(2.0, 1.0, logits[..., 20:40, 10:70].shape)
    golden = _sigmoid(logits).astype(np.float32)
    device_logits = logits.astype(np.float16).astype(np.float64) + rng.normal(0, 0.05, shape)
    device = _sigmoid(device_logits.astype(np.float16).astype(np.float64)).astype(np.float16)
    return golden, device


def _result(device, golden):
    return compare_dumps(DumpSet.from_arrays({"p2o.Sigmoid.0": [device]}),
                         DumpSet.from_arrays({"p2o.Sigmoid.0": [golden]}))


def _judge(device, golden, threshold=0.999):
    # scale_tolerance=2: what check_accuracy and assert_accuracy apply
    return _result(device, golden).judge(threshold, scale_tolerance=2)


@pytest.fixture(params=["compiled", "numpy"])
def kernel(request, monkeypatch):
    """Both kernels give the sums the rule starts from (the compiled one where it is built)."""
    if request.param == "numpy":
        monkeypatch.setenv(pair_sums.NUMPY_KERNEL_ENV, "1")
    return request.param


def test_a_correct_float16_sigmoid_map_all_below_its_smallest_normal_passes_at_0_999(kernel):
    golden, device = _det_map(np.random.default_rng(0))
    assert golden.max() < 2.0 ** -14 and device.max() < 2.0 ** -14
    r = _result(device, golden)
    m = r.rows[0].metrics
    assert m.cosine < 0.999  # msaccucmp's figure, still the CSV's
    assert m.value("cosine") == m.normal_cosine > 0.9999 and m.tiny_equal > 0
    assert m.max_abs < 2.0 ** -16
    assert any(f"compared as equal: cosine {m.normal_cosine:.6f} (msaccucmp's formula: " in n
               for n in m.notes)
    assert r.judge(0.999, scale_tolerance=2).passed


def test_float16_rounding_alone_fails_the_plain_cosine_of_deep_subnormals_and_passes():
    """Values of a few 2**-24 steps (the 160x160 map: max 4.5e-7): the golden merely rounded
    to float16 has cosine 0.985 with itself, so no float16 device meets 0.95 by that figure."""
    logits = np.linspace(-30.0, -14.6, 4096)
    golden = _sigmoid(logits).astype(np.float32)
    device = _sigmoid(logits.astype(np.float16).astype(np.float64)).astype(np.float16)
    r = _result(device, golden)
    assert r.rows[0].metrics.cosine < 0.995
    assert r.judge(0.999, scale_tolerance=2).passed


def test_the_csv_cosine_stays_msaccucmps_figure():
    from test_msaccucmp_agreement import _reference

    golden, device = _det_map(np.random.default_rng(1))
    m = _result(device, golden).rows[0].metrics
    assert float(_reference(device, golden, device.shape)["cosine"]) == pytest.approx(
        m.cosine, abs=2e-6)
    assert m.value("cosine") > 0.9999 > m.cosine


@pytest.mark.parametrize("fault", ["offset 0.01", "offset 2e-5", "scaled 3x", "all zero",
                                   "bias 2x the mean", "shuffled", "sign flipped"])
def test_a_faulty_sigmoid_of_the_same_map_still_fails(fault, kernel):
    """Faults that stay below float16's smallest normal too: a bias of twice the map's mean
    (norms 1.5x, inside the scale guard), the values shuffled, their signs flipped (an absolute
    bound of 2**-16, tried first, counted the last three as equal: cosine 1)."""
    golden, device = _det_map(np.random.default_rng(2))
    d = device.astype(np.float32)
    shuffled = np.random.default_rng(9).permutation(d.ravel()).reshape(d.shape)
    wrong = {"offset 0.01": d + 0.01, "offset 2e-5": d + 2e-5, "scaled 3x": d * 3,
             "all zero": d * 0, "bias 2x the mean": d + 2 * float(golden.mean()),
             "shuffled": shuffled, "sign flipped": -d}[fault].astype(np.float16)
    assert wrong.max() < 2.0 ** -14 or fault in ("offset 0.01", "scaled 3x")
    assert not _judge(wrong, golden, threshold=0.95).passed
    assert _judge(device, golden).passed


@pytest.mark.parametrize("fault", ["text flushed to zero", "text offset", "text scaled 3x",
                                   "text noise"])
def test_a_fault_where_the_golden_is_large_enough_to_matter_fails(fault, kernel):
    golden, device = _det_map(np.random.default_rng(3), text=True)
    assert _judge(device, golden).passed
    d = device.astype(np.float32)
    block = (..., slice(20, 40), slice(10, 40))  # half of the text
    if fault == "text flushed to zero":
        d[block] = 0.0
    elif fault == "text offset":
        d[block] += 0.3
    elif fault == "text scaled 3x":
        d *= np.where(golden > 2.0 ** -14, 3.0, 1.0)
    else:
        d[block] += np.random.default_rng(4).normal(0, 0.2, d[block].shape)
    v = _judge(d.astype(np.float16), golden)
    assert not v.passed and v.first.row.op_name == "p2o.Sigmoid.0"


def test_the_rule_is_float16s_a_float32_device_is_judged_by_the_plain_cosine():
    """float32 holds 1e-6 to 24 bits: no subnormal grid to excuse a Sigmoid computed in
    float32 (the device's logits as ``_det_map``'s, its output not rounded to float16). A
    float32 tensor holding float16's values only, as an op copying the float16 map gives, is
    judged as the float16 map is (``tests/compare/test_tiny_values_held_in_float32.py``)."""
    rng = np.random.default_rng(5)
    logits = -10.5 - rng.gamma(2.0, 3.0, (1, 1, 96, 96))
    golden = _sigmoid(logits).astype(np.float32)
    device_logits = logits.astype(np.float16).astype(np.float64) + rng.normal(0, 0.05, golden.shape)
    device = _sigmoid(device_logits).astype(np.float32)
    m = _result(device, golden).rows[0].metrics
    assert m.normal_cosine is None and m.value("cosine") == m.cosine < 0.999
    assert not _judge(device, golden).passed
    golden, half = _det_map(np.random.default_rng(5))
    assert _judge(half.astype(np.float32), golden).passed == _judge(half, golden).passed is True


def test_a_failure_gives_both_figures_and_its_threshold_pasted_passes():
    """Tiny positions equal, a region moved past the rule's bound (the two figures 0.996382
    and 0.995064): the reason says what the judged figure is and what msaccucmp prints; the
    loosest passing threshold passes."""
    golden, device = _det_map(np.random.default_rng(6))
    d = device.astype(np.float32)
    d[..., 20:40, 10:70] += np.random.default_rng(7).normal(0, 1e-6, (20, 60))
    r = _result(d.astype(np.float16), golden)
    m = r.rows[0].metrics
    v = r.judge(0.99999999)
    f = v.first
    assert f.value == m.value("cosine") > m.cosine
    assert (f"(with the {m.tiny_equal} positions below float16's smallest normal on both sides, "
            f"{CLOSE_WORDS}, counted as equal; msaccucmp's cosine "
            f"{m.cosine:.6f})") in f.reason
    assert r.judge(f.would_pass).passed and not r.judge(f.would_pass + 1e-6).passed


def test_a_saved_result_keeps_the_rule_and_an_older_one_is_judged_as_written(tmp_path):
    golden, device = _det_map(np.random.default_rng(8))
    r = _result(device, golden)
    again = CompareResult.from_json(r.to_json())
    assert again.rows == r.rows and again.judge(0.999).passed and not again.older_rules
    old = json.loads(r.to_json())
    old["version"] = 2
    for row in old["rows"]:
        row["metrics"].pop("normal_cosine")
        row["metrics"].pop("tiny_equal")
    read = CompareResult.from_dict(old)
    assert not read.judge(0.999).passed
    assert f"{CLOSE_WORDS} were not compared as equal" in read.older_rules


@pytest.mark.parametrize("fault", ["sign flipped", "shuffled"])
def test_a_wrong_tensor_of_values_below_an_absolute_bound_still_fails(fault, kernel):
    """Every value below 7e-6, under msprobe's 2**-16 for small float16 values: that bound
    alone counted every position equal (cosine 1 for cosine -1 and 0.001; a review)."""
    golden = np.random.default_rng(10).uniform(-7e-6, 7e-6, (1, 64, 32, 32)).astype(np.float32)
    wrong = {"sign flipped": -golden,
             "shuffled": np.random.default_rng(11).permutation(golden.ravel()).reshape(
                 golden.shape)}[fault].astype(np.float16)
    assert not _judge(wrong, golden, threshold=0.95).passed
    assert _judge(golden.astype(np.float16), golden).passed


def test_a_failure_whose_two_figures_print_alike_names_no_second_figure():
    """The rule moved the cosine in its 9th decimal only (a PP-OCRv4 rec trial: 0.999689 judged
    and 0.999689 msaccucmp's, in one reason): the reason gives the one figure."""
    golden, device = _det_map(np.random.default_rng(6), text=True)
    r = _result(device.astype(np.float16), golden)
    m = r.rows[0].metrics
    row = replace(r.rows[0], metrics=replace(m, cosine=0.9996891167, normal_cosine=0.9996891169))
    f = replace(r, rows=(row,) + r.rows[1:]).judge(0.9999).first
    assert f.value == 0.9996891169
    assert f.reason == "cosine 0.999689 fails cosine >= 0.9999"

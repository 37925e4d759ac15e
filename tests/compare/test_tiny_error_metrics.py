"""The scale-free error metrics (rel_l2, max_rel, mean_rel, acc_rel, kl) of a float16 tensor
made of values below float16's smallest normal, judged with the same rule as its cosine
(``compare/tiny_values.py``): the real PP-OCRv4 detector's probability map on an input with no
text (all below 2.6e-5) read rel_l2 0.069322, kl 0.433116, max_rel 3 at 736x736 and rel_l2
0.494926, kl 1.308260 at 160x160 (msaccucmp's own functions give the same), failing msit's
RED 0.05 and KL 0.005 on a device whose every op rounds correctly to float16: those figures
measured float16's subnormal grid. The judged figure is the better of msaccucmp's and the one
with the close positions as equal; the CSV keeps msaccucmp's. Faults still fail each metric
(KL is blind to an offset, a scale or a bias whatever the rule: it compares the min-max
normalised sides, msaccucmp's formula). The tensors are built as in
``test_tiny_sigmoid_judging``."""
import json

import numpy as np
import pytest

from pytest_ascend_accuracy.compare import tiny_values
from pytest_ascend_accuracy.compare.metrics import compute_metrics
from pytest_ascend_accuracy.compare.result import CompareResult
from pytest_ascend_accuracy.compare.tiny_values import CLOSE_WORDS, ERROR_METRICS
from test_tiny_sigmoid_judging import _det_map, _result, _sigmoid, kernel  # noqa: F401

#: thresholds a correct float16 device meets on the judged figures of ``_det_map`` (rel_l2 and
#: kl: msit's IsPrecisionError rule) and fails on msaccucmp's (kl: the deep map below)
THRESHOLDS = {"rel_l2": 0.05, "max_rel": 0.5, "mean_rel": 0.01, "acc_rel": 10.0, "kl": 0.005}
#: faults KL cannot see by msaccucmp's formula either (min-max normalised sides)
KL_BLIND = ("offset 2e-5", "scaled 3x", "bias 2x the mean")


def _faulty(fault):
    golden, device = _det_map(np.random.default_rng(2))
    d = device.astype(np.float32)
    shuffled = np.random.default_rng(9).permutation(d.ravel()).reshape(d.shape)
    half = np.arange(d.size).reshape(d.shape) % 2 == 0
    wrong = {"offset 0.01": d + 0.01, "offset 2e-5": d + 2e-5, "scaled 3x": d * 3,
             "all zero": d * 0, "half flushed": np.where(half, 0.0, d),
             "bias 2x the mean": d + 2 * float(golden.mean()),
             "shuffled": shuffled, "sign flipped": -d}[fault]
    return golden, device, wrong.astype(np.float16)


def test_a_correct_map_passes_each_metric_by_its_judged_figure(kernel):  # noqa: F811
    golden, device = _det_map(np.random.default_rng(2))
    m = _result(device, golden).rows[0].metrics
    for metric, threshold in THRESHOLDS.items():
        assert m.value(metric) <= threshold, metric
        assert m.value(metric) < getattr(m, metric), metric  # the rule lowered each
    assert m.rel_l2 > 0.05 and m.max_rel > 1 and m.mean_rel > 0.3  # msaccucmp's fail
    for metric in THRESHOLDS:
        verdict = _result(device, golden).judge(THRESHOLDS[metric], metric=metric,
                                                scale_tolerance=2)
        assert verdict.passed, metric


def test_float16_rounding_alone_fails_msaccucmps_kl_and_rel_l2_and_passes_judged():
    """A map of a few 2**-24 steps (the real 160x160 one: max 4.5e-7): the golden merely
    rounded to float16 reads rel_l2 0.14 and kl 0.2 by msaccucmp's formulas."""
    logits = np.linspace(-30.0, -14.6, 4096)
    golden = _sigmoid(logits).astype(np.float32)
    device = _sigmoid(logits.astype(np.float16).astype(np.float64)).astype(np.float16)
    m = compute_metrics(device, golden)
    assert m.rel_l2 > 0.05 and m.kl > 0.005
    r = _result(device, golden)
    for metric in ERROR_METRICS:
        assert m.value(metric) == 0.0, metric
        assert r.judge(THRESHOLDS[metric], metric=metric).passed, metric


@pytest.mark.parametrize("fault", ["offset 0.01", "offset 2e-5", "scaled 3x", "all zero",
                                   "half flushed", "bias 2x the mean", "shuffled",
                                   "sign flipped"])
def test_a_faulty_map_still_fails_each_metric(fault, kernel):  # noqa: F811
    golden, _, wrong = _faulty(fault)
    r = _result(wrong, golden)
    m = r.rows[0].metrics
    for metric, threshold in THRESHOLDS.items():
        # per_op: the metric alone, without the scale guard (which fails 'scaled 3x' anyway)
        verdict = r.judge(threshold, metric=metric, per_op={"p2o.Sigmoid.0": threshold})
        if metric == "kl" and fault in KL_BLIND:
            assert verdict.passed and m.kl <= threshold  # msaccucmp's KL passes it too
            continue
        assert not verdict.passed, metric
        assert m.value(metric) > threshold, metric


def test_the_csv_figures_stay_msaccucmps():
    from test_msaccucmp_agreement import _agree, _reference

    golden, device = _det_map(np.random.default_rng(1))
    m = _result(device, golden).rows[0].metrics
    ref = _reference(device, golden, device.shape)
    for metric in ERROR_METRICS:
        assert _agree(getattr(m, metric), ref[metric], metric), metric
        assert m.value(metric) < getattr(m, metric), metric


def test_a_failure_names_msaccucmps_figure_and_its_threshold_pasted_passes():
    """A map with text, its text computed wrong: max_rel judged by the text's errors, the
    background's subnormal grid (msaccucmp's 1.26) counted as equal."""
    golden, device = _det_map(np.random.default_rng(6), text=True)
    d = device.astype(np.float32)
    d[..., 20:40, 10:70] += np.random.default_rng(7).normal(0, 0.01, (20, 60))
    r = _result(d.astype(np.float16), golden)
    m = r.rows[0].metrics
    f = r.judge(1e-6, metric="max_rel").first
    assert f.value == m.value("max_rel") < m.max_rel
    assert (f"(with the {m.tiny_equal} positions below float16's smallest normal on both sides, "
            f"{CLOSE_WORDS}, counted as equal; msaccucmp's max_rel {m.max_rel:.6f})") in f.reason
    assert r.judge(f.would_pass, metric="max_rel").passed
    assert not r.judge(f.would_pass - 1e-6, metric="max_rel").passed
    assert any(n.startswith(f"with the same {m.tiny_equal} positions compared as equal: ")
               and f"max_rel {m.value('max_rel'):.6f} (msaccucmp's formula: {m.max_rel:.6f})"
               in n for n in m.notes)


def test_a_passing_tensor_costs_no_extra_pass(monkeypatch):
    """The error metrics' pass runs only where the close positions carry their sums: a
    float16 tensor of normal values with a few subnormal ones (cosine below 0.99999, so the
    cosine's pass runs) keeps msaccucmp's figures without it."""
    def refuse(*args, **kwargs):
        raise AssertionError("judged_errors ran")

    rng = np.random.default_rng(12)
    golden = rng.standard_normal(50_000).astype(np.float32)
    golden[:200] = rng.uniform(1e-6, 2e-5, 200)
    device = (golden + rng.normal(0, 0.005, golden.shape)).astype(np.float16)
    device[:200] = golden[:200].astype(np.float16)
    device[:100] += np.float16(6e-8)  # one step of the subnormal grid
    monkeypatch.setattr(tiny_values, "judged_errors", refuse)
    m = compute_metrics(device, golden)
    assert m.cosine < tiny_values.NORMAL_COSINE_BELOW and m.tiny_equal == 200
    assert all(getattr(m, f"normal_{k}") is None for k in ERROR_METRICS)


def test_a_saved_result_keeps_the_figures_and_a_version_3_one_is_judged_as_written():
    golden, device = _det_map(np.random.default_rng(8))
    r = _result(device, golden)
    again = CompareResult.from_json(r.to_json())
    assert again.rows == r.rows and again.judge(0.5, metric="max_rel").passed
    old = json.loads(r.to_json())
    old["version"] = 3
    for row in old["rows"]:
        for k in ERROR_METRICS:
            row["metrics"].pop(f"normal_{k}")
    read = CompareResult.from_dict(old)
    assert read.judge(0.999).passed and not read.judge(0.5, metric="max_rel").passed
    assert "for the cosine only, not for rel_l2, max_rel, mean_rel, acc_rel and kl" in (
        read.older_rules)


def test_the_reports_show_the_judged_figures():
    """The text summary's and the HTML table's rel_l2 and max_rel are the figures judged, as
    their cosine is (msaccucmp's stay in the CSV and the notes)."""
    from pytest_ascend_accuracy.report.failure_text import summary_text
    from pytest_ascend_accuracy.report.html_report import html_text

    logits = np.linspace(-30.0, -14.6, 4096)
    golden = _sigmoid(logits).astype(np.float32)
    device = _sigmoid(logits.astype(np.float16).astype(np.float64)).astype(np.float16)
    r = _result(device, golden)
    m = r.rows[0].metrics
    verdict = r.judge(0.05, metric="rel_l2")
    text = summary_text(r, verdict)
    assert verdict.passed and [line for line in text.splitlines() if f"{m.rel_l2:.6f}" in line] == [
        "  rel_l2: the figure judged (float16 values below its smallest normal on both sides "
        f"counted as equal, as the notes say); msaccucmp's plain rel_l2: #0 {m.rel_l2:.6f}"]
    row = next(line for line in text.splitlines() if "p2o.Sigmoid.0" in line)
    # a small error figure to 4 significant digits (six decimals read 0.000000: F23)
    assert row.split()[4:] == ["0.000000", f"{m.max_abs:.4g}"] and m.max_abs < 1e-6
    page = html_text(r, verdict)
    assert f"<td>{m.rel_l2:.6f}</td>" not in page and f"<td>{m.max_rel:.6f}</td>" not in page

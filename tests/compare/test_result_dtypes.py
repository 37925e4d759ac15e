"""Judging tensors of other dtypes (integer accumulators, 8-bit codes, values below float16's
resolution), per-tensor thresholds, results saved before exact judging, and the library judging
as the CLI and the plugin do (split from test_result.py)."""
import json

import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.result import CompareResult
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.errors import ConfigError


def test_one_output_of_a_multi_output_op_is_named_as_the_failure_table_prints_it():
    """The table printed ``topk:output:1`` and per_op refused that name: only ``topk`` worked,
    which also set the threshold of the values output (a user trial)."""
    from pytest_ascend_accuracy.graph.op_catalogue import ModelOps

    values = np.linspace(1, 2, 8, dtype=np.float32)
    golden = DumpSet.from_arrays({"topk": [values, np.arange(8, dtype=np.float32)]})
    actual = DumpSet.from_arrays({"topk": [values.astype(np.float16),
                                           np.arange(8, dtype=np.float16)[::-1].copy()]})
    r = compare_dumps(actual, golden)
    assert [f.row.label for f in r.judge(0.99).failures] == ["topk:output:1"]
    assert r.judge(0.99, per_op={"topk:output:1": -1.0}).passed
    assert r.judge(0.99, ignore=["topk:output:1"]).passed
    with pytest.raises(ConfigError, match="'topk:output:2' is not an op"):
        r.judge(0.99, per_op={"topk:output:2": -1.0})
    ops = ModelOps("m", ("topk", "enc/blk.0:norm"), ("TopK", "LayerNormalization"))
    ops.check_names(["topk:output:1", "enc/blk.0:norm:output:0"], "per_op entry", "t")
    with pytest.raises(ConfigError, match="'topp:output:1' is not an op"):
        ops.check_names(["topp:output:1"], "per_op entry", "t")


def test_int32_accumulators_keep_the_metrics_and_a_bool_golden_is_exact_against_any_integer():
    """A quantised model's MatMulInteger/ConvInteger int32 accumulator moves by a weight's size
    when an input code moves by 1: compared exactly, an accurate model failed (a user trial
    and a review). Exact comparison is for a bool or 64-bit golden (indices, ids, masks)."""
    acc = np.arange(256, dtype=np.int32) * 100
    moved = acc.copy()
    moved[::3] += 4
    r = compare_dumps(DumpSet.from_arrays({"mmi": [moved]}), DumpSet.from_arrays({"mmi": [acc]}))
    assert not r.rows[0].metrics.exact and r.judge(0.99).passed
    mask = np.ones(64, bool)
    device = mask.astype(np.uint8)
    device[5] = 0
    r = compare_dumps(DumpSet.from_arrays({"m": [device]}), DumpSet.from_arrays({"m": [mask]}))
    assert r.rows[0].metrics.exact and r.rows[0].metrics.unequal == 1 and not r.judge(0.9).passed


def test_8_bit_codes_are_compared_around_the_goldens_mean():
    """uint8 codes with zero point 128: a QLinearConv whose output became 128 everywhere read
    cosine 0.9947 against codes spread around 128, and the next op was blamed (a user trial)."""
    codes = (128 + np.random.default_rng(0).integers(-13, 14, 512)).astype(np.uint8)
    flat = compare_dumps(DumpSet.from_arrays({"q": [np.full(512, 128, np.uint8)]}),
                         DumpSet.from_arrays({"q": [codes]}))
    assert flat.rows[0].metrics.cosine < 0.1 and not flat.judge(0.95).passed
    near = codes.copy()
    near[::50] += 1  # 1 LSB here and there: still the same tensor
    close = compare_dumps(DumpSet.from_arrays({"q": [near]}), DumpSet.from_arrays({"q": [codes]}))
    assert close.rows[0].metrics.cosine > 0.99 and close.judge(0.95).passed
    assert "8-bit integer codes: cosine and norm ratio taken around the golden's mean" in " ".join(
        close.rows[0].metrics.notes)


def test_a_one_element_tensor_below_float16_resolution_is_not_judged_by_its_sign():
    """1.1e-8 against -1e-8 (a mean of normalised values) failed every threshold (review)."""
    for a, g in ((1.1e-8, -1e-8), (3e-8, 0.0)):
        r = compare_dumps(DumpSet.from_arrays({"s": [np.array(a)]}),
                          DumpSet.from_arrays({"s": [np.array(g)]}))
        assert r.rows[0].metrics.cosine == 1.0


def test_tiny_float32_values_are_summed_in_float64_by_the_numpy_kernel(monkeypatch):
    """Float32 squares of 1e-25 vanish: identical tensors read cosine NaN and, with a NaN-both
    chunk sending others through float32, a sign flip read cosine 1 (review)."""
    from pytest_ascend_accuracy.compare.metrics import compute_metrics
    from pytest_ascend_accuracy.compare.pair_sums import NUMPY_KERNEL_ENV

    monkeypatch.setenv(NUMPY_KERNEL_ENV, "1")
    tiny = np.full(1000, 1e-25, np.float32)
    assert compute_metrics(tiny, tiny.copy()).cosine == pytest.approx(1.0)
    golden = np.full(131072, 1e-24, np.float32)
    golden[1] = -np.inf
    actual = golden.copy()
    actual[65536:] *= -1
    assert abs(compute_metrics(actual, golden).cosine) < 0.01


def test_a_threshold_on_one_tensor_wins_over_its_ops_whatever_the_order():
    values = np.linspace(1, 2, 8, dtype=np.float32)
    golden = DumpSet.from_arrays({"split": [values, values]})
    actual = DumpSet.from_arrays({"split": [values[::-1].copy(), values]})
    r = compare_dumps(actual, golden)
    for per_op in ({"split": 0.99, "split:output:0": -1.0},
                   {"split:output:0": -1.0, "split": 0.99}):
        assert r.judge(0.99, per_op=per_op).passed


def test_a_result_saved_before_exact_judging_is_judged_as_written_and_says_so(tmp_path, capsys):
    """A compare.json of version 1 (no exact/unequal fields) gave the old verdict without a
    word, and the old reader failed on a new file's fields (review): version 2 now, and
    ``judge`` says when a file was measured under the earlier rules."""
    from pytest_ascend_accuracy.cli import app as cli

    golden = np.arange(8, dtype=np.int64)
    flipped = golden.copy()
    flipped[3] = 4
    r = compare_dumps(DumpSet.from_arrays({"topk": [flipped]}),
                      DumpSet.from_arrays({"topk": [golden]}))
    assert r.to_dict()["version"] == 6 and not r.judge(0.9).passed
    old = r.to_dict()
    old["version"] = 1
    for row in old["rows"]:
        row["metrics"].pop("exact")
        row["metrics"].pop("unequal")
        row["metrics"].pop("matched_nan")
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    assert cli.main(["judge", str(path), "--threshold", "0.9"]) == 0  # judged as written
    out = capsys.readouterr().out
    assert (f"{path}: written by an earlier version (NaN at the same position on both sides "
            "was a mismatch, 8-bit codes were not compared around the golden's mean, integer "
            "tensors were compared exactly by another rule or not at all, float16 positions "
            "below its smallest normal (6.1e-05) on both sides and of one sign and within "
            "2**-22 + 1/8 of the golden value of each other were not compared as equal, and a "
            "golden's ±float32 max (an attention mask's stand-in for an infinity) against the "
            "device's infinity of the same sign was a mismatch, and a tensor of one value per "
            "sample along a batch axis was judged as a whole, not sample by sample); compare "
            "the dumps again to judge by today's rules") in out
    # a version 1 file of this session's first rule (int32 compared exactly): judged as today,
    # by its metrics (the note and the verdict above it contradicted each other, review)
    acc = np.arange(100, dtype=np.int32) * 7
    moved = acc.copy()
    moved[::10] += 1
    first_rule = compare_dumps(DumpSet.from_arrays({"mmi": [moved]}),
                               DumpSet.from_arrays({"mmi": [acc]})).to_dict()
    first_rule["version"] = 1
    first_rule["rows"][0]["metrics"].update(exact=True, unequal=10)
    read = CompareResult.from_dict(first_rule)
    assert not read.rows[0].metrics.exact and read.judge(0.99).passed


def test_8_bit_codes_of_a_golden_without_spread_keep_the_plain_cosine():
    """Centred on a golden that is 128 everywhere (a quantised region at its zero point), one
    code of 129 read cosine NaN and failed (review): under one code of spread, the plain one."""
    golden = np.full(100, 128, np.uint8)
    device = golden.copy()
    device[3] = 129
    r = compare_dumps(DumpSet.from_arrays({"q": [device]}), DumpSet.from_arrays({"q": [golden]}))
    assert r.rows[0].metrics.cosine > 0.9999 and r.judge(0.99).passed
    sparse = np.full(4096, 128, np.uint8)
    sparse[:8] = 129
    moved = np.full(4096, 128, np.uint8)
    moved[100:108] = 129
    r = compare_dumps(DumpSet.from_arrays({"q": [moved]}), DumpSet.from_arrays({"q": [sparse]}))
    assert r.judge(0.99).passed


def test_the_library_judges_as_the_cli_and_the_plugin_do(tmp_path):
    """assert_accuracy had the scale guard off where check_accuracy and the CLI have it on, so
    a tensor 3 times too big passed in a script and failed in CI; a non-cosine metric without
    a threshold was judged at the cosine's 0.95 (a review of the library API)."""
    from pytest_ascend_accuracy import assert_accuracy
    from pytest_ascend_accuracy.report.assertion import AccuracyFailure

    golden = {"softmax": [np.linspace(0.1, 1, 16, dtype=np.float32)]}
    scaled = {"softmax": [3 * golden["softmax"][0].astype(np.float16)]}
    with pytest.raises(AccuracyFailure, match="scale"):
        assert_accuracy(DumpSet.from_arrays(scaled), DumpSet.from_arrays(golden))
    assert_accuracy(DumpSet.from_arrays(scaled), DumpSet.from_arrays(golden), scale_tolerance=None)
    r = compare_dumps(DumpSet.from_arrays(scaled), DumpSet.from_arrays(golden))
    for call in (lambda: r.judge(metric="rel_l2"),
                 lambda: assert_accuracy(DumpSet.from_arrays(scaled), DumpSet.from_arrays(golden),
                                         metric="rel_l2")):
        with pytest.raises(ConfigError, match="metric='rel_l2' needs an explicit threshold"):
            call()
    assert compare_dumps(str(_saved(tmp_path, scaled, "a")), str(_saved(tmp_path, golden, "g")))


def _saved(tmp_path, arrays, name):
    """An npy dump directory of ``arrays`` (compare_dumps takes its path, as assert_accuracy)."""
    from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter

    with NpyDumpWriter(tmp_path / name) as w:
        for op, values in arrays.items():
            w.write_op(op, [], values)
    return tmp_path / name

"""A float32 golden's ±float32 max, the attention-mask stand-in for an infinity (Hugging Face's
``torch.finfo(torch.float32).min``), against the float16 device's infinity of the same sign (or
float16's saturated value, where the chip converts in saturation mode) counts as equal and is
said; a real overflow, another stand-in and a sign flip still fail (audit H324: every GPT-2 and
BERT export failed at its mask's ``Where`` with Softmax at cosine 1.000000)."""
import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.metrics import compute_metrics
from pytest_ascend_accuracy.dump.model import DumpSet

MIN = float(np.finfo(np.float32).min)  # -3.4028235e38: torch's, numpy's, TensorFlow's


def _mask_pair(device_masked=-np.inf, seed=0):
    """A causal additive mask over scores, as GPT-2 builds it: golden float32 with float32's
    min where masked, the device's float16 with ``device_masked`` there (167 of 256 in H324's
    Where_1; here the 28 above the diagonal of each 8x8 head, 56 in all)."""
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((1, 2, 8, 8)).astype(np.float32)
    masked = np.broadcast_to(np.triu(np.ones((8, 8), bool), 1), scores.shape)
    golden = np.where(masked, np.float32(MIN), scores).astype(np.float32)
    device = scores.astype(np.float16)
    device[masked] = device_masked
    return device, golden, int(masked.sum())


def test_float32_min_against_the_devices_minus_inf_is_equal_and_said():
    device, golden, n = _mask_pair()
    m = compute_metrics(device, golden)
    assert (m.mismatch, m.stand_in, m.neginf_actual, m.neginf_golden) == (0, n, n, 0)
    assert m.finite == golden.size - n and m.cosine > 0.9999
    assert m.notes[0] == (f"{n} positions hold float32's -max (-3.4e38) in the golden, the mask "
                          "stand-in for -inf, and -inf on the device (compared as equal, as the "
                          "same infinity on both sides is)")


@pytest.mark.parametrize("saturated", [-65504.0, -65472.0, -40000.0])
def test_the_saturated_stand_in_is_equal_too(saturated):
    """A chip converting in saturation mode (CANN aclrtFloatOverflowMode: Atlas inference
    products support only that mode) holds -65504, and an additive mask plus a score rounds to
    another value of float16's top binade."""
    device, golden, n = _mask_pair(saturated)
    m = compute_metrics(device, golden)
    assert (m.stand_in, m.neginf_actual, m.finite) == (n, 0, golden.size - n)
    assert m.cosine > 0.9999 and m.max_abs < 0.01
    assert "float16's saturated value of the same sign (2**15 to 65504) on the device" in (
        m.notes[0])


def test_plus_max_against_plus_inf_is_equal():
    golden = np.array([1.0, np.finfo(np.float32).max, -2.0, 3.0], np.float32)
    device = np.array([1.0, np.inf, -2.0, 3.0], np.float16)
    m = compute_metrics(device, golden)
    assert (m.mismatch, m.stand_in, m.posinf_actual, m.cosine) == (0, 1, 1, 1.0)
    assert m.notes[0].startswith("1 position holds float32's +max (3.4e38) in the golden")


@pytest.mark.parametrize("device_value", [np.inf, 0.0, -1.0, -20000.0])
def test_a_wrong_sign_or_a_value_no_saturation_gives_is_not_equal(device_value):
    """The stand-in -3.4e38 against +inf, or a value that is no saturated -65504 (0, -1,
    -20000 below float16's top binade): counted as what it is."""
    device, golden, n = _mask_pair(device_value)
    r = compare_dumps(DumpSet.from_arrays({"where": [device]}),
                      DumpSet.from_arrays({"where": [golden]}))
    m = r.rows[0].metrics
    assert m.stand_in == 0 and not r.judge(0.99, scale_tolerance=2).passed


@pytest.mark.parametrize("golden_value", [1e6, -1e9, 65520.0, 3e38])
def test_a_real_overflow_and_other_stand_ins_still_fail(golden_value):
    """A MatMul whose float32 golden reaches 1e6 and the float16 device's inf; -1e9 (a
    masked_fill's stand-in, an ordinary float32 value an activation can hold, not taken);
    values just past float16's range and short of float32's max: one side only, failed."""
    rng = np.random.default_rng(1)
    golden = rng.standard_normal(64).astype(np.float32)
    golden[[3, 40]] = golden_value
    with np.errstate(over="ignore"):
        device = golden.astype(np.float16)  # the overflow: +-inf there
    assert np.isinf(device[3])
    r = compare_dumps(DumpSet.from_arrays({"mm": [device]}), DumpSet.from_arrays({"mm": [golden]}))
    m = r.rows[0].metrics
    assert (m.stand_in, m.mismatch) == (0, 2)
    assert not r.judge(0.5).passed
    assert r.judge(0.5).first.reason.startswith("NaN/Inf on one side only at 2 positions")


def test_a_wrong_tensor_behind_the_mask_still_fails():
    """The stand-in positions are left out; the others are judged in full."""
    device, golden, n = _mask_pair()
    wrong = device.copy()
    keep = np.isfinite(wrong)
    wrong[keep] = np.random.default_rng(9).standard_normal(int(keep.sum()))
    r = compare_dumps(DumpSet.from_arrays({"where": [wrong]}),
                      DumpSet.from_arrays({"where": [golden]}))
    assert r.rows[0].metrics.stand_in == n and r.rows[0].metrics.cosine < 0.5
    assert not r.judge(0.99).passed


def test_a_mask_of_zeros_and_the_stand_in_is_not_called_all_zero():
    """H324's notes line read "both tensors are all zero" where the golden held -3.4e38 at 167
    of 256 positions (the zero test ran on the finite positions only)."""
    device, golden, n = _mask_pair()
    device[np.isfinite(device)] = 0
    golden[golden != MIN] = 0
    m = compute_metrics(device, golden)
    assert "both tensors are all zero" not in m.notes
    assert (f"both tensors are all zero at the {golden.size - n} of {golden.size} positions "
            f"compared (the other {n}: as noted before)") in m.notes
    with np.errstate(over="ignore"):
        fp16_mask = compute_metrics(golden.astype(np.float16), device)  # -inf on both sides
    assert fp16_mask.matched_inf == n and "both tensors are all zero" not in fp16_mask.notes
    plain = compute_metrics(np.zeros(8, np.float16), np.zeros(8, np.float32))
    assert "both tensors are all zero" in plain.notes  # the whole tensor: as before


def test_a_saved_result_keeps_the_rule_and_a_version_4_one_says_it_lacked_it():
    from pytest_ascend_accuracy.compare.result import CompareResult

    device, golden, _ = _mask_pair()
    r = compare_dumps(DumpSet.from_arrays({"where": [device]}),
                      DumpSet.from_arrays({"where": [golden]}))
    again = CompareResult.from_json(r.to_json())
    assert again.rows == r.rows and again.judge(0.99).passed and not again.older_rules
    old = r.to_dict()
    old["version"] = 4
    assert "stand-in for an infinity) against the device's infinity of the same sign was a " \
           "mismatch" in CompareResult.from_dict(old).older_rules


def _flushed_map():
    """A float16 map below float16's smallest normal whose device flushed 80% of its values to
    0: plain cosine 0.447, judged 1.0 (the positions close on float16's subnormal grid), L2
    norm 0.45x the golden's over every position (H324's mobilenet: "cosine 0.357822 is blind to
    scale" beside a judged 1.000000, then failed by the guard at 0.4068x)."""
    golden = np.full(100, 2e-7, np.float32)
    device = golden.astype(np.float16)
    device[:80] = 0
    return compare_dumps(DumpSet.from_arrays({"map": [device]}),
                         DumpSet.from_arrays({"map": [golden]}))


def test_the_flushed_map_passes_the_scale_guard_over_the_positions_judged():
    """The guard takes the positions the figure judged compares (F23; its reasons, and a device
    scaled by 0.4 or 2.5 failing it, in tests/compare/test_scale_guard_tiny_values.py)."""
    r = _flushed_map()
    m = r.rows[0].metrics
    assert m.value("cosine") == 1.0 and m.cosine < 0.5 and m.norm_ratio < 0.5
    assert r.judge(0.99, scale_tolerance=2).passed
    assert r.judge(0.1, metric="rel_l2", scale_tolerance=2).passed


def test_the_compare_command_says_the_stand_in(tmp_path, capsys):
    """``ascend-accuracy compare`` printed the golden overflow's warning only: the mask
    stand-in's, which ``assert_accuracy`` warns, went unsaid (F20's report)."""
    from pytest_ascend_accuracy.cli import app as cli
    from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
    from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter

    device, golden, n = _mask_pair()
    with NpyDumpWriter(tmp_path / "golden") as w:
        w.write_op("where", [], [golden])
    with AscendDumpWriter(tmp_path / "npu") as w:
        w.write_op("Select", "where", [], [device])
    assert cli.main(["compare", str(tmp_path / "npu"), str(tmp_path / "golden")]) == 0
    err = capsys.readouterr().err
    assert err == (f"ascend-accuracy: warning: mask stand-in compared as equal: where ({n} of "
                   f"{golden.size} positions). The golden holds float32's -max (-3.4e38, as "
                   "torch.finfo(torch.float32).min gives an attention mask) or +max there and "
                   "the device the infinity of that sign (float16 cannot hold the value; a chip "
                   "converting in saturation mode gives +-65504): both mask alike, so those "
                   "positions are not judged; every other position is\n")

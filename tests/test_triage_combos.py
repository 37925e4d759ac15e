"""``diagnose`` on a model with two causes, each fixed by another mode (a trial, H65): a faulty
fusion rule plus a buffer fault, or plus float16 rounding at a later op. Neither buffer off nor
fusion off passes alone; the diagnosis said "no conversion mode restores accuracy ... check
the operator implementations", where ``buffer_off+fusion_off``, or fusion off with two ops kept
in float32, passed. It goes on from the modes now: together, then the precision step under the
one that got furthest, and names the fusion rule instead of all fusion off; each fix pasted
passes, and a model no mode fixes stays NOT RESTORED, saying which combinations it tried."""
import json
import os
import re
import subprocess

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend, Fault  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.core.modes import Mode  # noqa: E402
from pytest_ascend_accuracy.triage.flow import diagnose  # noqa: E402
from pytest_ascend_accuracy.triage.result import guide_step  # noqa: E402

RULE = "GraphFusion:ConvBatchnormFusionPass"
#: a faulty fusion rule (fusion off fixes conv1relu1) and a buffer fault (buffer off fixes head)
TWO_FAULTS = [Fault.on_rule("ConvBatchnormFusionPass"), Fault.on_buffer("head")]


def cbr(shift=False):
    """Conv + BatchNorm + Relu (fused by ConvBatchnormFusionPass), pooled into a Gemm; with
    ``shift``, ``+1500 -1500`` before the Gemm: float16 rounding there that only keeping the
    two ops in float32 (or high precision) fixes."""
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(np.asarray(v, np.float32), n) for n, v in (
        ("cw", rng.standard_normal((8, 3, 3, 3)) * 0.3), ("cb", rng.standard_normal(8) * 0.1),
        ("s", rng.uniform(0.5, 1.5, 8)), ("b", rng.standard_normal(8) * 0.1),
        ("m", rng.standard_normal(8) * 0.1), ("v", rng.uniform(0.5, 1.5, 8)),
        ("off", [1500.0]), ("fw", rng.standard_normal((10, 8))),
        ("fb", rng.standard_normal(10) * 0.1))]
    nodes = [helper.make_node("Conv", ["x", "cw", "cb"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["bn"],
                              name="bn1"),
             helper.make_node("Relu", ["bn"], ["r"], name="relu1"),
             helper.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"),
             helper.make_node("Flatten", ["p"], ["f"], name="flat")]
    if shift:
        nodes += [helper.make_node("Add", ["f", "off"], ["f2"], name="shift_up"),
                  helper.make_node("Sub", ["f2", "off"], ["f3"], name="shift_down")]
    nodes.append(helper.make_node("Gemm", ["f3" if shift else "f", "fw", "fb"], ["y"],
                                  name="head", transB=1))
    graph = helper.make_graph(
        nodes, "cbr_round" if shift else "cbr",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


@pytest.fixture
def cache(tmp_path):
    return Cache(tmp_path / "cache")


def run(model, cache, faults, **kw):
    return diagnose(model, backend=EmulatorBackend(cache, faults=faults), cache=cache, **kw)


def test_a_buffer_fault_and_a_rule_fault_are_fixed_together(cache):
    d = run(cbr(), cache, TWO_FAULTS)
    assert d.restored_by == "buffer_off+fusion_rules", d.verdict
    assert d.step("buffer_off").first_failure == "conv1relu1"
    assert d.step("fusion_off").first_failure == "head"
    assert d.step("buffer_off+fusion_off").passed is True
    assert d.fix_mode == Mode(buffer_optimize="off_optimize", fusion_rules_off=(RULE,))
    assert d.fusion_rules_off == (RULE,) and not d.budget_exhausted
    assert d.verdict.startswith(
        "default fails at op conv1relu1; buffer_off fixes head and fails at op conv1relu1; "
        "fusion_off fixes conv1relu1 and fails at op head; the two together restore cosine "), \
        d.verdict
    assert d.verdict.endswith(f"switching off only the fusion rule(s) {RULE} (ops fused under "
                              f"default, not with it off: conv1+bn1+relu1) with buffer "
                              f"optimisation off restores cosine 1.000000 too"), d.verdict
    assert d.conversions <= 10, d.conversions
    assert run(cbr(), cache, TWO_FAULTS, mode=d.fix_mode).restored_by == "default"


def test_a_rule_fault_and_later_rounding_keep_two_ops_with_the_rule_off(cache):
    faults = TWO_FAULTS[:1]
    d = run(cbr(shift=True), cache, faults)
    assert d.restored_by == "fusion_rules+keep_dtype", d.verdict
    assert d.step("fusion_off").first_failure == "shift_down"
    assert d.step("buffer_off+fusion_off") is None  # buffer off fixes nothing: not combined
    assert d.step("fusion_off+keep_dtype").passed is True
    assert d.fix_mode == Mode(fusion_rules_off=(RULE,), keep_dtype=("shift_down", "shift_up"))
    assert d.verdict.startswith("default fails at op conv1relu1; fusion_off fixes conv1relu1 "
                                "and fails at op shift_down; high precision passes; keep_dtype "
                                "{shift_down, shift_up} restores cosine 1.000000 under mode "
                                "fusion_off; with fusion back on"), d.verdict
    assert d.conversions <= 32 and not d.budget_exhausted
    assert run(cbr(shift=True), cache, faults, mode=d.fix_mode).restored_by == "default"
    # the all-fusion-off fix the rules were searched from passes too
    assert run(cbr(shift=True), cache, faults, mode="fusion_off").restored_by != "default"
    fusion_off_fix = Mode(fusion=False, keep_dtype=("shift_down", "shift_up"))
    assert run(cbr(shift=True), cache, faults, mode=fusion_off_fix).restored_by == "default"


def test_three_causes_keep_two_ops_under_both_modes_and_name_the_rule(cache):
    """A rule fault, a buffer fault and float16 rounding: buffer and fusion off together fail
    at the rounding, and the precision step under them (the furthest) fixes it."""
    faults = [TWO_FAULTS[0], Fault.on_buffer("gap")]
    d = run(cbr(shift=True), cache, faults)
    assert d.restored_by == "buffer_off+fusion_rules+keep_dtype", d.verdict
    assert d.step("buffer_off+fusion_off").first_failure == "shift_down"
    assert d.step("buffer_off+fusion_off+keep_dtype").passed is True
    assert d.fix_mode == Mode(buffer_optimize="off_optimize", fusion_rules_off=(RULE,),
                              keep_dtype=("shift_down", "shift_up"))
    assert "; buffer_off+fusion_off got furthest; high precision passes; " in d.verdict
    assert d.conversions <= 32 and not d.budget_exhausted
    assert run(cbr(shift=True), cache, faults, mode=d.fix_mode).restored_by == "default"


def test_a_model_no_mode_fixes_stays_not_restored_and_names_the_combinations_tried(cache):
    faults = [TWO_FAULTS[0], Fault.on_buffer("gap"), Fault.on_op("head", effect="scale",
                                                                 amount=-1.0)]
    d = run(cbr(), cache, faults)
    assert d.restored_by is None
    tried = [s.mode for s in d.steps if "+" in s.step and s.mode]
    assert tried == ["buffer_off+fusion_off", "high_precision+buffer_off+fusion_off",
                     "buffer_off+fusion_off+keep_dtype(all 6 ops)"], tried
    assert all(s.passed is False for s in d.steps if "+" in s.step and s.mode)
    assert "no conversion mode restores accuracy" in d.verdict
    assert (f"no mode tried passes, alone or in the combinations tried ({', '.join(tried)}); "
            f"not tried, as a part of each changed nothing or got no further: "
            f"high_precision+buffer_off, high_precision+fusion_off (the diagnosis's") \
        in d.verdict, d.verdict
    assert "alone or together" not in d.verdict  # it read as every combination tried
    assert d.verdict.endswith("check the operator implementations against the reference")


@pytest.mark.parametrize("step, number", [
    ("buffer_off+fusion_off+high_precision", 2), ("buffer_off+fusion_off+keep_dtype_all", 2),
    ("buffer_off+fusion_rules+keep_dtype", 4)])
def test_the_combined_steps_carry_the_guides_numbers(step, number):
    assert guide_step(step) == number


def _paste_atc(fake, model, args_file):
    line = (f"{fake.toolkit.atc} --model={model} --framework=5 --output=pasted "
            f"--soc_version=Ascend310P3 $(cat {args_file})")
    env = dict(os.environ, FAKE_ATC_CALLS=os.devnull)
    return subprocess.run(["sh", "-c", line], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("shift, fault_args, files", [
    (False, ["--fault", "rule:ConvBatchnormFusionPass", "--fault", "buffer:head"],
     ["--precision_mode=force_fp16", "--buffer_optimize=off_optimize",
      "--fusion_switch_file=fix/fusion_switch.cfg"]),
    (True, ["--fault", "rule:ConvBatchnormFusionPass"],
     ["--precision_mode=force_fp16", "--keep_dtype=fix/keep_dtype.cfg",
      "--fusion_switch_file=fix/fusion_switch.cfg"]),
    (True, ["--fault", "rule:ConvBatchnormFusionPass", "--fault", "buffer:gap"],
     ["--precision_mode=force_fp16", "--keep_dtype=fix/keep_dtype.cfg",
      "--buffer_optimize=off_optimize", "--fusion_switch_file=fix/fusion_switch.cfg"]),
])
def test_the_cli_prints_restored_and_its_fix_passes_pasted(tmp_path, capsys, monkeypatch, shift,
                                                           fault_args, files):
    out = diagnosed_and_pasted(tmp_path, capsys, monkeypatch, cbr(shift), fault_args, files)
    assert f"ATC: {' '.join(files)}\n" in out
    assert json.loads((tmp_path / "fix" / "fusion_switch.cfg").read_text()) == {
        "Switch": {"GraphFusion": {"ConvBatchnormFusionPass": "off"}}}
    if shift:
        assert (tmp_path / "fix" / "keep_dtype.cfg").read_text() == "shift_down\nshift_up\n"
    else:
        assert not (tmp_path / "fix" / "keep_dtype.cfg").exists()


def diagnosed_and_pasted(tmp_path, capsys, monkeypatch, model, fault_args, files) -> str:
    """``ascend-accuracy diagnose`` of ``model`` under ``fault_args``: RESTORED, its
    atc_args.txt ``files``, its YAML mode pasted as ``--mode`` PASSES, and the fake ATC takes
    atc_args.txt pasted after the options it leaves out; the diagnosis's output."""
    import onnx

    from pytest_ascend_accuracy.cli import main
    from pytest_ascend_accuracy.testing.fake_ascend import use_fake_ascend

    monkeypatch.chdir(tmp_path)
    onnx.save(model, "m.onnx")
    common = ["--cache-dir", "c", *fault_args]
    assert main(["diagnose", "m.onnx", *common, "--out", "fix"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ascend-accuracy diagnosis of m: RESTORED\n"), out
    assert (tmp_path / "fix" / "atc_args.txt").read_text().splitlines() == files
    (yaml,) = re.findall(r"in a YAML suite: modes: \[(.+)\]$", out, re.M)
    assert main(["diagnose", "m.onnx", *common, "--mode", yaml]) == 0
    assert "PASSES" in capsys.readouterr().out
    fake = use_fake_ascend(monkeypatch, tmp_path / "asc", toolkit_version="8.0.RC2")
    pasted = _paste_atc(fake, tmp_path / "m.onnx", "fix/atc_args.txt")
    assert pasted.returncode == 0, pasted.stdout + pasted.stderr
    assert "ATC run success" in pasted.stdout
    return out

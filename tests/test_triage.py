"""Acceptance of the automated debugging flow on the emulator, with fault injection where a real
NPU would have a defect (issue 6): each scenario names the right step and the fix."""
import json
import math

import pytest

pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.emulator import EmulatorBackend, Fault  # noqa: E402
from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.cli import main  # noqa: E402
from pytest_ascend_accuracy.core.modes import Mode  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402
from pytest_ascend_accuracy.triage.flow import diagnose  # noqa: E402
from pytest_ascend_accuracy.triage.report import text  # noqa: E402


@pytest.fixture
def cache(tmp_path):
    return Cache(tmp_path / "cache")


def run(model, cache, faults=(), **kw):
    return diagnose(model, backend=EmulatorBackend(cache, faults=faults), cache=cache, **kw)


def test_fp16_overflow_in_one_op_is_fixed_by_keeping_that_op(cache, tmp_path):
    d = run(models.overflow_model(), cache, out_dir=tmp_path / "fix")
    assert d.restored_by == "keep_dtype"
    assert d.keep_dtype == ("norm",)
    assert d.fix_mode == Mode(keep_dtype=("norm",))
    n_ops = len(d.final.rows)
    assert d.conversions <= math.ceil(math.log2(n_ops)) + 3, (d.conversions, n_ops)
    assert d.step("default").first_failure == "norm"
    assert d.step("high_precision").passed is True
    assert (tmp_path / "fix" / "keep_dtype.cfg").read_text() == "norm\n"
    args = (tmp_path / "fix" / "atc_args.txt").read_text().splitlines()
    # named from the folder holding fix/, so the folder copied elsewhere pastes (fix_folder)
    assert args == ["--precision_mode=force_fp16", "--keep_dtype=fix/keep_dtype.cfg"]
    assert d.verdict.startswith("default fails at op norm; high precision passes; keep_dtype {norm} "
                                "restores cosine")


def test_two_ops_that_only_work_together_are_both_kept(cache):
    d = run(models.two_overflows(), cache)
    assert d.restored_by == "keep_dtype"
    assert d.keep_dtype == ("norm_a", "norm_b")
    # 1-minimal: neither alone restores accuracy
    for single in ("norm_a", "norm_b"):
        backend = EmulatorBackend(cache)
        from pytest_ascend_accuracy.compare.engine import compare_dumps
        from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
        from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
        inputs = make_inputs(models.two_overflows())
        dump = backend.run(backend.convert(models.two_overflows(), Mode(keep_dtype=(single,))), inputs)
        golden = golden_dump(models.two_overflows(), inputs, cache=cache)
        assert not compare_dumps(dump, golden).judge(0.95).passed


def test_faulty_fusion_rule_is_named(cache, tmp_path):
    d = run(models.conv_bn_relu(), cache, faults=[Fault.on_rule("ConvBatchnormFusionPass")],
            out_dir=tmp_path / "fix")
    assert d.restored_by == "fusion_rules"
    assert d.fusion_rules_off == ("GraphFusion:ConvBatchnormFusionPass",)
    assert d.step("fusion_off").passed is True
    assert json.loads((tmp_path / "fix" / "fusion_switch.cfg").read_text()) == {
        "Switch": {"GraphFusion": {"ConvBatchnormFusionPass": "off"}}}


def test_faulty_buffer_optimisation_is_named(cache):
    d = run(models.conv_bn_relu(), cache, faults=[Fault.on_buffer("conv2")])
    assert d.restored_by == "buffer_off"
    assert d.fix_mode.buffer_optimize == "off_optimize"
    assert d.step("buffer_off").differing == ("conv2relu2",)
    assert "ops that change: conv2relu2" in d.verdict


def test_input_preprocessing_mismatch_stops_at_the_data_step(cache):
    d = run(models.conv_bn_relu(), cache, faults=[Fault.on_input("x", effect="scale", amount=0.5)])
    assert d.restored_by is None
    data = d.step("data")
    assert data.passed is False
    assert "looks like golden * 0.5 (check mean/scale)" in data.summary
    assert d.conversions == 1  # no conversion wasted on modes once the inputs are known wrong
    assert [s.step for s in d.steps] == ["default", "data"]


def test_model_failing_in_every_mode_reports_the_operators(cache):
    d = run(models.conv_bn_relu(), cache, faults=[Fault.on_op("conv2")])
    assert d.restored_by is None
    assert [s.step for s in d.steps] == ["default", "data", "high_precision", "keep_dtype_all",
                                         "buffer_off", "fusion_off", "buffer_off+fusion_off",
                                         "golden"]  # the pair too: an op fault fails in it
    golden = d.step("golden")
    assert golden.first_failure == "conv2relu2" and golden.failing == ("conv2relu2",)
    assert "no conversion mode restores accuracy" in d.verdict


def test_passing_model_costs_one_conversion(cache):
    d = run(models.passing_mlp(), cache)
    assert d.restored_by == "default" and d.conversions == 1 and len(d.steps) == 1


def test_budget_stops_and_a_rerun_resumes_from_the_cache(cache):
    first = run(models.two_overflows(), cache, budget=3)
    # the seeds passed before the budget ran out: that measured set is the fix, said cut short
    assert first.budget_exhausted and first.restored_by == "keep_dtype"
    assert first.keep_dtype == ("norm_a", "norm_b") and first.fix_mode is not None
    assert ("(the budget ran out before a smaller set was found: rerun with --budget 6 to "
            "search further)") in first.verdict
    assert first.conversions == 3
    again = run(models.two_overflows(), cache, budget=3)
    assert again.cache_hits == 3 and again.restored_by == "keep_dtype"
    assert again.keep_dtype == ("norm_a", "norm_b")


def test_a_tight_threshold_is_printed_as_given(cache):
    """``threshold: cosine 1`` and ``(cosine 1.000000 vs 1.000000)`` for 0.9999999: the report
    rounded the threshold and the value to equality (a review)."""
    d = run(models.passing_mlp(), cache, threshold=0.9999999, budget=1)
    out = text(d)
    assert "threshold: cosine 0.9999999;" in out
    step = next(line for line in out.splitlines() if line.startswith("  step 1 default"))
    assert "vs 0.9999999)" in step and "1.000000 vs" not in step


def test_text_rendering_names_step_fix_and_cost(cache):
    d = run(models.overflow_model(), cache)
    out = text(d)
    assert out.splitlines()[0] == "ascend-accuracy diagnosis of overflow: RESTORED"
    assert ("  fix: mode keep_dtype(norm); ATC: --precision_mode=force_fp16 --keep_dtype=./keep_dtype.cfg"
            " (its config files are written by --out DIR)") in out
    assert "  step 1 default [default]: FAILED | fails at op norm (cosine" in out
    assert "  step 2 high_precision [high_precision]: PASSED | passes (1 conversion)" in out


def test_cli_diagnose_writes_files_and_exits_by_outcome(tmp_path, capsys):
    import onnx

    path = tmp_path / "overflow.onnx"
    onnx.save(models.overflow_model(), str(path))
    out = tmp_path / "out"
    code = main(["diagnose", str(path), "--cache-dir", str(tmp_path / "c"), "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "RESTORED" in printed and f"wrote keep_dtype.cfg: {out / 'keep_dtype.cfg'}" in printed
    # the fix line names the file where it was written (it said ./keep_dtype.cfg, review helper)
    assert (f"ATC (run from {tmp_path}, which holds out/): --precision_mode=force_fp16 "
            f"--keep_dtype=out/keep_dtype.cfg\n") in printed
    assert (out / "keep_dtype.cfg").is_file()
    report = json.loads((out / "diagnosis.json").read_text())
    assert report["restored_by"] == "keep_dtype" and report["fix"]["keep_dtype"] == ["norm"]
    assert "<svg" in (out / "diagnosis.html").read_text()
    code = main(["diagnose", str(path), "--cache-dir", str(tmp_path / "c"), "--fault", "op:fc2/MatMul"])
    assert code in (0, 1)
    assert main(["diagnose", str(tmp_path / "missing.onnx")]) == 2
    assert "missing.onnx: no such model file" in capsys.readouterr().err


def _overflow_then_big_mul():
    """The overflow model followed by a Mul by 1e5 (a cube op fused with it under fusion)."""
    import numpy as np
    from onnx import helper, numpy_helper

    model = models.overflow_model()
    out = model.graph.output[0].name
    model.graph.node[-1].output[0] = "pre_big"
    model.graph.initializer.append(numpy_helper.from_array(np.full(1, 1e5, np.float32), "big"))
    model.graph.node.append(helper.make_node("Mul", ["pre_big", "big"], [out], name="big/Mul"))
    return model


def test_keep_dtype_is_searched_when_high_precision_fails_on_a_float16_range_op(cache, tmp_path):
    """High precision still feeds the fused MatMul+Mul float16 (its 1e5 constant overflows), so
    the flow skipped keep_dtype and concluded that the operators differ 'in every mode tried'
    (a reviewer's diagnose); keeping ops in float32 restores it, and the fix applied passes."""
    d = run(_overflow_then_big_mul(), cache, out_dir=tmp_path / "fix")
    assert d.step("high_precision").passed is False
    assert d.step("keep_dtype_all").passed is True
    assert d.restored_by == "keep_dtype" and set(d.keep_dtype) >= {"norm"}
    assert ("high precision does not pass (it fails at op fc2/MatMulbig/Mul (MatMulV2), a Cube op: "
            "high precision still feeds Cube ops float16 inputs)") in d.verdict
    backend = EmulatorBackend(cache)
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    model = _overflow_then_big_mul()
    inputs = make_inputs(model)
    dump = backend.run(backend.convert(model, d.fix_mode), inputs, dump=True,
                       dump_dir=tmp_path / "applied")
    assert compare_dumps(dump, golden_dump(model, inputs, cache=cache)).judge(0.95).passed


def test_the_last_step_names_the_modes_tried_instead_of_claiming_every_op_fails_in_each(cache):
    d = run(models.conv_bn_relu(), cache, faults=[Fault.on_op("conv2")])
    golden = d.step("golden")
    assert "in every mode tried" not in golden.summary
    assert ("no mode tried passes (high_precision, keep_dtype(all 9 ops), buffer_off, "
            "fusion_off, buffer_off+fusion_off)") in golden.summary


def test_a_default_verdict_that_judged_nothing_is_not_diagnosed_and_does_not_crash(cache):
    """ignore=["*"] leaves no tensor judged: the flow read the first failure's value (None) and
    --accuracy-diagnose ended in AttributeError (review of the change that made it a failure)."""
    d = run(models.overflow_model(), cache, ignore=["*"])
    assert d.restored_by is None and d.conversions == 1
    assert d.verdict.startswith("not diagnosed: no tensor was judged")
    assert d.steps[0].summary.startswith("fails: no tensor was judged")


def test_a_check_failed_on_scale_alone_is_diagnosed_under_the_same_scale_guard(cache):
    """--accuracy-diagnose judged without the scale guard: a check that failed on scale alone
    (threshold 0.05, cosine 0.397, L2 norm 0.4x) was "already meeting the threshold" there."""
    guarded = run(models.overflow_model(), cache, threshold=0.05, scale_tolerance=2.0)
    assert guarded.restored_by == "keep_dtype" and guarded.keep_dtype == ("norm",)
    assert run(models.overflow_model(), cache, threshold=0.05).restored_by == "default"  # no guard


def test_a_step_tables_small_errors_print_in_significant_digits():
    """A YOLO diagnosis's step table printed ``max-abs 0.000000`` for an error of 2e-8 that
    the failure itself printed as 1.931e-08: errors below 1e-3 now print 4 significant digits
    there too, as in the failure's own text (``report.figures.error_figure``); the cosine keeps
    six places, and a zero error stays 0.000000."""
    from pytest_ascend_accuracy.triage.result import Diagnosis, OpLine, StepResult

    step = StepResult("default", "default", False, "first failure at /model.9/Concat",
                      table=(OpLine("/model.9/Concat", "Concat", 0.541978, 2.5e-4, 1.931e-08),
                             OpLine("/model.9/cv1/act/Mul", "Mul", 0.99, 0.0, 0.0)))
    shown = text(Diagnosis(model="yolo.onnx", backend="emulator", threshold=0.99,
                           metric="cosine", restored_by=None, verdict="not restored",
                           steps=(step,)))
    assert ("/model.9/Concat       Concat         cos 0.541978  rel-L2 0.00025  "
            "max-abs 1.931e-08") in shown, shown
    assert "cos 0.990000  rel-L2 0.000000  max-abs 0.000000" in shown, shown

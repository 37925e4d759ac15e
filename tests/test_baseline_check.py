"""check_baseline: missing, passing, regressed, rebaseline required, and when files are rewritten."""
import dataclasses
import math

import pytest

from pytest_ascend_accuracy.baseline.check import (MISSING, PASSED, REBASELINE, REGRESSED,
                                                   REWRITTEN, UNREADABLE, check_baseline,
                                                   judge_ops)
from pytest_ascend_accuracy.baseline.file import InputSpec, OpBaseline, TensorSpec, read_baseline
from pytest_ascend_accuracy.errors import ConfigError
from test_baseline_helpers import HEADER, SPEC, make_result


@pytest.fixture
def path(tmp_path):
    return tmp_path / "baselines" / "mlp" / "default.yaml"


def check(result, path, **kw):
    kw.setdefault("header", HEADER)
    kw.setdefault("inputs", SPEC)
    return check_baseline(result, path, **kw)


def test_missing_baseline_is_written_and_fails_naming_the_file(path):
    out = check(make_result(), path)
    assert (out.status, out.passed, out.written) == (MISSING, False, path)
    assert out.message.splitlines() == [
        f"accuracy baseline {path} did not exist: wrote it from this run (4 operator lines, "
        "backend emulator).",
        "Check it in and run the test again to compare against it."]
    assert [op.op for op in read_baseline(path).ops] == ["conv1", "relu1", "fc/MatMul", "softmax"]


def test_missing_baseline_with_regen_all_is_written_and_passes(path):
    out = check(make_result(), path, regen="all")
    assert (out.status, out.passed, out.written) == (REWRITTEN, True, path)
    assert path.exists()


def test_a_baseline_passes_against_the_run_that_wrote_it_and_is_not_rewritten(path):
    result = make_result(noise={"relu1": 0.05})
    check(result, path)
    before = path.stat().st_mtime_ns, path.read_bytes()
    for regen in ("none", "failing"):
        out = check(result, path, regen=regen)
        assert (out.status, out.passed, out.written) == (PASSED, True, None)
        assert out.message == (f"accuracy baseline passed: 4 operator lines within "
                               f"max_drop=0.002 of {path}")
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before


def test_drop_within_threshold_but_beyond_max_drop_fails_listing_old_and_new(path):
    check(make_result(), path)
    worse = make_result(noise={"relu1": 0.2, "softmax": 0.01})
    assert worse.judge(0.95).passed  # the fixed threshold does not see it
    out = check(worse, path)
    assert (out.status, out.passed, out.written) == (REGRESSED, False, None)
    new = round(worse.row("relu1").metrics.cosine, 6)
    drop = 1.0 - new
    assert out.message.splitlines() == [
        f"accuracy baseline REGRESSED: 1 of 4 baselined operator lines got worse than {path} "
        "allows (cosine drop > 0.002, more NaN/Inf, no longer compared, missing, or absent "
        "from the file)",
        f"  relu1: cosine 1.000000 -> {new:.6f} (drop {drop:.6f} > 0.002)",
        "To accept these values: rerun with --accuracy-regen (rewrites failing baselines) or "
        "--accuracy-regen-all."]
    assert [c.label for c in out.regressions] == ["relu1"]


def test_regen_failing_rewrites_a_failing_baseline_and_still_fails(path):
    check(make_result(), path)
    worse = make_result(noise={"relu1": 0.2})
    out = check(worse, path, regen="failing")
    assert (out.status, out.passed, out.written) == (REGRESSED, False, path)
    assert out.message.endswith("Baseline rewritten with this run's values (--accuracy-regen); "
                                "the test still fails.")
    assert check(worse, path).passed


def test_regen_all_rewrites_and_passes_even_when_worse(path):
    check(make_result(), path)
    worse = make_result(noise={"relu1": 0.2})
    out = check(worse, path, regen="all")
    assert (out.status, out.passed, out.written) == (REWRITTEN, True, path)
    text = path.read_bytes()
    check(worse, path, regen="all")
    assert path.read_bytes() == text  # reruns produce identical files


def test_nan_count_rise_fails_even_with_a_huge_max_drop(path):
    check(make_result(nan={"softmax": 1}), path)
    out = check(make_result(nan={"softmax": 3}), path, max_drop=1.0)
    assert not out.passed
    assert "  softmax: NaN count 1 -> 3" in out.message.splitlines()


def test_op_gone_from_the_run_is_a_regression_and_a_new_op_is_a_note(path):
    check(make_result(), path)
    out = check(make_result(drop=("fc/MatMul",)), path)
    assert not out.passed
    assert "  fc/MatMul: in the baseline, missing from this run" in out.message.splitlines()
    out = check(make_result(extra=("added",)), path)
    assert out.passed and out.new_ops == ("added",)
    assert "note: 1 operator line not in the baseline (not judged): added" in out.message


def test_op_no_longer_compared_is_a_regression(path):
    result = make_result()
    check(result, path)
    rows = tuple(dataclasses.replace(r, metrics=None, reason="cannot read") if r.op_name == "conv1"
                 else r for r in result.rows)
    out = check(dataclasses.replace(result, rows=rows), path)
    assert "  conv1: compared -> not compared" in out.message.splitlines()


def test_improvement_passes_with_a_note(path):
    check(make_result(noise={"relu1": 0.2}), path)
    out = check(make_result(), path)
    assert out.passed and out.improved == ("relu1",)
    assert "improved by more than 0.002 (record them with --accuracy-regen-all): relu1" in out.message


@pytest.mark.parametrize("key, value", [("toolkit_version", "8.1.RC1"), ("soc_version", "Ascend910B"),
                                        ("atc_args", ["--precision_mode=allow_fp32_to_fp16"]),
                                        ("backend", "ascend")])
def test_environment_change_says_rebaseline_required_instead_of_op_failures(path, key, value):
    check(make_result(), path)
    out = check(make_result(noise={"relu1": 0.5}), path, header=dict(HEADER, **{key: value}))
    assert (out.status, out.passed) == (REBASELINE, False)
    lines = out.message.splitlines()
    assert lines[0] == (f"accuracy baseline REBASELINE REQUIRED: {path} was recorded under "
                        "another setup (1 change)")
    assert lines[1] == f"  {key}: {HEADER[key]!r} -> {value!r}"
    assert "relu1" not in out.message and out.regressions == ()
    assert lines[-1] == "To record a new baseline: rerun with --accuracy-regen (or --accuracy-regen-all)."


def test_rebaseline_with_regen_failing_rewrites_then_passes(path):
    check(make_result(), path)
    new_env = dict(HEADER, toolkit_version="8.1.RC1")
    out = check(make_result(), path, header=new_env, regen="failing")
    assert (out.status, out.passed, out.written) == (REBASELINE, False, path)
    assert check(make_result(), path, header=new_env).passed


def test_input_changes_are_rebaseline_required(path):
    check(make_result(), path)
    other = InputSpec(seed=1, tensors=(TensorSpec("x", "float32", (1, 16), "cd" * 32),))
    out = check(make_result(), path, inputs=other)
    assert out.status == REBASELINE
    assert [c[0] for c in out.changes] == ["inputs.seed", "inputs.x.sha256"]
    assert "  inputs.seed: 0 -> 1" in out.message.splitlines()


def test_info_is_shown_not_judged(path):
    check(make_result(), path, info={"model": "models/mlp", "owner": "a"})
    assert check(make_result(), path, info={"model": "models/mlp", "owner": "b"}).passed
    out = check(make_result(noise={"relu1": 0.2}), path, info={"model": "models/mlp", "owner": "b"})
    assert "note: changed since the baseline (not judged): owner 'a' -> 'b'" in out.message


def test_a_changed_model_is_named_as_such(path):
    """D7: the model's sha256 is recorded; when it differs, the regression message says the model
    file changed (the likely cause) right under its headline, not as a stray info note."""
    check(make_result(), path, info={"model": "m", "model_sha256": "a" * 64})
    same = check(make_result(), path, info={"model": "m", "model_sha256": "b" * 64})
    assert same.passed and "note: the model file changed since this baseline" in same.message
    # on a pass only --accuracy-regen-all rewrites the baseline; the plugin warns with this line
    assert same.model_changed.endswith("record a new baseline with --accuracy-regen-all")
    out = check(make_result(noise={"relu1": 0.2}), path, info={"model": "m", "model_sha256": "b" * 64})
    lines = out.message.splitlines()
    assert lines[1].startswith("note: the model file changed since this baseline was recorded "
                               "(sha256 aaaaaaaaaaaa... -> bbbbbbbbbbbb...)")
    assert "model_sha256" not in out.message


def test_unreadable_baseline_raises_unless_regen_failing(path):
    path.parent.mkdir(parents=True)
    path.write_text("{ broken", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        check(make_result(), path)
    out = check(make_result(), path, regen="failing")
    assert (out.status, out.passed, out.written) == (UNREADABLE, False, path)
    assert check(make_result(), path).passed


def test_bad_arguments_are_config_errors(path):
    with pytest.raises(ConfigError, match="regen must be one of none, failing, all"):
        check(make_result(), path, regen="sometimes")
    with pytest.raises(ConfigError, match="max_drop must be >= 0"):
        check(make_result(), path, max_drop=-0.1)
    with pytest.raises(ConfigError, match="inputs must be the BaselineInputs"):
        check(make_result(), path, inputs={"x": [1.0]})
    with pytest.raises(ConfigError, match="random unseeded inputs are refused"):
        check(make_result(), path, inputs=InputSpec(seed=None, tensors=()))
    assert not path.exists()


def test_long_regression_lists_are_capped(path):
    names = tuple(f"op{i}" for i in range(30))
    check(make_result(extra=names), path)
    res = make_result(extra=names)
    rows = tuple(dataclasses.replace(r, metrics=None) for r in res.rows)
    out = check(dataclasses.replace(res, rows=rows), path)
    lines = out.message.splitlines()
    assert len(out.regressions) == 34 and "  (+14 more)" in lines
    assert sum(1 for line in lines if line.endswith("compared -> not compared")) == 20


def _line(cos, rel=1e-3, nan=0, inf=0, op="a"):
    return OpBaseline(op, cosine=cos, rel_l2=rel, max_abs=0.1, nan=nan, inf=inf)


@pytest.mark.parametrize("old, new, max_drop, failed", [
    (0.999000, 0.997000, 0.002, False),  # exactly max_drop passes
    (0.999000, 0.996999, 0.002, True),
    (0.999000, math.nan, 0.002, True),  # NaN now: fails
    (math.nan, 0.5, 0.002, False),  # NaN before: nothing to drop from
    (0.5, 0.5, 0.0, False),
])
def test_judge_cosine_rule(old, new, max_drop, failed):
    j = judge_ops([_line(old)], [_line(new)], max_drop=max_drop)
    assert bool(j.regressions) is failed


def test_judge_rel_l2_only_when_asked():
    base, cur = [_line(0.99, rel=0.001)], [_line(0.99, rel=0.05)]
    assert judge_ops(base, cur, max_drop=0.002).regressions == ()
    j = judge_ops(base, cur, max_drop=0.002, max_rel_l2_rise=0.01)
    assert [c.line() for c in j.regressions] == ["a: rel_l2 1.000e-03 -> 5.000e-02 (rise 4.900e-02 > 0.01)"]


def test_judge_inf_rise_and_slots():
    base = [OpBaseline("a", "output:1", 0.9, 0.1, 0.1, 0, 0)]
    cur = [OpBaseline("a", "output:1", 0.9, 0.1, 0.1, 0, 2)]
    assert [c.line() for c in judge_ops(base, cur, max_drop=0.1).regressions] == [
        "a:output:1: Inf count 0 -> 2"]


def test_a_baseline_cut_short_for_the_model_it_recorded_fails(path):
    """An emptied or cut ops list (the model unchanged) checked nothing and passed silently:
    the tensors the file lost are regressions naming why (review helper)."""
    from dataclasses import replace

    from pytest_ascend_accuracy.baseline.check import judge_ops

    ops = (OpBaseline("a", "output:0", 0.99, 1e-3, 1e-3, 0, 0),
           OpBaseline("b", "output:0", 0.98, 1e-3, 1e-3, 0, 0))
    cut = judge_ops(ops[:1], ops, max_drop=0.01, new_fail=True)
    assert [c.line() for c in cut.regressions] == [
        "b: compared in this run, absent from the baseline file (the model is the one it "
        "recorded: the file was edited or cut)"]
    grown = judge_ops(ops[:1], ops, max_drop=0.01)  # another model: a note, as before
    assert grown.regressions == () and grown.new_ops == ("b",)
    assert replace(ops[0]).key == ops[0].key


def test_a_baseline_this_run_wrote_is_told_under_its_lock_and_a_requested_rewrite_is_not(path):
    """``on_written`` (the plugin's session registry: no check of the session may pass against
    a baseline it wrote) is told while the baseline's lock is held: told after, another xdist
    worker waiting on the lock could judge against the file before the registry had it (H102,
    as for stored goldens)."""
    import threading

    from filelock import Timeout

    from pytest_ascend_accuracy.core.path_lock import path_lock

    told = []

    def on_written(written):
        held = {}

        def other_worker():  # (a FileLock is per thread: a thread stands for another process)
            lock = path_lock(written, "baseline")
            try:
                lock.acquire(timeout=0.05)
            except Timeout:
                held["by_us"] = True
                return
            lock.release()
            held["by_us"] = False

        t = threading.Thread(target=other_worker)
        t.start()
        t.join()
        told.append((written, held["by_us"]))

    check(make_result(), path, on_written=on_written)
    assert told == [(path, True)]
    check(make_result(), path, on_written=on_written, regen="all")  # asked for: not told
    check(make_result(), path, on_written=on_written)  # passes against it: not told
    assert told == [(path, True)]

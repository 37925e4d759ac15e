"""Threshold policies, verdicts, re-judging and JSON round trips (no tensor I/O)."""
import math
import re

import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.result import CompareResult, Coverage, TensorCompare
from pytest_ascend_accuracy.compare.thresholds import Policy, Threshold
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.errors import ConfigError, DumpFormatError

from nan_aware import differences


def _pair(scales, nan_op=None):
    """golden: ops a0..aN with a ramp; actual: the ramp times (1 + scale * noise)."""
    rng = np.random.default_rng(0)
    golden, actual = {}, {}
    for i, s in enumerate(scales):
        y = rng.standard_normal(64).astype(np.float32)
        x = y + np.float32(s) * rng.standard_normal(64).astype(np.float32)
        if nan_op == f"op{i}":
            x[3] = np.nan
        golden[f"op{i}"] = [y]
        actual[f"op{i}"] = [x.astype(np.float16)]
    return (DumpSet.from_arrays(actual, op_types={k: "Conv2D" for k in actual}),
            DumpSet.from_arrays(golden))


@pytest.fixture(scope="module")
def result():
    actual, golden = _pair([0.0, 0.5, 0.05, 2.0, 0.0])
    return compare_dumps(actual, golden)


def test_threshold_directions_and_descriptions():
    cos = Threshold(0.95)
    assert cos.passed(0.95) and not cos.passed(0.9499) and not cos.passed(math.nan)
    assert cos.describe() == "cosine >= 0.95"
    rel = Threshold(0.05, "rel_l2")
    assert rel.passed(0.05) and not rel.passed(0.0501) and not rel.passed(math.nan)
    assert rel.describe() == "rel_l2 <= 0.05"
    assert cos.loosest_passing(0.912345678) == 0.912345
    assert rel.loosest_passing(0.1234561) == 0.123457
    assert cos.loosest_passing(math.nan) is None


@pytest.mark.parametrize("args,msg", [
    ((1.5,), "cosine threshold must lie in [-1, 1], got 1.5"),
    ((-0.1, "rmse"), "rmse threshold must be >= 0, got -0.1"),
    ((0.9, "cosin"), "unknown metric 'cosin'"),
    (("x",), "cosine threshold must be a number, got 'x'"),
])
def test_bad_thresholds_are_config_errors(args, msg):
    with pytest.raises(ConfigError, match=re.escape(msg)):
        Threshold(*args)


def test_policy_per_op_exact_beats_glob_and_ignore_globs():
    p = Policy.build(0.95, {"conv*": 0.9, "conv_1": 0.5}, ignore=["relu_*"])
    assert p.threshold_for(("conv_1", "")).value == 0.5
    assert p.threshold_for(("conv_2", "")).value == 0.9
    assert p.threshold_for(("add", "", "conv_3")).value == 0.9  # original names count
    assert p.threshold_for(("add", "")).value == 0.95
    assert p.is_ignored(("relu_4",)) and not p.is_ignored(("conv_1",))
    with pytest.raises(ConfigError, match="per_op: expected a mapping"):
        Policy.build(0.9, per_op=[("a", 0.5)])


def test_judge_finds_first_failure_in_graph_order_and_worst(result):
    v = result.judge(0.99)
    assert not v.passed and not bool(v)
    assert [f.row.op_name for f in v.failures] == ["op1", "op3"]
    assert v.first_failure.op_name == "op1"
    assert [f.row.op_name for f in v.worst(5)] == ["op3", "op1"]
    cos1 = result.row("op1").metrics.cosine
    cos3 = result.row("op3").metrics.cosine
    assert cos3 < cos1 < 0.99
    assert v.passing_threshold == math.floor(cos3 * 1e6) / 1e6
    assert result.judge(v.passing_threshold).passed
    assert v.judged == 5 and v.ignored == 0
    assert v.describe() == ("accuracy FAILED: 2 of 5 tensors fail cosine >= 0.99; first failure "
                            "in graph order: op1 (#1)")


def test_rejudge_under_other_policies_reads_no_tensor(result):
    assert result.judge(0.0).passed
    assert result.judge(0.99, ignore=["op1", "op3"]).passed
    assert result.judge(0.99, per_op={"op[13]": 0.0}).passed
    v = result.judge(0.99, per_op={"op3": 0.0})
    assert [f.row.op_name for f in v.failures] == ["op1"]
    assert v.passing_threshold is not None
    v = result.judge(0.05, metric="rel_l2")
    assert v.policy.default.describe() == "rel_l2 <= 0.05"
    assert {f.row.op_name for f in v.failures} == {"op1", "op3"}
    assert v.passing_threshold == max(f.would_pass for f in v.failures)


def test_nan_on_one_side_fails_at_any_threshold():
    actual, golden = _pair([0.0, 0.0], nan_op="op1")
    r = compare_dumps(actual, golden)
    v = r.judge(-1.0)
    assert [f.row.op_name for f in v.failures] == ["op1"]
    f = v.failures[0]
    assert f.would_pass is None and v.passing_threshold is None
    assert f.reason == ("NaN/Inf on one side only at 1 position (actual 1 NaN, 0 +Inf, 0 -Inf; "
                        "golden 0 NaN, 0 +Inf, 0 -Inf)")
    assert "nonfinite_mismatch" in r.row("op1").flags
    assert r.judge(0.99, ignore=["op1"]).passed


def test_all_zero_actual_fails_with_its_note():
    r = compare_dumps(DumpSet.from_arrays({"z": [np.zeros(8, np.float16)]}),
                      DumpSet.from_arrays({"z": [np.ones(8, np.float32)]}))
    v = r.judge(0.5)
    assert v.failures[0].reason == ("cosine is NaN (the actual tensor is all zero, the golden one "
                                    "is not: cosine undefined)")
    assert "actual_all_zero" in r.rows[0].flags


def _saved_before_exact(result):
    """``result`` as a compare.json written before integer/bool tensors were counted for exact
    equality: its bool rows are "not measurable" by KL, skipped."""
    d = result.to_dict()
    for row in d["rows"]:
        if row["metrics"]:
            row["metrics"].pop("exact", None)
            row["metrics"].pop("unequal", None)
    return CompareResult.from_dict(d)


def test_bool_tensors_are_judged_exactly_whatever_the_metric():
    """A bool mask was "not measurable" by KL, skipped: a flipped comparison passed under
    metric="kl" (a user trial); and 1 flip in many kept a cosine above the threshold."""
    r = compare_dumps(DumpSet.from_arrays({"b": [np.array([True, False])],
                                           "f": [np.ones(4, np.float16)]}),
                      DumpSet.from_arrays({"b": [np.array([True, False])],
                                           "f": [np.ones(4, np.float32)]}))
    v = r.judge(0.001, metric="kl")
    assert v.passed and v.skipped == 0 and v.judged == 2
    mask = np.ones(1000, bool)
    flipped = mask.copy()
    flipped[7] = False
    r = compare_dumps(DumpSet.from_arrays({"b": [flipped]}), DumpSet.from_arrays({"b": [mask]}))
    assert r.rows[0].metrics.cosine > 0.999
    for v in (r.judge(0.001, metric="kl"), r.judge(0.99)):
        assert v.failures[0].reason == ("1 of 1000 values differ (bool values are compared "
                                        "exactly: indices, ids, counts, masks; largest difference "
                                        "1.000000)")
    old = _saved_before_exact(compare_dumps(DumpSet.from_arrays({"b": [mask]}),
                                            DumpSet.from_arrays({"b": [mask]})))
    assert old.judge(0.001, metric="kl").skipped == 1  # a saved result is judged as written


def test_integer_indices_fail_on_one_differing_value_but_quantised_bytes_keep_the_metrics():
    """An ArgMax whose index flipped in one row of 64 kept cosine 0.998 and passed (a user
    trial); int8 data (a quantised model's) is judged by the metric, as floats are."""
    golden = np.arange(64, dtype=np.int64) % 3
    actual = golden.copy()
    actual[7] = 0 if golden[7] else 1
    r = compare_dumps(DumpSet.from_arrays({"argmax": [actual.astype(np.int32)]}),
                      DumpSet.from_arrays({"argmax": [golden]}))
    v = r.judge(0.95)
    assert r.rows[0].metrics.cosine > 0.95 and not v.passed
    assert v.failures[0].reason.startswith("1 of 64 values differ (int32 (golden int64) values are "
                                           "compared exactly")
    assert "exact_unequal" in r.rows[0].flags
    same = compare_dumps(DumpSet.from_arrays({"argmax": [golden]}),
                         DumpSet.from_arrays({"argmax": [golden]}))
    assert same.judge(0.999999, metric="kl").passed
    q = np.arange(-64, 64, dtype=np.int8)
    near = q.copy()
    near[3] += 1
    r8 = compare_dumps(DumpSet.from_arrays({"q": [near]}), DumpSet.from_arrays({"q": [q]}))
    assert not r8.rows[0].metrics.exact and r8.judge(0.99).passed


def test_tiny_golden_values_the_device_flushed_to_zero_fail():
    """A golden of 1e-30 values read as "both tensors are all zero" (msaccucmp's norm <= eps
    test) and passed, though the device output held zeros (a user trial)."""
    tiny = np.full(4, 1e-30, np.float32)
    r = compare_dumps(DumpSet.from_arrays({"t": [np.zeros(4, np.float16)]}),
                      DumpSet.from_arrays({"t": [tiny]}))
    v = r.judge(0.99)
    assert not v.passed and "actual_all_zero" in r.rows[0].flags
    both_tiny = compare_dumps(DumpSet.from_arrays({"t": [tiny * 1.001]}),
                              DumpSet.from_arrays({"t": [tiny]}))
    m = both_tiny.rows[0].metrics
    assert m.cosine == pytest.approx(1.0) and not m.all_zero and both_tiny.judge(0.99).passed


def test_a_one_element_tensor_whose_sign_flipped_fails():
    """cosine 1 "by definition" (msaccucmp) passed a scalar of +0.2 computed as -0.19995."""
    r = compare_dumps(DumpSet.from_arrays({"s": [np.array(-0.19995, np.float16)]}),
                      DumpSet.from_arrays({"s": [np.array(0.2, np.float32)]}))
    m = r.rows[0].metrics
    assert m.cosine == -1.0 and "one-element tensor: cosine tells only the sign" in m.notes[0]
    assert not r.judge(0.99).passed
    same = compare_dumps(DumpSet.from_arrays({"s": [np.array(0.19995, np.float16)]}),
                         DumpSet.from_arrays({"s": [np.array(0.2, np.float32)]}))
    assert same.rows[0].metrics.cosine == 1.0 and same.judge(0.99).passed


def test_a_verdict_that_judged_nothing_fails_naming_why():
    """Every compared tensor ignored, or not measurable by the metric: it passed, checking
    nothing (a user's ignore: ["*"] passed a model failing 139 of 140 tensors)."""
    r = compare_dumps(DumpSet.from_arrays({"b": [np.array([True, False])],
                                           "f": [np.full(4, 2, np.float16)]}),
                      DumpSet.from_arrays({"b": [np.array([True, False])],
                                           "f": [np.ones(4, np.float32)]}))
    skipped = _saved_before_exact(r).judge(0.001, metric="kl", ignore=["f"])
    assert not skipped.passed and skipped.judged == 0
    assert skipped.describe() == (
        "accuracy FAILED: no tensor was judged: of the compared tensors, 1 ignored by "
        "ignore=['f'] and 1 not measurable by kl; name only the ops to accept in ignore= "
        "(ignore: in a YAML suite, --ignore on the command line)")
    assert r.judge(0.001, metric="kl", ignore=["b"]).judged == 1  # f is judged
    bool_only = _saved_before_exact(r).judge(0.001, metric="kl", ignore=["f"]).problem
    assert bool_only.startswith("no tensor was judged")
    assert r.judge(0.001, metric="kl", ignore=["f"]).judged == 1  # b, judged exactly
    everything = r.judge(0.0, ignore=["*"])
    assert not everything.passed and everything.ignored == 2
    assert everything.problem.endswith(
        "; name only the ops to accept in ignore= (ignore: in a YAML suite, --ignore on the "
        "command line)")


def test_json_round_trip_preserves_rows_and_verdicts(result, tmp_path):
    text = result.to_json()
    assert "NaN" not in text and "Infinity" not in text  # strict JSON
    back = CompareResult.from_json(text)
    assert back.rows == result.rows
    assert back.coverage == result.coverage
    assert back.judge(0.99).failures == result.judge(0.99).failures
    path = tmp_path / "r.json"
    path.write_text(text)
    assert CompareResult.load(path).rows == result.rows


def test_json_with_nan_and_inf_values_round_trips():
    r = compare_dumps(DumpSet.from_arrays({"z": [np.array([1.0, np.inf], np.float32)]}),
                      DumpSet.from_arrays({"z": [np.array([0.0, 0.0], np.float32)]}))
    back = CompareResult.from_json(r.to_json())
    m = back.rows[0].metrics
    assert math.isnan(m.cosine) and m.rel_l2 == math.inf
    assert not differences(back.rows, r.rows)


@pytest.mark.parametrize("text,problem", [
    ("{", "not valid JSON"),
    ('{"a": 1}', "not a saved compare result (missing format tag)"),
    ('{"format": "pytest-ascend-accuracy/compare-result", "version": 99}',
     "compare result version 99 is not supported (expected 6, or an older 1, 2, 3, 4, 5)"),
    ('{"format": "pytest-ascend-accuracy/compare-result", "version": 1, "rows": [{}]}',
     "malformed compare result"),
])
def test_bad_saved_results_name_the_file(text, problem, tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(text)
    with pytest.raises(DumpFormatError, match=re.escape(problem)) as exc:
        CompareResult.load(p)
    assert str(exc.value).startswith(f"{p}: ")


def test_coverage_describe():
    c = Coverage(10, compared=("a", "b"), fused=("c",), unmatched_golden=tuple("defghij"),
                 unmatched_actual=("TransData_1",), npu_only=("TransData_1",))
    assert c.matched == 3
    assert c.describe() == ("10 golden ops: 2 compared, 1 inside fused ops, 7 unmatched "
                            "(d, e, f, g, h, +2 more); 1 actual op unmatched (TransData_1)")


def test_row_without_metrics_fails_with_its_reason():
    row = TensorCompare(order=0, op_name="x", reason="shape (2,) vs golden (3,): 2 vs 3 elements, "
                        "cannot compare")
    r = CompareResult(rows=(row,), coverage=Coverage(1))
    v = r.judge(0.0)
    assert v.failures[0].reason.endswith("cannot compare") and v.passing_threshold is None


def test_nothing_compared_is_a_failure_not_a_vacuous_pass():
    from pytest_ascend_accuracy.report.failure_text import failure_text
    r = compare_dumps(DumpSet.from_arrays({"npu_a": [np.ones(2, np.float16)]}),
                      DumpSet.from_arrays({"onnx_a": [np.ones(2, np.float32)],
                                           "onnx_b": [np.ones(2, np.float32)]}))
    v = r.judge(0.0)
    assert not v.passed and v.first_failure is None and v.passing_threshold is None
    assert v.describe() == ("accuracy FAILED: no tensor was compared: none of the 1 actual op "
                            "matches one of the 2 golden ops")
    assert failure_text(r, v) == (
        "accuracy FAILED: no tensor was compared: none of the 1 actual op matches one of the 2 "
        "golden ops\n\n"
        "coverage: 2 golden ops: 0 compared, 0 inside fused ops, 2 unmatched (onnx_a, onnx_b); "
        "1 actual op unmatched (npu_a)\n"
        "full report: not written (pass csv_path=...)\n"
        "next step: check that both dumps come from the same model and run; read the device "
        "dump with load_dump(DIR, om_json=\"model.json\") (the om json of atc --mode=1; from "
        "pytest_ascend_accuracy import load_dump) so fused ops find their original names, and "
        "pass that to assert_accuracy, or map op names with assert_accuracy(..., "
        "mapping={DUMP_OP: GOLDEN_OP})")  # (pasted: tests/test_failure_text_advice_pasted.py)
    assert r.judge(0.0, ignore=["*"]).passed is False  # ignoring cannot make "nothing" pass
    mapped = compare_dumps(DumpSet.from_arrays({"npu_a": [np.ones(2, np.float16)]}),
                           DumpSet.from_arrays({"onnx_a": [np.ones(2, np.float32)]}),
                           mapping={"npu_a": "onnx_a"})
    assert mapped.judge(0.99).passed


def test_a_nan_on_both_sides_is_not_called_one_sided():
    from pytest_ascend_accuracy.compare.result import nonfinite_kind
    from pytest_ascend_accuracy.compare.metrics import compute_metrics

    x = np.array([1.0, np.nan, 3.0], np.float32)
    both = compute_metrics(x, x.copy())
    assert not both.mismatch and both.matched_nan == 1  # the same position: equal
    elsewhere = compute_metrics(x, np.array([np.nan, 2.0, 3.0], np.float32))
    assert elsewhere.mismatch == 2 and nonfinite_kind(elsewhere) == "NaN/Inf on one side only"
    golden_only = compute_metrics(np.array([1.0, 2.0, 3.0], np.float32), x)
    assert nonfinite_kind(golden_only) == "NaN in the golden only"
    actual_only = compute_metrics(x, np.array([1.0, 2.0, 3.0], np.float32))
    assert nonfinite_kind(actual_only) == "NaN/Inf on one side only"


def test_the_first_failure_is_the_first_compared_one_the_verdict_line_names():
    """A not-compared op before the first compared failure: the verdict line named the compared
    one, the first-failure block (Verdict.first) the not-compared one (review helper)."""
    import numpy as np

    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.dump.model import DumpSet

    golden = DumpSet.from_arrays({"Conv_2": [np.ones(100, np.float32)]})
    actual = DumpSet.from_arrays({"Mul_1": [np.ones(100, np.float32)],
                                  "Conv_2": [-np.ones(100, np.float32)]})
    verdict = compare_dumps(actual, golden).judge(0.99)
    assert "first failure in graph order: Conv_2" in verdict.describe()
    assert verdict.first.row.op_name == verdict.first_failure.op_name == "Conv_2"
    good = DumpSet.from_arrays({"Mul_1": [np.ones(100, np.float32)],
                                "Conv_2": [np.ones(100, np.float32)]})
    only_hidden = compare_dumps(good, golden).judge(0.99)
    assert only_hidden.first.row.op_name == "Mul_1"  # nothing compared failed: the hidden one


def test_the_headline_names_the_scale_guard_when_it_failed_a_tensor():
    """Both tensors passed cosine >= 0.05 and failed on scale; the headline said only "fail
    cosine >= 0.05" (user review)."""
    y = np.linspace(1, 2, 16, dtype=np.float32)
    r = compare_dumps(DumpSet.from_arrays({"a": [(y * 3).astype(np.float16)]}),
                      DumpSet.from_arrays({"a": [y]}))
    v = r.judge(0.05, scale_tolerance=2.0)
    assert v.describe().startswith(
        "accuracy FAILED: 1 of 1 tensor fail cosine >= 0.05 or the scale guard (L2 norm within "
        "0.5-2x the golden's); first failure in graph order: a")
    assert "scale guard" not in r.judge(0.99999).describe()  # passes: the verdict line as was


def test_a_misspelled_mapping_name_in_the_library_names_the_closest_ops():
    """compare_dumps(mapping={"LeakyRelu_999": ...}) said only that the op is not in the dump;
    the CLI named the closest (user review): both name them now, from one check."""
    actual = DumpSet.from_arrays({"npu_norm": [np.ones(2, np.float16)]})
    golden = DumpSet.from_arrays({"onnx_norm": [np.ones(2, np.float32)]})
    with pytest.raises(ConfigError, match=r"actual op 'npu_nrom' is not in the actual dump; "
                                          r"closest: 'npu_norm'"):
        compare_dumps(actual, golden, mapping={"npu_nrom": "onnx_norm"})
    with pytest.raises(ConfigError, match=r"golden op 'onnx_nrom' \(mapped from 'npu_norm'\) is "
                                          r"not in the golden dump; closest: 'onnx_norm'"):
        compare_dumps(actual, golden, mapping={"npu_norm": "onnx_nrom"})


@pytest.mark.parametrize("kwargs,msg", [
    ({"ignore": ["Op1"]}, "judge: ignore entry 'Op1' is not an op of the dumps; "
                          "closest: 'op1'"),
    ({"per_op": {"opp3": 0.0}}, "judge: per_op entry 'opp3' is not an op of the dumps; "
                                "closest: 'op3'"),
    ({"per_op": {"conv*": 0.0}}, "judge: per_op entry 'conv*' (a glob) matches no op of the "
                                 "dumps; their ops: 'op0', 'op1', 'op2'"),
])
def test_rejudging_with_a_name_no_row_has_is_an_error_naming_the_closest(result, kwargs, msg):
    """README's ``result.judge(0.99, per_op={...})``: a misspelled entry judged nothing and the
    verdict read as if it had been applied (op3 fails 0.99; per_op={'opp3': 0.0} kept it failing
    without a word)."""
    with pytest.raises(ConfigError) as exc:
        result.judge(0.99, **kwargs)
    assert str(exc.value).startswith(msg)
    assert result.judge(0.99, per_op={"op3": 0.0}, ignore=["op1"]).passed  # the real names work
    # a Policy is the caller's, taken as checked (the plugin checks against the dumps first)
    assert result.judge(Policy.build(0.99, ignore=["Op1"])).ignored == 0

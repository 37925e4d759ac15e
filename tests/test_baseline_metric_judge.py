"""The baseline judges the rel_l2 rise of the lines a threshold judges by rel_l2
(``baseline.metrics``), by ``max_drop`` too: cosine alone let a rel_l2 go from 0.001 to 0.04
(cosine ~= 1 - rel_l2**2 / 2 dropped by 0.0008, within 0.002). Metrics it does not judge are
named, for the plugin's warning."""
import math

from pytest_ascend_accuracy.baseline.check import PASSED, REGRESSED, check_baseline, judge_ops
from pytest_ascend_accuracy.baseline.file import OpBaseline, read_baseline
from pytest_ascend_accuracy.baseline.metrics import JUDGED, rel_l2_lines, unjudged_metrics
from pytest_ascend_accuracy.compare.thresholds import Policy
from test_baseline_helpers import HEADER, SPEC, make_result


def _line(op, cosine, rel):
    return OpBaseline(op, "output:0", cosine, rel, 0.01, 0, 0)


BASE = [_line("a", 1.0, 0.001), _line("b", 1.0, 0.001)]
NOW = [_line("a", 0.9992, 0.04), _line("b", 0.9992, 0.04)]


def test_only_the_lines_named_have_their_rel_l2_judged():
    assert judge_ops(BASE, NOW, max_drop=0.002).regressions == ()  # cosine alone: within
    j = judge_ops(BASE, NOW, max_drop=0.002, max_rel_l2_rise=0.002,
                  rel_l2_lines={("b", "output:0")})
    assert [c.line() for c in j.regressions] == [
        "b: rel_l2 1.000e-03 -> 4.000e-02 (rise 3.900e-02 > 0.002)"]
    every = judge_ops(BASE, NOW, max_drop=0.002, max_rel_l2_rise=0.002)  # None: every line
    assert [c.label for c in every.regressions] == ["a", "b"]


def test_a_rise_of_exactly_max_drop_passes_and_a_fall_beyond_it_is_improved():
    base, cur = [_line("a", 1.0, 0.001)], [_line("a", 1.0, 0.003)]
    keys = {("a", "output:0")}
    assert judge_ops(base, cur, max_drop=0.002, max_rel_l2_rise=0.002,
                     rel_l2_lines=keys).regressions == ()
    j = judge_ops(NOW[:1], BASE[:1], max_drop=0.002, max_rel_l2_rise=0.002, rel_l2_lines=keys)
    assert (j.regressions, j.improved) == ((), ("a",))
    assert judge_ops(NOW[:1], BASE[:1], max_drop=0.002).improved == ()  # cosine rose 0.0008
    nan = judge_ops([_line("a", 1.0, math.nan)], cur, max_drop=0.002, max_rel_l2_rise=0.002,
                    rel_l2_lines=keys)  # nothing recorded to rise from
    assert nan.regressions == () and nan.improved == ()


def test_the_lines_a_policy_judges_by_rel_l2():
    result = make_result()
    rel = Policy.build(0.05, metric="rel_l2")
    assert set(rel_l2_lines(result, rel)) == {(op, "output:0") for op in
                                              ("conv1", "relu1", "fc/MatMul", "softmax")}
    mixed = Policy.build(0.99, {"relu1": {"rel_l2": 0.05}, "fc/*": {"rel_l2": 0.05}},
                         ignore=["fc/MatMul"])
    assert set(rel_l2_lines(result, mixed)) == {("relu1", "output:0")}
    assert not rel_l2_lines(result, Policy.build(0.99))
    per_cosine = Policy.build(0.05, {"conv1": {"cosine": 0.99}}, metric="rel_l2")
    assert ("conv1", "output:0") not in rel_l2_lines(result, per_cosine)


def test_the_metrics_a_baseline_does_not_judge():
    assert JUDGED == ("cosine", "rel_l2")
    assert unjudged_metrics(Policy.build(0.99)) == ()
    assert unjudged_metrics(Policy.build(0.05, metric="rel_l2")) == ()
    assert unjudged_metrics(Policy.build(0.1, {"x": {"kl": 0.5}, "y": {"cosine": 0.9}},
                                         metric="max_abs")) == ("max_abs", "kl")
    for metric in ("mean_abs", "rmse", "max_rel", "mean_rel", "acc_rel", "kl"):
        assert unjudged_metrics(Policy.build(0.5, metric=metric)) == (metric,)


def test_check_baseline_judges_the_rel_l2_lines_and_says_so_in_its_headline(tmp_path):
    path = tmp_path / "default.yaml"
    check_baseline(make_result(), path, header=HEADER, inputs=SPEC)  # missing: written
    assert read_baseline(path).by_key()[("relu1", "output:0")].rel_l2 == 0.0
    worse = make_result(noise={"relu1": 0.04})  # rel_l2 0.035, cosine drop ~0.0006
    out = check_baseline(worse, path, header=HEADER, inputs=SPEC, max_drop=0.002)
    assert out.status == PASSED, out.message
    out = check_baseline(worse, path, header=HEADER, inputs=SPEC, max_drop=0.002,
                         max_rel_l2_rise=0.002, rel_l2_lines={("conv1", "output:0")})
    assert out.status == PASSED, out.message  # relu1 is judged by cosine alone
    out = check_baseline(worse, path, header=HEADER, inputs=SPEC, max_drop=0.002,
                         max_rel_l2_rise=0.002, rel_l2_lines={("relu1", "output:0")})
    assert out.status == REGRESSED
    lines = out.message.splitlines()
    assert "(cosine drop > 0.002, rel_l2 rise > 0.002, " in lines[0]
    assert lines[1] == "  relu1: rel_l2 0.000e+00 -> 3.514e-02 (rise 3.514e-02 > 0.002)"
    assert [c.metric for c in out.regressions] == ["rel_l2"]

"""Review D2 fixes: a multi-output fused op's output whose golden is missing is not compared
(it passed silently), the not-compared hint asks for an om json only when the comparison had
none, caller-neutral advice (NOTHING_JUDGED, operands not checked), one helper checking the
per-op / ignore names of the compared dumps."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from pytest_ascend_accuracy import cli
from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.fp16_range import RangeFindings
from pytest_ascend_accuracy.compare.result import NOT_COMPARED_FLAG, NOTHING_JUDGED
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.report.failure_text import (default_hint, failure_text,
                                                        no_overflow_seen)
from pytest_ascend_accuracy.report.hints import hint_for

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 8)).astype(np.float32)
Y = RNG.standard_normal((4, 8)).astype(np.float32)


def _fused(*origins, values=None):
    """Fused op ``A_1B_2C_3`` whose output k has origin ``origins[k]`` (a golden op name)."""
    values = values or [X] * len(origins)
    return OpRecord("A_1B_2C_3", "FusedOp", outputs=tuple(
        TensorRef.from_array(v, "output", k, origin=(o, 0))
        for k, (o, v) in enumerate(zip(origins, values))),
        original_names=("A_1", "B_2", "C_3"), order=0)


GOLDEN = DumpSet.from_arrays({"A_1": [X], "B_2": [X], "D_4": [Y]})  # C_3's golden is missing


# -- 1. an output of a compared fused op whose golden is missing ------------------------------
def test_a_lacking_output_of_a_compared_fused_op_fails_as_not_compared():
    """Output 0 (origin B_2) compares; output 1 (origin C_3, absent from the golden) holds a
    wrong value: it had no row at all and the check passed."""
    r = compare_dumps(DumpSet([_fused("B_2", "C_3", values=[X, -Y])], kind="memory"), GOLDEN)
    assert [(row.slot, row.flags) for row in r.rows] == [
        ("output:0", ("fused",)), ("output:1", ("no_golden", NOT_COMPARED_FLAG))]
    v = r.judge(0.95)
    assert not v.passed and not v.problem
    assert [f.reason for f in v.failures] == [
        "not compared: the golden has no tensor for C_3 output 0, the fused op's output (its "
        "other original ops' outputs are computed inside the fusion: not the same tensor)"]
    assert v.describe().startswith("accuracy FAILED: 1 op not compared (A_1B_2C_3: no golden")
    assert not r.judge(0.95, ignore=["A_1B_2C_3"]).failures  # accepted the usual way


def test_lacking_outputs_keep_their_place_and_name_their_op_once():
    r = compare_dumps(DumpSet([_fused("C_3", "B_2", "Gone_9")], kind="memory"), GOLDEN)
    assert [(row.slot, NOT_COMPARED_FLAG in row.flags) for row in r.rows] == [
        ("output:0", True), ("output:1", False), ("output:2", True)]
    v = r.judge(0.95)
    assert len(v.failures) == 2
    assert "1 op not compared (A_1B_2C_3: no golden" in v.describe()
    assert default_hint(v, result=r).startswith("the golden holds no tensor for A_1B_2C_3: ")
    assert hint_for(v, SimpleNamespace(is_high_precision=False)).kind == "ignore"


def test_a_fused_op_whose_outputs_all_lack_keeps_one_row():
    r = compare_dumps(DumpSet([_fused("C_3", "Gone_9")], kind="memory"), GOLDEN)
    assert [(row.slot, row.flags) for row in r.rows] == [
        ("output:0", ("no_golden", NOT_COMPARED_FLAG))]
    assert r.rows[0].reason.startswith("the golden has no tensor for C_3 output 0, Gone_9 output 0")


# -- 2. the not-compared hint and the om json ----------------------------------------------
def _not_compared_only(meta):
    other = OpRecord("D_4", "Add", outputs=(TensorRef.from_array(Y, "output", 0),), order=1)
    actual = DumpSet([_fused("C_3"), other], kind="memory", meta=meta)
    r = compare_dumps(actual, DumpSet.from_arrays({"A_1": [X], "D_4": [Y]}))
    return r, r.judge(0.95)


def test_the_not_compared_hint_asks_for_the_om_json_only_when_the_compare_had_none():
    r, v = _not_compared_only({"om_json": "m.json"})
    hint = default_hint(v, result=r)
    assert hint == ("the golden holds no tensor for A_1B_2C_3: check that the golden dump has "
                    "their outputs (a file per op output); or accept them unchecked with "
                    "ignore= / --ignore NAME")
    assert f"next step: {hint}" in failure_text(r, v)
    r, v = _not_compared_only({})
    om_json = 'read the device dump with load_dump(DIR, om_json="model.json")'
    assert om_json in default_hint(v, result=r)
    assert om_json in default_hint(v)  # no result at hand: as before


def test_cli_compare_with_an_om_json_does_not_ask_for_it(tmp_path, monkeypatch, capsys):
    from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
    from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter
    from pytest_ascend_accuracy.dump.om_json import OmOp, write_om_json

    monkeypatch.chdir(tmp_path)
    c = X * 2
    y = np.maximum(c, 0)
    z = y + 1
    with NpyDumpWriter("golden") as w:  # Relu_1's golden file is gone
        w.write_op("Conv_0", outputs=[c])
        w.write_op("Add_2", outputs=[z])
    with AscendDumpWriter("actual") as w:
        w.write_op("Conv2D", "Conv_0Relu_1", outputs=[y.astype(np.float16)],
                   output_origins=[("Relu_1", 0)])
        w.write_op("Add", "Add_2", outputs=[z.astype(np.float16)], output_origins=[("Add_2", 0)])
    write_om_json("m.json", "m", [
        OmOp("Conv_0Relu_1", "Conv2D", 1, ("Conv_0", "Relu_1"), (("Relu_1", 0),)),
        OmOp("Add_2", "Add", 2, ("Add_2",), (("Add_2", 0),), inputs=("Conv_0Relu_1:0",))])
    assert cli.main(["compare", "actual", "golden", "--om-json", "m.json",
                     "--html", "r.html"]) == 1
    out = capsys.readouterr().out
    assert "next step: the golden holds no tensor for Conv_0Relu_1: " in out, out
    assert "--om-json" not in out.rpartition("next step:")[2], out
    assert "pass the om json" not in (tmp_path / "r.html").read_text()


# -- 3. NOTHING_JUDGED advice --------------------------------------------------------------
def test_nothing_judged_advice_names_the_setting_for_both_callers():
    r = compare_dumps(DumpSet.from_arrays({"b": [np.array([True, False])],
                                           "f": [np.full(4, 2, np.float16)]}),
                      DumpSet.from_arrays({"b": [np.array([True, False])],
                                           "f": [np.ones(4, np.float32)]}))
    ignored = r.judge(0.0, ignore=["*"])
    assert ignored.problem.startswith(NOTHING_JUDGED)
    assert ignored.problem.endswith(
        "; name only the ops to accept in ignore= (ignore: in a YAML suite, --ignore on the "
        "command line)")
    assert default_hint(ignored) == (
        "name only the ops to accept in ignore= (ignore: in a YAML suite, --ignore on the "
        "command line)")
    bools = compare_dumps(DumpSet.from_arrays({"b": [np.array([True, False])]}),
                          DumpSet.from_arrays({"b": [np.array([True, False])]}))
    from test_result import _saved_before_exact

    # KL does not measure bool tensors: a result saved before bools were judged exactly
    skipped = _saved_before_exact(bools).judge(0.001, metric="kl").problem
    assert skipped.startswith(NOTHING_JUDGED)
    assert skipped.endswith('; judge them by a metric that applies, e.g. metric="cosine" '
                            "(metric: cosine in a YAML suite, --metric cosine on the command line)")


# -- 4. operands not checked ---------------------------------------------------------------
def test_operands_not_checked_text_names_no_pytest_option():
    unchecked = RangeFindings()
    assert unchecked.checked == 0
    assert no_overflow_seen(unchecked) == (
        "no float16 overflow in the failing values; their golden operands were not checked "
        "(the golden holds no inputs of the failing ops: a golden dumped with its operators' "
        "inputs shows whether one leaves the float16 range)")
    checked = RangeFindings()
    checked.checked = 2
    assert no_overflow_seen(checked) == "no float16 overflow seen"


# -- 5. one helper for the names of per_op / ignore -----------------------------------------
def _dumps(model_name=None):
    a = DumpSet.from_arrays({"Conv_0": [X]}, original_names={"Conv_0": ["conv.0"]})
    g = DumpSet.from_arrays({"Conv_0": [X]})
    if model_name:
        g = DumpSet(list(g.ops), kind=g.kind, model_name=model_name)
    return a, g


def test_one_helper_checks_the_setting_names_of_both_callers(monkeypatch):
    from pytest_ascend_accuracy.graph import op_catalogue
    from pytest_ascend_accuracy.plugin.setup_checks import check_op_names
    from pytest_ascend_accuracy.report.assertion import assert_accuracy

    calls = []
    real = op_catalogue.check_dump_setting_names
    monkeypatch.setattr(op_catalogue, "check_dump_setting_names",
                        lambda *a, **k: (calls.append(a[3]), real(*a, **k))[1])
    a, g = _dumps()
    with pytest.raises(ConfigError) as exc:
        assert_accuracy(a, g, ignore=["conv_*"])
    assert str(exc.value) == ("assert_accuracy: ignore entry 'conv_*' is not an op of the dumps; "
                              "closest: 'conv.0', 'Conv_0'")
    spec = SimpleNamespace(per_op=(("Conv_9", 0.9),), ignore=())
    with pytest.raises(ConfigError) as exc:
        check_op_names(spec, (g, a), "t.py::test")
    assert str(exc.value) == ("t.py::test: per_op entry 'Conv_9' is not an op of model "
                              "'model'; closest: 'Conv_0', 'conv.0'")
    a, g = _dumps("mlp")
    with pytest.raises(ConfigError, match="not an op of model 'mlp'"):
        check_op_names(SimpleNamespace(per_op=(), ignore=("x",)), (g, a), "t")
    assert calls == ["assert_accuracy", "t.py::test", "t"]
    assert_accuracy(a, g, per_op={"conv.0": 0.9})  # an original name is a name
    # the plugin checked them already: assert_accuracy can leave them be
    assert_accuracy(a, g, per_op={"nope": 0.9}, check_names=False)
    assert calls == ["assert_accuracy", "t.py::test", "t", "assert_accuracy"]

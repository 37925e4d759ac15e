"""A stored golden written by an older golden format is never a silent false verdict: a golden
of format 6 (or without golden.json) of a model with an If the input values decide has no
tensor of that If (format 7 keeps it), so the device's If was "not compared" with advice to
ignore it. It is refused naming its format, the change and --accuracy-regen, which pasted
rewrites it; the CLI says so beside its verdict; a format difference that cannot matter (no
If kept) is used quietly. The old layouts are built as the version before format 7 wrote them
(checked against a run of b55ac2a^): the If's file missing, later timestamps one lower."""
import json
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper as h, numpy_helper as nh  # noqa: E402

from pytest_ascend_accuracy.core.regen import Regen  # noqa: E402
from pytest_ascend_accuracy.golden import stored_format  # noqa: E402
from pytest_ascend_accuracy.golden import stored  # noqa: E402
from pytest_ascend_accuracy.golden.stored import USED, GoldenPolicy, store_golden  # noqa: E402
from pytest_ascend_accuracy.golden.stored_record import RECORD_FILE, identity_of  # noqa: E402

X = {"x": np.array([1, -2, 3], np.float32)}
IF = "pick"


def _vi(name):
    return h.make_tensor_value_info(name, TensorProto.FLOAT, [3])


def if_by_value():
    """``x + 1`` if ``max(x) > 0`` else ``x - 1`` (an If decided by the input values), squared."""
    then_g = h.make_graph([h.make_node("Add", ["x", "one"], ["up"])], "then", [], [_vi("up")])
    else_g = h.make_graph([h.make_node("Sub", ["x", "one"], ["down"])], "else", [], [_vi("down")])
    nodes = [h.make_node("ReduceMax", ["x"], ["m"], keepdims=0, name="max"),
             h.make_node("Greater", ["m", "zero"], ["cond"], name="positive"),
             h.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g, name=IF),
             h.make_node("Mul", ["y", "y"], ["z"], name="square")]
    g = h.make_graph(nodes, "if_by_value", [_vi("x")], [_vi("z")],
                     initializer=[nh.from_array(np.array(0, np.float32), "zero"),
                                  nh.from_array(np.array(1, np.float32), "one")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def old_layout(golden: Path, *, record: bool = True) -> None:
    """Turn a format-7 golden of ``if_by_value`` into what format 6 wrote: no file of the If,
    the ops after it one timestamp lower, ``golden_format`` 6 in a ``record_version`` 1
    (or, ``record=False``, no
    golden.json: a golden of a version before the record)."""
    files = sorted(golden.glob("*.npy"), key=lambda p: int(p.name.split(".")[-2]))
    dropped = [p for p in files if p.name.startswith(f"{IF}.")]
    assert len(dropped) == 1
    renamed = {}
    after = False
    for p in files:
        if p in dropped:
            p.unlink()
            after = True
        elif after:
            stem, idx, ts, ext = p.name.rsplit(".", 3)
            new = f"{stem}.{idx}.{int(ts) - 1}.{ext}"
            p.rename(golden / new)
            renamed[p.name] = new
    rec_file = golden / RECORD_FILE
    if not record:
        rec_file.unlink()
        return
    rec = json.loads(rec_file.read_text())
    assert rec["golden_format"] == 8
    rec["golden_format"] = 6
    rec["tensors"] = {renamed.get(k, k): v for k, v in rec["tensors"].items()
                      if k != dropped[0].name}
    rec["record_version"] = 1  # (format 6's record: no digests)
    del rec["digests"]
    rec_file.write_text(json.dumps(rec, indent=1) + "\n")


@pytest.fixture
def cache(tmp_path):
    from pytest_ascend_accuracy.core.cache import Cache

    return Cache(tmp_path / "cache")


@pytest.fixture
def if_golden(tmp_path, cache):
    """(golden path, compute, identity) of ``if_by_value`` on ``X``, stored in format 7."""
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump

    model = tmp_path / "if_by_value.onnx"
    model.write_bytes(if_by_value().SerializeToString())

    def compute():
        return golden_dump(str(model), X, cache=cache)

    path = store_golden(tmp_path / "golden", compute())
    return path, compute, identity_of(str(model), X)


# -------------------------------------------------------------------------- the rule
def test_every_golden_format_bump_is_decided_for_stored_goldens():
    from pytest_ascend_accuracy.golden.onnxruntime_golden import GOLDEN_FORMAT

    # a bump changes what a stored golden holds: say in golden/stored_format.py (and
    # docs/formats.md 7.1) whether an older one is still right, and for which models
    assert GOLDEN_FORMAT == stored_format.DECIDED_FOR


def test_a_format_6_golden_without_the_kept_if_is_stale():
    stale = stored_format.stale_ifs({"golden_format": 6}, ["max", "positive", "pick_then_Add_0",
                                                           "square"], if_by_value(), X)
    assert stale.ifs == (IF,) and not stale.error
    assert stale.problem() == (
        "this stored golden was written in golden format 6 (its golden.json), before golden "
        "format 8, which keeps every If the device runs as one operator (one decided by the "
        "input values, or reading the shape of one) under its own name, over its inlined "
        "branch, as the device dumps it; this version writes format 8. "
        "This golden has no tensor of If 'pick', so the device's 'pick' would be reported not "
        "compared (or, ignored, left unjudged)")


@pytest.mark.parametrize("record, says", [
    (None, "no recorded golden format (it has no golden.json: written by a version before "
           "golden format 6, or by another tool)"),
    ({"record_version": 1}, "no recorded golden format (its golden.json has no golden_format)"),
    ({"golden_format": True}, "no recorded golden format (its golden.json has no golden_format)"),
])
def test_a_golden_without_a_recorded_format_is_told_by_what_it_holds(record, says):
    stale = stored_format.stale_ifs(record, ["max", "positive", "square"], if_by_value(), X)
    assert stale.ifs == (IF,) and stale.written == says
    # msit's goldens hold every If of the main graph under its name (sanitized): nothing lacks
    assert stored_format.stale_ifs(record, ["max", "pick", "square"], if_by_value(), X) is None


def test_a_difference_that_cannot_matter_is_none():
    from pytest_ascend_accuracy.testing import models

    assert stored_format.stale_ifs({"golden_format": 8}, [], if_by_value(), X) is None
    # format 7 kept an If decided by the input values: a golden holding it lacks nothing
    assert stored_format.stale_ifs({"golden_format": 7}, ["pick"], if_by_value(), X) is None
    assert stored_format.stale_ifs({"golden_format": 6}, [], models.passing_mlp(), {}) is None
    # an If on a shape is inlined by every format (no If kept): nothing lacks
    static = models.if_model()
    inputs = {"x": np.ones((1, 4), np.float32)}
    assert stored_format.stale_ifs({"golden_format": 6}, ["shape"], static, inputs) is None


def test_what_cannot_be_told_is_said_and_a_users_error_named_as_it_is(monkeypatch):
    from pytest_ascend_accuracy.errors import ConfigError
    from pytest_ascend_accuracy.graph import prepare

    with pytest.raises(ConfigError, match="no model input named 'y'"):
        stored_format.stale_ifs({"golden_format": 6}, [], if_by_value(), {"y": X["x"]})

    def broken(*a, **k):
        raise RuntimeError("onnxruntime fell over")

    monkeypatch.setattr(prepare, "prepare_model", broken)
    stale = stored_format.stale_ifs({"golden_format": 6}, [], if_by_value(), X)
    assert stale.problem().endswith(
        "Whether that changes what this model's golden holds could not be told (RuntimeError: "
        "onnxruntime fell over), so comparing against it could blame or skip an If")


def test_a_newer_format_is_named_with_the_version_that_wrote_it():
    assert stored_format.newer_format({"golden_format": 8}) is None
    assert stored_format.newer_format(None) is None
    said = stored_format.newer_format({"golden_format": 9,
                                       "written_by": "pytest-ascend-accuracy 9"})
    assert said.startswith("written in golden format 9 by pytest-ascend-accuracy 9, newer than "
                           "this version's 8")


# -------------------------------------------------------------------------- the policy
def test_the_policy_refuses_then_regen_rewrites_in_the_current_format(if_golden):
    path, compute, identity = if_golden
    old_layout(path)
    with pytest.raises(stored.StoredGoldenOutdated) as refused:
        GoldenPolicy().obtain(path, compute, identity)
    text = str(refused.value)
    assert "golden format 6 (its golden.json)" in text and "no tensor of If 'pick'" in text
    assert ("\nFix: run the test again with --accuracy-regen to rewrite it in golden format 8"
            in text)
    assert json.loads((path / RECORD_FILE).read_text())["golden_format"] == 6  # not rewritten
    notes = []
    with pytest.raises(stored.StoredGoldenOutdated, match="Rewrote it in golden format 8"):
        GoldenPolicy(Regen.FAILING, on_recovery=lambda p, n: notes.append(n)).obtain(
            path, compute, identity)
    assert notes == ["rewritten (--accuracy-regen: written in an older golden format)"]
    assert json.loads((path / RECORD_FILE).read_text())["golden_format"] == 8
    golden, status = GoldenPolicy().obtain(path, compute, identity)
    assert status == USED and IF in golden


def test_a_golden_without_a_record_is_refused_too(if_golden):
    path, compute, identity = if_golden
    old_layout(path, record=False)
    with pytest.raises(stored.StoredGoldenOutdated, match="it has no golden.json"):
        GoldenPolicy().obtain(path, compute, identity)


def test_a_format_6_golden_of_a_model_without_an_if_is_used_quietly(tmp_path, cache, recwarn):
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.testing import models

    model = models.passing_mlp()
    inputs = make_inputs(model)
    path = store_golden(tmp_path / "golden", golden_dump(model, inputs, cache=cache))
    rec = json.loads((path / RECORD_FILE).read_text())
    (path / RECORD_FILE).write_text(json.dumps(dict(rec, golden_format=6)))
    _, status = GoldenPolicy().obtain(path, lambda: None, identity_of(model, inputs))
    assert status == USED and not recwarn.list


def test_a_newer_format_is_warned_about(if_golden):
    path, compute, identity = if_golden
    rec = json.loads((path / RECORD_FILE).read_text())
    (path / RECORD_FILE).write_text(json.dumps(dict(rec, golden_format=99)))
    with pytest.warns(UserWarning, match="written in golden format 99 by pytest-ascend-accuracy"):
        assert GoldenPolicy().obtain(path, compute, identity)[1] == USED


# -------------------------------------------------------------------------- as a user runs it
TEST = """
import numpy as np
from pytest_ascend_accuracy import accuracy

@accuracy(threshold=0.99)
def test_if(ascend_model, golden_dump, check_accuracy):
    inputs = {"x": np.array([1, -2, 3], np.float32)}
    golden = golden_dump("models/if_by_value.onnx", inputs, path="golden/if")
    check_accuracy(ascend_model("models/if_by_value.onnx").run(inputs), golden)
"""


def _compare(actual, golden, saved, capsys):
    from pytest_ascend_accuracy.cli import app as cli

    capsys.readouterr()  # what the pytester runs printed
    code = cli.main(["compare", actual, str(golden), "--json", str(saved)])
    return code, capsys.readouterr().out


def test_the_printed_fix_pasted_rewrites_the_golden_and_the_test_passes(
        pytester, tmp_path, cache, capsys):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.cli import app as cli

    pytester.mkdir("models")
    model = pytester.path / "models" / "if_by_value.onnx"
    model.write_bytes(if_by_value().SerializeToString())
    pytester.makepyfile(test_if=TEST)
    pytester.runpytest().assert_outcomes(failed=1)  # written (missing), format 8
    golden = pytester.path / "golden" / "if"
    old_layout(golden)

    refused = pytester.runpytest()
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines([
        "*golden/if: this stored golden was written in golden format 6 (its golden.json), before "
        "golden format 8, which keeps every If the device runs as one operator*"
        "This golden has no tensor of If 'pick'*",
        "Fix: run the test again with --accuracy-regen to rewrite it in golden format 8 from "
        "models/if_by_value.onnx and these inputs (then check it in)"])
    refused.stdout.no_fnmatch_line("*accuracy FAILED*")  # nothing compared, no op blamed
    option = re.search(r"Fix: run the test again with (\S+) ", refused.stdout.str()).group(1)

    # the CLI against the same golden: its verdict says why the If had no golden tensor
    backend = EmulatorBackend(cache)
    actual = str(backend.run(backend.convert(str(model)), X, dump_dir=tmp_path / "dump").root)
    code, out = _compare(actual, golden, tmp_path / "r.json", capsys)
    assert code == 1
    note = out.splitlines()[-1]
    assert note == (f"{golden}: this stored golden was written in golden format 6 (its "
                    "golden.json), before golden format 8, which keeps every If the device runs "
                    "as one operator (one decided by the input values, or reading the shape of "
                    "one) under its own name, over its inlined branch, as the device dumps it: "
                    "that is why If 'pick' had no golden tensor. Rewrite it: run "
                    "the test that stores it with --accuracy-regen (or delete it and run that "
                    "test, which writes it again), then compare again")
    assert cli.main(["judge", str(tmp_path / "r.json")]) == 1  # a saved result: the same note
    assert capsys.readouterr().out.splitlines()[-1] == note

    regen = pytester.runpytest(option)  # the printed option, as printed
    regen.assert_outcomes(failed=1)
    regen.stdout.fnmatch_lines(["Rewrote it in golden format 8 from models/if_by_value.onnx and "
                                "this test's inputs (--accuracy-regen); the test fails this time*",
                                "  golden/if: rewritten (--accuracy-regen: written in an older "
                                "golden format)"])
    assert json.loads((golden / RECORD_FILE).read_text())["golden_format"] == 8
    pytester.runpytest().assert_outcomes(passed=1)
    code, out = _compare(actual, golden, tmp_path / "r.json", capsys)
    assert code == 0 and "stored golden" not in out


def test_a_format_7_golden_without_an_if_reading_a_kept_ifs_shape_is_stale():
    """Format 8 keeps every If a conversion runs as an operator (H110): a format-7 golden of a
    model whose If reads the shape of an If kept for its inputs lacks that If."""
    from pytest_ascend_accuracy.testing import models

    inputs = {"x": np.float32([[1, 2, 3, 4]])}
    stale = stored_format.stale_ifs({"golden_format": 7}, ["sum", "positive", "pick", "square"],
                                    models.nested_if_model(), inputs)
    assert stale.ifs == ("by_rank",)
    assert stored_format.stale_ifs({"golden_format": 7}, ["pick", "by_rank"],
                                   models.nested_if_model(), inputs) is None


def test_a_cache_entry_given_to_the_cli_is_not_called_a_stale_stored_golden(tmp_path):
    """A golden cache entry (which docs/cli.md lets compare read) has a golden.json of the
    cache's own, naming no golden format: the CLI advised --accuracy-regen for it, which
    changes nothing (H110)."""
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump

    dump = golden_dump(if_by_value(), X, cache=Cache(tmp_path / "cache"))
    entry = next(p for p in Path(dump.root).parents if (p / "golden.json").is_file())
    assert stored_format.stale_note(entry, [("pick", "If")]) == ""
    assert stored_format.stale_note(Path(dump.root), [("pick", "If")]) == ""


def test_an_if_inside_a_kept_ifs_branch_is_not_asked_of_a_format_7_golden():
    """An If in the branch of an If decided by the input values is inside that operator on the
    device, never dumped: a format-7 golden holding the outer If lacks nothing (H113: silero_vad's
    golden, holding If_0, was refused naming the Ifs of If_0's branch)."""
    def vi(name):
        return h.make_tensor_value_info(name, TensorProto.FLOAT, None)

    inner = h.make_node("If", ["c"], ["t"], name="inner",
                        then_branch=h.make_graph([h.make_node("Relu", ["x"], ["r"], name="relu")],
                                                 "t", [], [vi("r")]),
                        else_branch=h.make_graph([h.make_node("Neg", ["x"], ["n"], name="neg")],
                                                 "e", [], [vi("n")]))
    outer = h.make_node("If", ["c"], ["y"], name="outer",
                        then_branch=h.make_graph([inner], "ot", [], [vi("t")]),
                        else_branch=h.make_graph([h.make_node("Identity", ["x"], ["i"],
                                                              name="same")], "oe", [], [vi("i")]))
    graph = h.make_graph([h.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
                          h.make_node("Greater", ["s", "zero"], ["c"], name="positive"), outer],
                         "nested", [h.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                         [vi("y")], [nh.from_array(np.float32(0), "zero")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    assert stored_format.stale_ifs({"golden_format": 7}, ["sum", "positive", "outer"], model,
                                   X) is None
    assert stored_format.stale_ifs({"golden_format": 6}, ["sum", "positive"], model,
                                   X).ifs == ("outer",)


def test_msits_slot_numbering_and_a_model_without_omitted_outputs_are_not_renumbered():
    from pytest_ascend_accuracy.dump.model import DumpSet

    lstm = h.make_graph([h.make_node("LSTM", ["X", "W", "R"], ["", "Y_h"], name="lstm",
                                     hidden_size=2)], "g",
                        [h.make_tensor_value_info("X", TensorProto.FLOAT, [5, 1, 3])],
                        [h.make_tensor_value_info("Y_h", TensorProto.FLOAT, [1, 1, 2])],
                        [nh.from_array(np.zeros((1, 8, 3), np.float32), "W"),
                         nh.from_array(np.zeros((1, 8, 2), np.float32), "R")])
    model = h.make_model(lstm, opset_imports=[h.make_opsetid("", 14)])
    y_h = np.zeros((1, 1, 2), np.float32)
    from dataclasses import replace

    shifted = DumpSet.from_arrays({"lstm": [y_h]})  # before format 8
    op = shifted.get("lstm")
    by_slot = DumpSet([replace(op, outputs=(replace(op.outputs[0], index=1),))])  # msit, or 8
    assert stored_format.shifted_outputs(None, by_slot, model) == ()
    assert stored_format.shifted_outputs({"golden_format": 7}, shifted, model) == ("lstm",)
    assert stored_format.shifted_outputs({"golden_format": 8}, shifted, model) == ()
    assert stored_format.shifted_outputs({"golden_format": 7}, shifted, if_by_value()) == ()

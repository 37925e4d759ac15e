"""A per_op/ignore glob reaching only ops inside If branches is refused as an exact name is:
naming the If a comparison judges them in (H113: silero_vad's 'If_0_then_branch__Inline_0__/
decoder/*' read "matches no op ...; its ops: 'Equal_0', 'If_0', ..." without naming If_0); one
matching ops a conversion brings up out of an inlined If is taken. keep_dtype as ATC applies it
to the graph its parser built (branches are subgraphs, their ops renamed; ``KeepDtypeFunc``
looks at every node, by name or OpType::): OpType:: of a branch op's type is taken, a branch
op's ONNX name is refused offering that OpType:: entry, a glob is refused (no patterns)."""
import sys
from pathlib import Path

import pytest

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.op_catalogue import (check_dump_setting_names,
                                                       check_entry_names, model_ops)
from pytest_ascend_accuracy.testing.models import nested_if_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_nested_branch_owner import nested_model  # noqa: E402


def _refused(call):
    with pytest.raises(ConfigError) as info:
        call()
    return str(info.value)


def test_a_glob_of_ops_in_nested_branches_names_the_outer_if(tmp_path):
    nested_model(tmp_path / "nested.onnx")
    ops = model_ops(str(tmp_path / "nested.onnx"))
    text = _refused(lambda: check_entry_names(ops, {}, ["de*"], "t"))
    assert ("ignore entry 'de*' (a glob) matches no op of model 'nested' a comparison judges, "
            "but 1 op inside If branches, e.g. 'deep' (in the then_branch of If 'inner', within "
            "'outer'), which a run executes and a comparison judges as one op: name 'outer'"
            in text)
    check_entry_names(ops, {}, ["outer"], "t")  # pasted


def test_a_glob_against_the_dumps_names_the_if_the_device_dumps(tmp_path):
    """The plugin's check (setup_checks.check_op_names): the device's dump has 'outer' alone;
    a golden holding the branch ops (it inlines the If it keeps) does not make the glob judge."""
    from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord

    nested_model(tmp_path / "nested.onnx")
    ops = model_ops(str(tmp_path / "nested.onnx"))
    device = DumpSet([OpRecord(n) for n in ("sum", "gt_zero", "outer")], kind="npu")
    golden = DumpSet([OpRecord(n) for n in ("sum", "gt_zero", "max", "deep", "outer")],
                     kind="golden")
    text = _refused(lambda: check_dump_setting_names(
        [], ["*ee*"], [device, golden], "t", actual=device, inside=ops.inside))
    assert "a comparison judges as one op: name 'outer'" in text
    check_dump_setting_names([], ["out*"], [device, golden], "t", actual=device,
                             inside=ops.inside)


def test_inlined_branch_globs_are_taken_dropped_ones_never_run():
    """nested_if_model: 'wrap' is inlined taking its then_branch ('rank', 'by_rank' come up);
    'by_rank' stays an If; 'as_is' is in wrap's dropped else_branch."""
    ops = model_ops(nested_if_model())
    check_entry_names(ops, {"ran*": 0.5}, ["by_*"], "t")
    assert "name 'by_rank'" in _refused(lambda: check_entry_names(ops, {}, ["rel*"], "t"))
    assert ("ignore entry 'as_*' (a glob) matches only ops inside branches a conversion drops, "
            "e.g. 'as_is' (in the else_branch of If 'wrap')"
            in _refused(lambda: check_entry_names(ops, {}, ["as_*"], "t")))


def test_keep_dtype_reaches_branch_ops_by_type_not_by_onnx_name(tmp_path):
    nested_model(tmp_path / "nested.onnx")
    ops = model_ops(str(tmp_path / "nested.onnx"))
    ops.check_keep_dtype(["OpType::Mul", "OpType::ReduceMax"], "t")  # only inside 'outer'
    text = _refused(lambda: ops.check_keep_dtype(["deep"], "t"))
    assert ("keep_dtype entry 'deep' names an op inside the then_branch of If 'inner', within "
            "'outer': ATC applies keep_dtype to the graph as its parser built it" in text)
    assert "'OpType::Mul' keeps it: modes=[keep_dtype(['OpType::Mul'])]" in text
    inlined = model_ops(nested_if_model())  # 'rank' comes up, after keep_dtype is applied
    assert ("which a conversion brings into its main graph once it folds the If"
            in _refused(lambda: inlined.check_keep_dtype(["rank"], "t")))
    text = _refused(lambda: ops.check_keep_dtype(["*"], "t"))
    assert "is a glob: ATC's keep_dtype file takes op names and OpType:: entries" in text
    assert "keep_dtype(['sum', 'gt_zero', 'outer'])" in text

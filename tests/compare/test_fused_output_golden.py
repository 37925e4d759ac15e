"""A fused op is compared with the golden tensor of the original op whose output it produces
(its output's origin), never with another member's: an inner member's output is consumed inside
the fusion (user review: ``Conv@24Add@15Relu@9`` with no golden for Relu@9 was compared with
Add@15's pre-Relu tensor, cosine 0.69, and failed with fusion_off advice)."""
import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.matching import match_ops
from pytest_ascend_accuracy.compare.result import NOT_COMPARED, NOT_COMPARED_FLAG
from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter
from pytest_ascend_accuracy.dump.om_json import OmOp, write_om_json

MEMBERS = ("Conv@24", "Add@15", "Relu@9")
FUSED = "Conv@24Add@15Relu@9"


def _tensors():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 4, 2, 2)).astype(np.float32)
    conv = x * 2
    add = conv - 0.5
    return x, conv, add, np.maximum(add, 0)


def _golden(with_relu: bool) -> DumpSet:
    x, conv, add, relu = _tensors()
    outs = {"Conv@24": [conv], "Add@15": [add], "Tail_1": [relu + 1]}
    if with_relu:
        outs["Relu@9"] = [relu]
    return DumpSet.from_arrays(outs, kind="npy")


def _actual(origin=("Relu@9", 0)) -> DumpSet:
    x, conv, add, relu = _tensors()
    out = TensorRef.from_array(relu.astype(np.float16), origin=origin)
    return DumpSet([
        OpRecord(FUSED, "Conv2D", outputs=(out,), original_names=MEMBERS, order=1),
        OpRecord("Tail_1", "Add", outputs=(TensorRef.from_array((relu + 1).astype(np.float16)),),
                 order=2)], meta={"om_json": "model.json"})


def test_fused_op_with_its_origin_in_the_golden_is_compared_with_it():
    plan = match_ops(_actual(), _golden(with_relu=True))
    p = plan.pairs[0]
    assert (p.actual_op.name, p.golden_op.name, p.how) == (FUSED, "Relu@9", "origin")
    r = compare_dumps(_actual(), _golden(with_relu=True))
    assert r.judge(0.99).passed


def test_fused_op_whose_origin_golden_is_missing_is_not_compared_with_an_inner_member():
    plan = match_ops(_actual(), _golden(with_relu=False))
    assert [p.actual_op.name for p in plan.pairs] == ["Tail_1"]  # never Add@15's tensor
    assert plan.coverage.unmatched_actual == (FUSED,)
    assert "Relu@9 output 0" in plan.not_compared[FUSED]
    assert set(plan.coverage.fused) == {"Conv@24", "Add@15"}
    assert plan.coverage.unmatched_golden == ()

    r = compare_dumps(_actual(), _golden(with_relu=False))
    row = next(x for x in r.rows if x.op_name == FUSED)
    assert row.metrics is None and row.golden_name in ("", None)
    assert NOT_COMPARED_FLAG in row.flags and "Relu@9" in row.reason
    v = r.judge(0.9)
    assert not v.passed
    assert [f.row.op_name for f in v.failures] == [FUSED]
    assert v.failures[0].reason.startswith(NOT_COMPARED)
    assert "1 op not compared" in v.describe()


def test_fused_op_without_origin_keeps_the_last_member_in_golden_order():
    # no origin known: the last original op with a golden dump, as before
    plan = match_ops(_actual(origin=None), _golden(with_relu=True))
    assert (plan.pairs[0].golden_op.name, plan.pairs[0].how) == ("Relu@9", "fused")


def test_through_dump_files_and_an_om_json(tmp_path):
    x, conv, add, relu = _tensors()
    golden_dir, actual_dir = tmp_path / "golden", tmp_path / "npu"
    with NpyDumpWriter(golden_dir) as w:  # a stored golden whose Relu@9 file is gone
        w.write_op("Conv@24", [x], [conv])
        w.write_op("Add@15", [conv], [add])
        w.write_op("Tail_1", [relu], [relu + 1])
    with AscendDumpWriter(actual_dir) as w:
        w.write_op("Conv2D", FUSED, [x.astype(np.float16)], [relu.astype(np.float16)])
        w.write_op("Add", "Tail_1", [relu.astype(np.float16)], [(relu + 1).astype(np.float16)])
    om = tmp_path / "model.json"
    write_om_json(om, "model", [OmOp(FUSED, "Conv2D", 1, original_names=MEMBERS,
                                     output_origins=(("Relu@9", 0),)),
                                OmOp("Tail_1", "Add", 2)])
    r = compare_dumps(load_dump(actual_dir, om_json=om), load_dump(golden_dir))
    row, tail = r.rows
    assert tail.op_name == "Tail_1" and tail.metrics.cosine == pytest.approx(1.0, abs=1e-3)
    assert row.op_name == FUSED and row.metrics is None
    assert NOT_COMPARED_FLAG in row.flags
    assert "1 op not compared (Conv@24Add@15Relu@9" in r.judge(0.9).describe()
    assert "Add@15" not in (row.golden_name or "")


@pytest.mark.parametrize("missing", [False, True])
def test_user_mapping_still_wins(missing):
    plan = match_ops(_actual(), _golden(with_relu=not missing), mapping={FUSED: "Add@15"})
    assert (plan.pairs[0].golden_op.name, plan.pairs[0].how) == ("Add@15", "mapping")

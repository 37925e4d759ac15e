"""Operator matching: names, origins, fused original names, user mapping, coverage."""
import numpy as np
import pytest

from pytest_ascend_accuracy.compare.matching import match_ops
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef
from pytest_ascend_accuracy.errors import ConfigError


def _t(value=0.0, index=0, origin=None, kind="output"):
    return TensorRef.from_array(np.full(4, value, np.float32), kind, index, origin=origin)


def _golden(*names, outputs=1):
    return DumpSet([OpRecord(n, outputs=tuple(_t(i + k / 10, k) for k in range(outputs)),
                             inputs=(_t(-1, 0, kind="input"),), order=i)
                    for i, n in enumerate(names)], kind="npy")


def _pairs(plan):
    return [(p.actual_op.name, p.actual.slot, p.golden_op.name if p.golden_op else None,
             p.golden.slot if p.golden else None, p.how) for p in plan.pairs]


def test_match_by_sanitised_name():
    golden = _golden("conv1_Conv", "layer1_0_relu")
    actual = DumpSet([OpRecord("conv1/Conv", outputs=(_t(),)),
                      OpRecord("layer1.0 relu", outputs=(_t(),))])
    plan = match_ops(actual, golden)
    assert _pairs(plan) == [("conv1/Conv", "output:0", "conv1_Conv", "output:0", "name"),
                            ("layer1.0 relu", "output:0", "layer1_0_relu", "output:0", "name")]
    c = plan.coverage
    assert (c.golden_total, c.compared, c.fused, c.unmatched_golden, c.unmatched_actual) == (
        2, ("conv1_Conv", "layer1_0_relu"), (), (), ())


def test_fused_op_is_compared_with_last_original_in_golden_order():
    golden = _golden("Conv_0", "BatchNorm_1", "Relu_2", "Add_3")
    # original names listed out of graph order, and one that has no golden dump
    fused = OpRecord("Conv_0", op_type="Conv2D", outputs=(_t(),),
                     original_names=("Relu_2", "Conv_0", "Missing_9", "BatchNorm_1"))
    plan = match_ops(DumpSet([fused]), golden)
    assert _pairs(plan) == [("Conv_0", "output:0", "Relu_2", "output:0", "fused")]
    c = plan.coverage
    assert c.compared == ("Relu_2",)
    assert c.fused == ("Conv_0", "BatchNorm_1")
    assert c.unmatched_golden == ("Add_3",)


def test_origin_of_each_output_wins_over_the_op_rule():
    golden = _golden("Split_0", "Relu_1", outputs=2)
    op = OpRecord("split_fused", outputs=(_t(0, 0, origin=("Split_0", 1)),
                                          _t(0, 1, origin=("Relu_1", 0))),
                  original_names=("Split_0", "Relu_1"))
    plan = match_ops(DumpSet([op]), golden)
    assert _pairs(plan) == [("split_fused", "output:0", "Split_0", "output:1", "origin"),
                            ("split_fused", "output:1", "Relu_1", "output:0", "origin")]


def test_origin_naming_a_missing_golden_op_falls_back_to_name():
    golden = _golden("Relu_1")
    op = OpRecord("Relu_1", outputs=(_t(origin=("gone", 0)),))
    assert _pairs(match_ops(DumpSet([op]), golden)) == [
        ("Relu_1", "output:0", "Relu_1", "output:0", "name")]


def test_user_mapping_and_its_errors():
    golden = _golden("onnx::Add_7", "Mul_2")
    actual = DumpSet([OpRecord("npu_add", outputs=(_t(),)), OpRecord("Mul_2", outputs=(_t(),))])
    plan = match_ops(actual, golden, mapping={"npu_add": "onnx::Add_7"})
    assert _pairs(plan)[0] == ("npu_add", "output:0", "onnx::Add_7", "output:0", "mapping")
    with pytest.raises(ConfigError, match="mapping: golden op 'nope' \\(mapped from 'npu_add'\\) "
                                          "is not in the golden dump"):
        match_ops(actual, golden, mapping={"npu_add": "nope"})
    with pytest.raises(ConfigError, match="mapping: actual op 'ghost' is not in the actual dump"):
        match_ops(actual, golden, mapping={"ghost": "Mul_2"})


def test_unmatched_and_npu_only_ops_are_reported():
    golden = _golden("A", "B")
    actual = DumpSet([OpRecord("A", outputs=(_t(),)),
                      OpRecord("TransData_5", outputs=(_t(),), original_names=("",)),
                      OpRecord("Extra", outputs=(_t(),))])
    plan = match_ops(actual, golden)
    c = plan.coverage
    assert c.unmatched_actual == ("TransData_5", "Extra")
    assert c.npu_only == ("TransData_5",)
    assert c.unmatched_golden == ("B",)


def test_missing_golden_output_index_is_a_pair_with_a_reason():
    golden = _golden("A")
    actual = DumpSet([OpRecord("A", outputs=(_t(0, 0), _t(0, 1)))])
    plan = match_ops(actual, golden)
    assert plan.pairs[1].golden is None
    assert plan.pairs[1].reason == "golden op 'A' has no output 1"


def test_inputs_are_compared_only_on_request():
    golden = _golden("A")
    actual = DumpSet([OpRecord("A", outputs=(_t(),), inputs=(_t(-1, 0, kind="input"),))])
    assert len(match_ops(actual, golden).pairs) == 1
    plan = match_ops(actual, golden, compare_inputs=True)
    assert [p.actual.slot for p in plan.pairs] == ["output:0", "input:0"]


def test_npu_only_op_paired_through_its_producer_by_the_om_json():
    golden = _golden("Pad_49", "Conv_52")
    t = TensorRef.from_array
    actual = DumpSet([
        OpRecord("Pad_49", outputs=(_t(),)),
        # origin already resolved to the producer by load_dump (dump.om_pairing)
        OpRecord("trans_TransData_4", "TransData", outputs=(_t(origin=("Pad_49", 0)),)),
        # the same, but the producer's tensor has another size: NPU-only, not a failure
        OpRecord("trans_TransData_5", "TransData",
                 outputs=(t(np.zeros(9, np.float32), origin=("Conv_52", 0)),)),
        OpRecord("trans_Cast_6", "Cast", outputs=(_t(),)),
    ], meta={"om_json": "m.json", "npu_only_ops": ["trans_TransData_4", "trans_TransData_5",
                                                   "trans_Cast_6"],
             "paired_via_producer": {"trans_TransData_4": "Pad_49",
                                     "trans_TransData_5": "Conv_52"}})
    plan = match_ops(actual, golden)
    assert _pairs(plan) == [("Pad_49", "output:0", "Pad_49", "output:0", "name"),
                            ("trans_TransData_4", "output:0", "Pad_49", "output:0", "producer")]
    assert plan.coverage.npu_only == ("trans_TransData_5", "trans_Cast_6")


def test_inner_parts_of_a_split_op_have_no_golden():
    golden = _golden("RandomNormalLike_327")
    names = ("RandomNormalLike_327",)
    actual = DumpSet([OpRecord("normal_170", outputs=(_t(),), original_names=names),
                      OpRecord("mul_171", outputs=(_t(origin=("mul_171", 0)),),
                               original_names=names),
                      OpRecord("add_172", outputs=(_t(),), original_names=names)],
                     meta={"om_json": "m.json", "om_inner_ops": ["normal_170", "mul_171"]})
    plan = match_ops(actual, golden)
    assert _pairs(plan) == [("add_172", "output:0", "RandomNormalLike_327", "output:0", "fused")]
    assert plan.coverage.unmatched_actual == ("normal_170", "mul_171")
    assert plan.coverage.npu_only == ()


def test_header_origin_of_a_transdata_naming_a_tensor_of_another_size_is_not_believed():
    """Without an om json only the dump header's origin is known; real ATC gives an inserted
    TransData its consumer's name (trans_TransData_4 -> Conv_52)."""
    golden = DumpSet([OpRecord("Conv_52", outputs=(TensorRef.from_array(np.zeros(12)),))])
    actual = DumpSet([OpRecord("trans_TransData_4", "TransData", original_names=("Conv_52",),
                               outputs=(_t(origin=("Conv_52", 0)),)),
                      OpRecord("Conv_52_Conv2D", "Conv2D", original_names=("Conv_52",),
                               outputs=(TensorRef.from_array(np.zeros(12),
                                                             origin=("Conv_52", 0)),))])
    plan = match_ops(actual, golden)
    assert [p.actual_op.name for p in plan.pairs] == ["Conv_52_Conv2D"]
    assert plan.coverage.npu_only == ("trans_TransData_4",)

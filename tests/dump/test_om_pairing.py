"""om_pairing: which framework tensor each om output stands for (msaccucmp's semantics).

The graph mirrors the real ATC 6.0 tdnn om json (docs/ascend_backend.md): NPU-inserted
TransData/Cast with empty original names whose origin attr names their consumer or a later op,
a one-to-many split (RandomNormalLike -> 3 ops, a Cast in the middle naming itself), fused ops.
"""
from pytest_ascend_accuracy.dump.om_json import OmGraph, OmOp
from pytest_ascend_accuracy.dump.om_pairing import (OutputPairing, inserted_ops, pair_outputs,
                                                    untrusted_origins)


def _graph():
    ops = [
        OmOp("feats", "Data", 0),
        OmOp("Pad_49", "PadV3", 1, inputs=("feats:0", "const_1:0", "atomic:-1")),
        # ATC's origin names the consumer Conv_52, not the producer Pad_49
        OmOp("trans_TransData_4", "TransData", 2, output_origins=(("Conv_52", 0),),
             inputs=("Pad_49:0",), npu_only=True),
        OmOp("Conv_52_Conv2D", "Conv2D", 3, ("Conv_52",), inputs=("trans_TransData_4:0", "")),
        OmOp("trans_TransData_8", "TransData", 4, output_origins=(("Conv_52", 0),),
             inputs=("Conv_52_Conv2D:0",), npu_only=True),
        OmOp("trans_Cast_9", "Cast", 5, inputs=("trans_TransData_8:0",), npu_only=True),
        OmOp("Transpose_53", "Transpose", 6, ("Transpose_53", "Transpose_53"),
             (("Transpose_53", 0),), inputs=("trans_Cast_9:0",)),
        OmOp("rnl_normal", "RandomStandardNormal", 7, ("RandomNormalLike_327",)),
        OmOp("trans_Cast_65rnl_mul", "Cast", 8, ("RandomNormalLike_327",),
             (("trans_Cast_65rnl_mul", 0),), inputs=("rnl_normal:0",)),
        OmOp("rnl_add", "Add", 9, ("RandomNormalLike_327",), inputs=("trans_Cast_65rnl_mul:0",)),
        OmOp("Div_Add", "RealDiv", 10, ("Div_331", "Add_338"), (("Add_338", 0),)),
        OmOp("MatMul_LeakyRelu", "BatchMatMulV2", 11, ("MatMul_344", "LeakyRelu_347")),
        OmOp("trans_TransData_73", "TransData", 12, output_origins=(("Unsqueeze_342", 0),),
             inputs=("Div_Add:0", "atomic:-1"), npu_only=True),
        OmOp("trans_TransData_77", "TransData", 13, inputs=("MatMul_LeakyRelu:0",),
             npu_only=True),
        OmOp("trans_Cast_orphan", "Cast", 14, inputs=("not_in_json:0",), npu_only=True),
        OmOp("trans_TransData_noinput", "TransData", 15, inputs=("",), npu_only=True),
        OmOp("loop_a", "TransData", 16, inputs=("loop_b:0",), npu_only=True),
        OmOp("loop_b", "TransData", 17, inputs=("loop_a:0",), npu_only=True),
        OmOp("Mul_ownorigin", "Mul", 18, output_origins=(("Elsewhere_1", 0),)),
        OmOp("Gather_1221_const_data_2", "Const", 19, ("Gather_1221",)),
        OmOp("Gather_1221_gatherv2_3", "GatherV2", 20, ("Gather_1221",),
             inputs=("x:0", "Gather_1221_const_data_2:0")),
    ]
    return OmGraph("tdnn", tuple(ops))


def test_npu_only_ops_take_their_producers_origin_not_their_own():
    p = pair_outputs(_graph())
    assert p["trans_TransData_4"] == (OutputPairing(("Pad_49", 0), "producer", ("Pad_49",)),)
    assert p["trans_TransData_8"] == (
        OutputPairing(("Conv_52", 0), "producer", ("Conv_52_Conv2D",)),)
    # a chain of NPU-only ops is walked back to the first real producer
    assert p["trans_Cast_9"] == (
        OutputPairing(("Conv_52", 0), "producer", ("trans_TransData_8", "Conv_52_Conv2D")),)
    # origin naming a later (folded) op: the producer's trusted origin wins
    assert p["trans_TransData_73"] == (OutputPairing(("Add_338", 0), "producer", ("Div_Add",)),)


def test_walks_that_end_nowhere_are_npu_only():
    p = pair_outputs(_graph())
    assert p["trans_Cast_orphan"][0].how == "npu_only"
    assert p["trans_TransData_noinput"][0] == OutputPairing(None, "npu_only")
    assert p["loop_a"][0].origin is None and p["loop_b"][0].how == "npu_only"
    # producer is fused without a usable origin: no determined golden, so NPU-only
    assert p["trans_TransData_77"][0] == OutputPairing(None, "npu_only", ("MatMul_LeakyRelu",))


def test_rules_for_ops_with_a_framework_origin():
    p = pair_outputs(_graph())
    assert p["Pad_49"][0] == OutputPairing(("Pad_49", 0), "self")
    assert p["feats"][0] == OutputPairing(("feats", 0), "self")
    assert p["Conv_52_Conv2D"][0] == OutputPairing(("Conv_52", 0), "renamed")
    assert p["Transpose_53"][0] == OutputPairing(("Transpose_53", 0), "origin")
    assert p["Div_Add"][0] == OutputPairing(("Add_338", 0), "origin")
    assert p["MatMul_LeakyRelu"][0] == OutputPairing(None, "fused")
    # one framework op split in three: only the last holds its tensor
    assert p["rnl_normal"][0].how == "inner"
    assert p["trans_Cast_65rnl_mul"][0].how == "inner"
    assert p["rnl_add"][0] == OutputPairing(("RandomNormalLike_327", 0), "renamed")
    # a Const carrying the framework op's name does not split it (real ATC 5.1 file)
    assert p["Gather_1221_gatherv2_3"][0] == OutputPairing(("Gather_1221", 0), "renamed")
    # an origin the op does not cover is not believed
    assert p["Mul_ownorigin"][0] == OutputPairing(("Mul_ownorigin", 0), "self")


def test_untrusted_origins_are_listed_for_reports():
    bad = untrusted_origins(_graph())
    assert bad["trans_TransData_4:output:0"] == ("Conv_52", 0)
    assert bad["trans_TransData_73:output:0"] == ("Unsqueeze_342", 0)
    assert bad["Mul_ownorigin:output:0"] == ("Elsewhere_1", 0)
    assert "trans_TransData_8:output:0" not in bad  # names what the producer resolves to
    assert "Div_Add:output:0" not in bad


def test_unmarked_ops_atc_inserted_next_to_another_are_recognised():
    """As in the real ATC 5.1 file: transposes around an NMS op, without original names."""
    g = OmGraph("m", (
        OmOp("boxes", "Data", 0),
        OmOp("NMS_1203_Input0_TransposeBefore", "Transpose", 1, inputs=("boxes:0", "perm:0")),
        OmOp("NMS_1203", "BatchMultiClassNonMaxSuppression", 2,
             inputs=("NMS_1203_Input0_TransposeBefore:0", "")),
        OmOp("NMS_1203_Output0TransposeAfter", "TransposeD", 3, inputs=("NMS_1203:0",)),
        OmOp("NMS_1203_helper", "Relu", 4, inputs=("boxes:0",)),  # not next to NMS_1203
        OmOp("Relu_5", "Relu", 5, inputs=("NMS_1203_Output0TransposeAfter:0",)),
    ))
    assert inserted_ops(g) == ("NMS_1203_Input0_TransposeBefore",
                               "NMS_1203_Output0TransposeAfter")

"""A perfect NPU dump read with an om json shaped like real ATC's passes; wrong devices fail.

The om json is built in code with the structure of the real ATC 6.0 tdnn file (see
docs/ascend_backend.md): NPU-inserted TransData/Cast with empty original names whose origin
names their consumer (trans_TransData_4 -> Conv_52) or a later folded op (-> Unsqueeze_342,
Reshape_390), a framework op split in three NPU ops, device layouts (NC1HWC0, FRACTAL_NZ) and
a 1-D Conv the NPU runs as 2-D. The "perfect" dump holds the golden values in fp16, in those
layouts, with the header origins a device copies from the om json.
"""
import csv
import io

import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump import AscendDumpWriter, load_dump, write_om_json
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.dump.om_json import OmOp, OmTensorDesc
from pytest_ascend_accuracy.errors import DumpFormatError
from pytest_ascend_accuracy.report.csv_report import HEADER, csv_text

RNG = np.random.default_rng(7)
GOLDEN = {  # framework (ONNX) tensors, logical shapes as ONNX Runtime gives them
    "feats": RNG.standard_normal((1, 6, 20)).astype(np.float32),
    "Pad_49": RNG.standard_normal((1, 6, 24)).astype(np.float32),
    "Conv_52": RNG.standard_normal((1, 20, 22)).astype(np.float32),  # 1-D conv
    "Concat_341": RNG.standard_normal((1, 40)).astype(np.float32),
    "LeakyRelu_347": RNG.standard_normal((1, 1, 24)).astype(np.float32),
    "RandomNormalLike_327": RNG.standard_normal((1, 40)).astype(np.float32),
    "LogSoftmax_385": RNG.standard_normal((1, 28)).astype(np.float32),
}
JUNK = RNG.standard_normal((1, 40)).astype(np.float32) * 5 + 3  # intermediate, no golden


def _d(dtype, layout, origin_shape, fmt="ND"):
    return (OmTensorDesc(dtype, layout, None, tuple(origin_shape), fmt),)


#: (om op, framework tensor the device holds in that output, its logical shape on the device)
PLAN = [
    (OmOp("feats", "Data", 0, output_descs=_d("DT_FLOAT", "NCHW", (1, 6, 20))), None, None),
    (OmOp("trans_Cast_0", "Cast", 1, output_origins=(("feats", 0),), inputs=("feats:0",),
          npu_only=True, output_descs=_d("DT_FLOAT16", "NCHW", (1, 6, 20))), "feats", (1, 6, 20)),
    (OmOp("Pad_49", "PadV3", 2, inputs=("trans_Cast_0:0", "const_1:0", "atomic:-1"),
          output_descs=_d("DT_FLOAT16", "NCHW", (1, 6, 24))), "Pad_49", (1, 6, 24)),
    (OmOp("trans_TransData_4", "TransData", 3, output_origins=(("Conv_52", 0),),
          inputs=("Pad_49:0",), npu_only=True,
          output_descs=_d("DT_FLOAT16", "NC1HWC0", (1, 6, 1, 24), "NCHW")),
     "Pad_49", (1, 6, 1, 24)),
    (OmOp("PartitionedCall_Conv_52_Conv2D_12", "Conv2D", 4, ("Conv_52",),
          inputs=("trans_TransData_4:0", "w:0", ""),
          output_descs=_d("DT_FLOAT16", "NC1HWC0", (1, 20, 1, 22), "NCHW")),
     "Conv_52", (1, 20, 1, 22)),
    (OmOp("trans_TransData_8", "TransData", 5, output_origins=(("Conv_52", 0),),
          inputs=("PartitionedCall_Conv_52_Conv2D_12:0",), npu_only=True,
          output_descs=_d("DT_FLOAT16", "NCHW", (1, 20, 1, 22), "NCHW")),
     "Conv_52", (1, 20, 1, 22)),
    (OmOp("Concat_341", "ConcatD", 6, ("Concat_341",),
          output_descs=_d("DT_FLOAT16", "ND", (1, 40))), "Concat_341", (1, 40)),
    (OmOp("trans_TransData_73", "TransData", 7, output_origins=(("Unsqueeze_342", 0),),
          inputs=("Concat_341:0", "atomic:-1"), npu_only=True,
          output_descs=_d("DT_FLOAT16", "FRACTAL_NZ", (1, 1, 40))), "Concat_341", (1, 1, 40)),
    (OmOp("MatMul_344LeakyRelu_347", "BatchMatMulV2", 8, ("MatMul_344", "LeakyRelu_347"),
          (("LeakyRelu_347", 0),), inputs=("trans_TransData_73:0",),
          output_descs=_d("DT_FLOAT16", "FRACTAL_NZ", (1, 1, 24))), "LeakyRelu_347", (1, 1, 24)),
    (OmOp("trans_TransData_77", "TransData", 9, output_origins=(("LeakyRelu_347", 0),),
          inputs=("MatMul_344LeakyRelu_347:0",), npu_only=True,
          output_descs=_d("DT_FLOAT16", "ND", (1, 1, 24))), "LeakyRelu_347", (1, 1, 24)),
    (OmOp("RandomNormalLike_327_normal_170", "RandomStandardNormal", 10, ("RandomNormalLike_327",),
          output_descs=_d("DT_FLOAT", "ND", (1, 40))), None, (1, 40)),
    (OmOp("trans_Cast_65RandomNormalLike_327_mul_171", "Cast", 11, ("RandomNormalLike_327",),
          (("RandomNormalLike_327_mul_171", 0),), inputs=("RandomNormalLike_327_normal_170:0",),
          output_descs=_d("DT_FLOAT16", "ND", (1, 40))), None, (1, 40)),
    (OmOp("RandomNormalLike_327_add_172", "Add", 12, ("RandomNormalLike_327",),
          inputs=("trans_Cast_65RandomNormalLike_327_mul_171:0",),
          output_descs=_d("DT_FLOAT16", "ND", (1, 40))), "RandomNormalLike_327", (1, 40)),
    (OmOp("LogSoftmax_385", "LogSoftmaxV2", 13, output_descs=_d("DT_FLOAT16", "ND", (1, 28))),
     "LogSoftmax_385", (1, 28)),
    # ATC-inserted without original names, after the op it serves (real ATC 5.1 NMS file)
    (OmOp("LogSoftmax_385_Output0TransposeAfter", "TransposeD", 13,
          inputs=("LogSoftmax_385:0",), output_descs=_d("DT_FLOAT16", "ND", (1, 28))),
     None, (1, 28)),
    (OmOp("trans_Cast_95", "Cast", 14, output_origins=(("Reshape_390", 0),),
          inputs=("LogSoftmax_385:0", "const_2:-1"), npu_only=True,
          output_descs=_d("DT_FLOAT", "ND", (1, 1, 28))), "LogSoftmax_385", (1, 1, 28)),
]
_NP = {"DT_FLOAT16": np.float16, "DT_FLOAT": np.float32}


def _golden() -> DumpSet:
    return DumpSet.from_arrays({name: [arr] for name, arr in GOLDEN.items()}, kind="npy")


def _write(tmp_path, *, corrupt=(), model="tdnn"):
    om = tmp_path / "tdnn.json"
    write_om_json(om, model, [op for op, _, _ in PLAN])
    leaf = tmp_path / "dump" / "20261203120000" / "0" / model / "1" / "0"
    w = AscendDumpWriter(leaf)
    for op, truth, shape in PLAN:
        if op.type == "Data":
            continue
        (desc,) = op.output_descs
        value = GOLDEN[truth] if truth else np.resize(JUNK, shape)
        if op.name in corrupt or truth in corrupt:
            value = -value
        stored = value.reshape(shape).astype(np.float16).astype(_NP[desc.dtype])
        fmt = desc.layout if desc.layout in ("NC1HWC0", "FRACTAL_NZ") else "ND"
        w.write_op(op.type, op.name, outputs=[stored], output_formats=[fmt],
                   output_origins=[op.output_origins[0] if op.output_origins else None])
    return om, tmp_path / "dump"


def test_perfect_dump_with_real_shaped_om_json_passes(tmp_path):
    om, dump = _write(tmp_path)
    result = compare_dumps(load_dump(dump, om_json=om), _golden())
    verdict = result.judge(0.99)
    assert verdict.passed and not verdict.failures, verdict.describe()
    by_op = {r.op_name: r for r in result.rows}
    assert (by_op["trans_TransData_4"].golden_name, by_op["trans_TransData_4"].match) == (
        "Pad_49", "producer")
    assert by_op["trans_TransData_73"].golden_name == "Concat_341"
    assert by_op["trans_Cast_95"].golden_name == "LogSoftmax_385"
    assert by_op["trans_Cast_0"].golden_name == "feats"
    assert by_op["PartitionedCall_Conv_52_Conv2D_12"].golden_name == "Conv_52"
    cov = result.coverage
    assert cov.unmatched_golden == ()
    assert cov.npu_only == ("LogSoftmax_385_Output0TransposeAfter",)
    assert cov.unmatched_actual == ("RandomNormalLike_327_normal_170",
                                    "trans_Cast_65RandomNormalLike_327_mul_171",
                                    "LogSoftmax_385_Output0TransposeAfter")
    rows = list(csv.reader(io.StringIO(csv_text(result, verdict))))[1:]
    npu_rows = [r for r in rows if r[HEADER.index("IsNpuOps")] == "YES"]
    assert {r[2] for r in npu_rows} == {op.name for op, _, _ in PLAN if op.npu_only} | {
        "LogSoftmax_385_Output0TransposeAfter"}
    assert all(r[HEADER.index("GroundTruth")] == "*" for r in npu_rows)
    assert all(r[-1] == "NO" for r in rows)


def test_wrong_device_output_fails_at_the_op_and_its_transdata(tmp_path):
    om, dump = _write(tmp_path, corrupt=("Pad_49",))  # the TransData copies the bad values
    verdict = compare_dumps(load_dump(dump, om_json=om), _golden()).judge(0.99)
    assert [f.row.op_name for f in verdict.failures] == ["Pad_49", "trans_TransData_4"]


def test_transdata_copying_wrongly_is_caught(tmp_path):
    om, dump = _write(tmp_path, corrupt=("trans_TransData_8",))
    verdict = compare_dumps(load_dump(dump, om_json=om), _golden()).judge(0.99)
    assert [f.row.op_name for f in verdict.failures] == ["trans_TransData_8"]


def test_without_om_json_a_consumer_origin_is_npu_only_not_a_failure(tmp_path):
    _, dump = _write(tmp_path)
    result = compare_dumps(load_dump(dump), _golden())
    row = next(r for r in result.rows if r.op_name == "trans_TransData_4")
    assert "npu_only" in row.flags and row.metrics is None
    # trans_TransData_73 / trans_Cast_95 name folded ops the golden lacks: NPU-only too
    assert {"trans_TransData_4", "trans_TransData_73", "trans_Cast_95"} <= set(
        result.coverage.npu_only)
    assert not any(f.row.op_name == "trans_TransData_4" for f in result.judge(0.99).failures)


# ----------------------------------------------------------------------- sub-graph models
def _sub_model_tree(tmp_path, dumped=("then_3",)):
    ops = [OmOp("x", "Data", 0),
           OmOp("Relu_1", "Relu", 1, inputs=("x:0",)),
           OmOp("If_2", "If", 2, inputs=("Relu_1:0",), subgraphs=("then_3", "else_3")),
           OmOp("Add_9", "Add", 3, inputs=("If_2:0",)),
           OmOp("Mul_4", "Mul", 1, graph="then_3"),
           OmOp("Neg_5", "Neg", 1, graph="else_3")]
    om = tmp_path / "net.json"
    write_om_json(om, "net", ops)
    root = tmp_path / "dump"
    ts = root / "20261203120000" / "0"
    w = AscendDumpWriter(ts / "net" / "1" / "0")
    w.write_op("Relu", "Relu_1", outputs=[np.ones(4, np.float16)])
    w.write_op("Add", "Add_9", outputs=[np.full(4, 3, np.float16)])
    for name in dumped:
        sub = AscendDumpWriter(ts / name / "2" / "0")
        op = "Mul_4" if name == "then_3" else "Neg_5"
        sub.write_op(op.split("_")[0], op, outputs=[np.full(4, 2, np.float16)])
    golden = DumpSet.from_arrays({"Relu_1": [np.ones(4, np.float32)],
                                  "Mul_4": [np.full(4, 2, np.float32)],
                                  "Neg_5": [np.full(4, 2, np.float32)],
                                  "Add_9": [np.full(4, 3, np.float32)]})
    return om, root, golden


def test_sub_graph_models_are_merged_in_execution_order(tmp_path):
    om, root, golden = _sub_model_tree(tmp_path)
    dump = load_dump(root, om_json=om)
    assert dump.names == ["Relu_1", "Mul_4", "Add_9"]
    assert set(dump.meta["sub_models"]) == {"then_3"}
    assert dump.meta["sub_models_not_dumped"] == ["else_3"]  # the branch that did not run
    result = compare_dumps(dump, golden)
    assert result.coverage.compared == ("Relu_1", "Mul_4", "Add_9")
    assert result.coverage.unmatched_golden == ("Neg_5",)
    # pointing at the main step directory finds the sibling sub-model directories too
    leaf = root / "20261203120000" / "0" / "net" / "1" / "0"
    assert load_dump(leaf, om_json=om).names == ["Relu_1", "Mul_4", "Add_9"]


def test_sub_model_dumps_are_never_dropped_silently(tmp_path):
    om, root, _ = _sub_model_tree(tmp_path, dumped=("then_3", "else_3"))
    assert load_dump(root, om_json=om).names == ["Relu_1", "Mul_4", "Neg_5", "Add_9"]
    with pytest.raises(DumpFormatError, match="different devices or models, cannot choose"):
        load_dump(root)  # without the om json the directories cannot be told apart

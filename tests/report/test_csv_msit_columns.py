"""IsNpuOps, GroundTruth and IsOutputNode as msit writes them (msit ``msquickcmp/cmp_process.py``
``_process_is_npu_and_is_precision_error_ops``: ``IsNpuOps`` is ``GroundTruth == "*"``,
``IsOutputNode`` is ``GroundTruth.strip()`` among the ONNX golden's output-producing nodes;
msaccucmp writes one GroundTruth per op, for its input and output rows alike)."""
import csv
import io

import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef
from pytest_ascend_accuracy.report.csv_report import HEADER, csv_text

F16 = np.float16


def _csv(actual: DumpSet, golden: DumpSet) -> dict:
    text = csv_text(compare_dumps(actual, golden, compare_inputs=True))
    rows = [dict(zip(HEADER, r)) for r in list(csv.reader(io.StringIO(text)))[1:]]
    return {r["TensorIndex"]: r for r in rows}


def _om_dump() -> DumpSet:
    """Pad_0 -> trans_TransData_1 (ATC-inserted, empty original names) -> Conv_2 (framework op
    fused with Relu_3, the model's output op) -> trans_Cast_4 (ATC-inserted, the device's model
    output, the om json's ``attr_model_out_nodes_name``), as ``load_dump`` gives it with an om
    json: each input's origin is the framework tensor that feeds it, walked back through the
    inserted ops."""
    t = TensorRef.from_array
    x = np.arange(8, dtype=F16)
    return DumpSet([
        OpRecord("Pad_0", "PadD", outputs=(t(x, origin=("Pad_0", 0)),),
                 original_names=("Pad_0",), order=0),
        OpRecord("trans_TransData_1", "TransData", inputs=(t(x, "input", origin=("Pad_0", 0)),),
                 outputs=(t(x, origin=("Pad_0", 0)),), order=1),
        OpRecord("Conv_2", "Conv2D", inputs=(t(x, "input", origin=("Pad_0", 0)),),
                 outputs=(t(x + 1, origin=("Relu_3", 0)),),
                 original_names=("Conv_2", "Relu_3"), order=2),
        OpRecord("Relu_5", "Relu", inputs=(t(x + 1, "input", origin=("Relu_3", 0)),),
                 outputs=(t(x + 1, origin=("Relu_5", 0)),), original_names=("Relu_5",),
                 order=3),
        OpRecord("trans_Cast_4", "Cast", inputs=(t(x + 1, "input", origin=("Relu_5", 0)),),
                 outputs=(t(x + 1, origin=("Relu_5", 0)),), order=4),
    ], meta={"om_json": "m.json", "npu_only_ops": ["trans_TransData_1", "trans_Cast_4"],
             "paired_via_producer": {"trans_TransData_1": "Pad_0", "trans_Cast_4": "Relu_5"}})


def _golden() -> DumpSet:
    x = np.arange(8, dtype=np.float32)
    golden = DumpSet.from_arrays({"Pad_0": [x], "Conv_2": [x * 0], "Relu_3": [x + 1],
                                  "Relu_5": [x + 1]})
    golden.meta["output_nodes"] = ["Relu_3", "Relu_5"]  # the ONNX graph's output nodes
    return golden


def test_a_framework_ops_inputs_are_not_npu_ops_though_compared_with_their_producer():
    rows = _csv(_om_dump(), _golden())
    conv_in = rows["Conv_2:input:0"]
    assert conv_in["CosineSimilarity"] == "1.000000"  # compared with Pad_0's output
    assert (conv_in["GroundTruth"], conv_in["IsNpuOps"]) == ("Conv_2,Relu_3", "NO")
    relu_in = rows["Relu_5:input:0"]
    assert (relu_in["GroundTruth"], relu_in["IsNpuOps"]) == ("Relu_5", "NO")


def test_an_npu_only_ops_rows_are_all_npu_ops():
    rows = _csv(_om_dump(), _golden())
    for index in ("trans_TransData_1:input:0", "trans_TransData_1:output:0",
                  "trans_Cast_4:input:0", "trans_Cast_4:output:0"):
        assert (rows[index]["GroundTruth"], rows[index]["IsNpuOps"]) == ("*", "YES"), index


def test_is_output_node_is_the_ground_truth_among_the_golden_output_nodes():
    rows = _csv(_om_dump(), _golden())
    yes = sorted(k for k, r in rows.items() if r["IsOutputNode"] == "YES")
    # Relu_5's GroundTruth is an output node: both its rows; the fused Conv_2's GroundTruth
    # "Conv_2,Relu_3" is not one name (msit compares the whole cell); trans_Cast_4 (the om
    # json's model output, compared with Relu_5) reads "*"; Relu_5's input from Relu_3 is
    # Relu_5's row, not Relu_3's
    assert yes == ["Relu_5:input:0", "Relu_5:output:0"]


def test_without_a_golden_output_list_no_row_is_an_output_node():
    golden = _golden()
    del golden.meta["output_nodes"]
    actual = _om_dump()
    actual.meta["output_nodes"] = ["Relu_5"]  # the actual side's list is not msit's source
    assert {r["IsOutputNode"] for r in _csv(actual, golden).values()} == {"NO"}

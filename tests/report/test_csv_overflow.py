"""The msaccucmp/msit columns added to the CSV: OverFlow, and NPU ops compared with a producer."""
import csv
import io

import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef
from pytest_ascend_accuracy.report.csv_report import HEADER, csv_text


def _rows():
    t = TensorRef.from_array
    big = np.array([1, 65504, 2, 3], np.float16)
    actual = DumpSet([
        OpRecord("fine", "Add", outputs=(t(np.array([1, 2, 3, 4], np.float16)),), order=0),
        OpRecord("big", "Mul", outputs=(t(big),), order=1),
        OpRecord("inf", "Mul", outputs=(t(np.array([1, np.inf, 2, 3], np.float16)),), order=2),
        OpRecord("f32", "Mul", outputs=(t(np.array([1e6, 2, 3, 4], np.float32)),), order=3),
        OpRecord("trans_TransData_1", "TransData",
                 outputs=(t(np.array([1, 2, 3, 4], np.float16), origin=("fine", 0)),), order=4),
    ], meta={"om_json": "m.json", "npu_only_ops": ["trans_TransData_1"],
             "paired_via_producer": {"trans_TransData_1": "fine"}})
    golden = DumpSet.from_arrays({n: [np.array(v, np.float32)] for n, v in [
        ("fine", [1, 2, 3, 4]), ("big", [1, 65504, 2, 3]), ("inf", [1, 5, 2, 3]),
        ("f32", [1e6, 2, 3, 4])]})
    text = csv_text(compare_dumps(actual, golden))
    return [dict(zip(HEADER, r)) for r in list(csv.reader(io.StringIO(text)))[1:]]


def test_overflow_column_sits_after_shape_and_follows_msaccucmps_rule():
    assert HEADER[HEADER.index("Shape") + 1] == "OverFlow"
    assert [r["OverFlow"] for r in _rows()] == ["NO", "YES", "YES", "NaN", "NO"]


def test_npu_op_compared_with_its_producer_is_marked_as_msit_does():
    rows = _rows()
    trans = rows[-1]
    assert trans["NPUDump"] == "trans_TransData_1" and trans["GroundTruth"] == "*"
    assert trans["IsNpuOps"] == "YES" and trans["CosineSimilarity"] == "1.000000"
    assert trans["IsPrecisionError"] == "NO"

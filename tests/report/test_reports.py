"""CSV (msaccucmp columns), JSON (re-judgeable) and HTML (self-contained) reports."""
import csv
import io
import json
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.result import CompareResult
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef
from pytest_ascend_accuracy.report.csv_report import HEADER, csv_text, msit_precision_error, write_csv
from pytest_ascend_accuracy.report.html_report import chart_svg, html_text, write_html
from pytest_ascend_accuracy.report.json_report import write_json

MSACCUCMP_HEADER = (
    "Index,OpType,NPUDump,DataType,Address,GroundTruth,DataType,TensorIndex,Shape,OverFlow,"
    "CosineSimilarity,MaxAbsoluteError,AccumulatedRelativeError,RelativeEuclideanDistance,"
    "KullbackLeiblerDivergence,StandardDeviation,MeanAbsoluteError,RootMeanSquareError,"
    "MaxRelativeError,MeanRelativeError,CompareFailReason,IsNpuOps,IsOutputNode,IsPrecisionError")


def _result():
    t = TensorRef.from_array
    actual = DumpSet([
        OpRecord("conv1", "Conv2D", outputs=(t(np.array([[1, 2], [3, 4]], np.float16)),),
                 original_names=("/m/Conv", "/m/Relu"), order=0),
        OpRecord("TransData_1", "TransData", outputs=(t(np.ones(4, np.float16)),), order=1),
        OpRecord("add<script>", "Add", outputs=(t(np.array([1, -1], np.float16)),), order=2),
        OpRecord("out", "Mul", outputs=(t(np.array([2, 4], np.float16)),), order=3),
    ], meta={"npu_only_ops": ["TransData_1"]})
    golden = DumpSet.from_arrays({"_m_Conv": [np.zeros(4, np.float32)],
                                  "_m_Relu": [np.array([[1, 2], [3, 5]], np.float32)],
                                  "add<script>": [np.array([1, 1], np.float32)],
                                  "out": [np.array([2, 4], np.float32)]})
    golden.meta["output_nodes"] = ["out"]
    return compare_dumps(actual, golden)


def test_csv_header_is_msaccucmps_and_rows_follow_graph_order():
    r = _result()
    text = csv_text(r, r.judge(0.995))
    lines = text.splitlines()
    assert lines[0] == MSACCUCMP_HEADER == ",".join(HEADER)
    rows = list(csv.reader(io.StringIO(text)))[1:]
    assert [row[2] for row in rows] == ["conv1", "TransData_1", "add<script>", "out"]
    conv = dict(zip(HEADER, rows[0]))
    assert rows[0][:9] == ["0", "Conv2D", "conv1", "float16", "NaN", "/m/Conv,/m/Relu", "float32",
                           "conv1:output:0", "[2,2]"]  # msaccucmp writes no spaces
    assert conv["CosineSimilarity"] == "0.993999"
    assert conv["MaxAbsoluteError"] == "1.000000"
    assert conv["RelativeEuclideanDistance"] == "0.160128"
    assert conv["StandardDeviation"] == "(2.500;1.118),(2.750;1.479)"
    assert rows[0][-3:] == ["NO", "NO", "YES"]
    trans = rows[1]
    assert trans[5] == "*" and trans[9:20] == ["NaN"] * 11
    assert trans[20] == "NPU-only op (no framework op to compare with)"
    assert trans[-3:] == ["YES", "NO", "NO"]
    assert rows[2][-1] == "YES"
    assert rows[3][-3:] == ["NO", "YES", "NO"]  # output node from the golden meta


def test_csv_dictreader_keeps_the_golden_datatype_like_msaccucmp():
    r = _result()
    rows = list(csv.DictReader(io.StringIO(csv_text(r))))
    assert rows[0]["DataType"] == "float32"


def test_precision_error_without_verdict_is_msits_rule():
    r = _result()
    rows = list(csv.reader(io.StringIO(csv_text(r))))[1:]
    assert [row[-1] for row in rows] == ["YES", "NO", "YES", "NO"]
    assert not msit_precision_error(r.rows[1])


def test_write_csv_is_atomic_and_leaves_no_temporary(tmp_path):
    r = _result()
    out = tmp_path / "sub" / "report.csv"
    assert write_csv(r, out) == str(out)
    assert sorted(os.listdir(out.parent)) == ["report.csv"]
    out.write_text("old")
    write_csv(r, out)
    assert out.read_text().startswith("Index,")


def test_json_report_round_trips_and_rejudges(tmp_path):
    r = _result()
    v = r.judge(0.995)
    path = write_json(r, tmp_path / "r.json", v)
    data = json.loads(open(path).read())
    assert data["verdict"]["passed"] is False
    assert [f["op_name"] for f in data["verdict"]["failures"]] == ["conv1", "add<script>"]
    back = CompareResult.load(path)
    assert back.rows == r.rows
    assert back.judge(0.0).passed and not back.judge(0.995).passed


def test_html_is_self_contained_escaped_and_marks_the_first_failure(tmp_path):
    r = _result()
    v = r.judge(0.995)
    page = html_text(r, v)
    assert "<script" not in page and "add&lt;script&gt;" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page and "<link" not in page
    assert "first failure: conv1" in page
    assert "threshold 0.995000" in page
    assert page.count('<tr class="failed">') == 2
    svg = chart_svg(r, v)
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag.endswith("svg")
    path = write_html(r, tmp_path / "r.html", v)
    assert open(path, encoding="utf-8").read() == page


def test_html_chart_handles_nothing_compared():
    r = compare_dumps(DumpSet.from_arrays({"a": [np.ones(2)]}), DumpSet.from_arrays({"b": [np.ones(2)]}))
    assert "nothing to chart" in chart_svg(r, r.judge(0.9))


@pytest.mark.parametrize("metric", ["cosine", "rel_l2", "max_abs"])
def test_html_threshold_line_only_on_its_panel(metric):
    r = _result()
    v = r.judge(0.5 if metric == "cosine" else 0.1, metric=metric)
    svg = chart_svg(r, v)
    assert svg.count("threshold ") == (0 if metric == "max_abs" else 1)
    ET.fromstring(svg)

"""atc --mode=1 model json: write/read round trip and the real shape msaccucmp parses."""
import json

import pytest

from pytest_ascend_accuracy.dump.om_json import OmOp, read_om_json, write_om_json
from pytest_ascend_accuracy.errors import DumpFormatError

REAL_SHAPED = {
    "name": "resnet50",
    "attr": [{"key": "soc_version", "value": {"s": "Ascend310P3"}},
             {"key": "atc_cmdline", "value": {"s": "atc --model=r.onnx --framework=5"}},
             {"key": "attr_model_out_nodes_name", "value": {"list": {"val_type": 1, "s": ["y"]}}}],
    "graph": [{"name": "merge1", "op": [
        {"name": "conv1conv1_relu", "type": "Conv2D", "id": 2,
         "attr": [{"key": "_datadump_original_op_names",
                   "value": {"list": {"val_type": 1,
                                      "s": ["scale_conv1", "conv1", "bn_conv1", "conv1_relu"]}}}],
         "input": ["data:0", "dynamic_const_471:0", "xxxx:-1"],
         "output_desc": [{"attr": [{"key": "_datadump_origin_name", "value": {"s": "conv1_relu"}},
                                   {"key": "_datadump_origin_output_index", "value": {"i": 0}},
                                   {"key": "_datadump_origin_format", "value": {"s": "NCHW"}}]}]},
        {"name": "trans_TransData_1", "type": "TransData", "id": 1,
         "attr": [{"key": "_datadump_original_op_names", "value": {"list": {}}}],
         "input": ["data:0"], "output_desc": [{}]},
        {"name": "data", "type": "Data", "id": 0, "input": [""]},
    ]}],
}


def test_reads_the_real_shape(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(REAL_SHAPED))
    g = read_om_json(path)
    assert g.name == "resnet50"
    assert [op.name for op in g.ops] == ["data", "trans_TransData_1", "conv1conv1_relu"]
    conv = g.by_name["conv1conv1_relu"]
    assert conv.original_names == ("scale_conv1", "conv1", "bn_conv1", "conv1_relu")
    assert conv.output_origins == (("conv1_relu", 0),)
    assert conv.inputs == ("data:0", "dynamic_const_471:0", "xxxx:-1")
    trans = g.by_name["trans_TransData_1"]
    assert trans.npu_only and trans.original_names == () and trans.output_origins == (None,)
    assert not g.by_name["data"].npu_only and g.by_name["data"].original_names == ()
    assert g.attrs["soc_version"] == "Ascend310P3"
    assert g.attrs["attr_model_out_nodes_name"] == ("y",)


def test_round_trip(tmp_path):
    ops = [OmOp("fused", "Conv2D", 3, ("conv", "bn", "relu"), (("relu", 0), None),
                ("x:0", "w:0")),
           OmOp("cast_1", "Cast", 1, npu_only=True),
           OmOp("add", "Add", 2, inputs=("cast_1:0",))]
    attrs = {"soc_version": "Ascend910B", "atc_cmdline": "atc --mode=0", "n": 3, "flag": True}
    write_om_json(tmp_path / "m.json", "tiny", ops, attrs)
    g = read_om_json(tmp_path / "m.json")
    assert g.name == "tiny" and g.attrs == attrs
    expected = sorted((o.__class__(**{**o.__dict__, "graph": "tiny"}) for o in ops),
                      key=lambda o: o.id)
    assert list(g.ops) == expected


def test_written_json_has_the_atc_shape(tmp_path):
    write_om_json(tmp_path / "m.json", "tiny",
                  [OmOp("fused", "Conv2D", 0, ("conv", "relu"), (("relu", 0),))],
                  {"soc_version": "Ascend310P3"})
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["name"] == "tiny"
    assert doc["attr"] == [{"key": "soc_version", "value": {"s": "Ascend310P3"}}]
    (graph,) = doc["graph"]
    (op,) = graph["op"]
    assert graph["name"] == "tiny"
    assert op["attr"] == [{"key": "_datadump_original_op_names",
                           "value": {"list": {"val_type": 1, "s": ["conv", "relu"]}}}]
    assert op["output_desc"] == [{"attr": [
        {"key": "_datadump_origin_name", "value": {"s": "relu"}},
        {"key": "_datadump_origin_output_index", "value": {"i": 0}}]}]


@pytest.mark.parametrize("content,problem", [
    ("{not json", "not valid JSON"),
    ('{"name": "x"}', "not an atc --mode=1 model json: no 'graph' list"),
    ('{"graph": [{"op": [{"type": "Add"}]}]}', "graph[0].op[0]: op without a name"),
    ('{"graph": [{"op": [{"name": "a", "id": "x"}]}]}', "graph[0].op[0] (a): id 'x' is not an integer"),
    ('{"graph": [{"op": [{"name": "a", "output_desc": [{"attr": [{"key": '
     '"_datadump_origin_output_index", "value": {"i": "xxx"}}]}]}]}]}',
     "graph[0].op[0] (a) output_desc[0]: bad value of attr '_datadump_origin_output_index'"),
])
def test_bad_om_json_names_file_and_problem(tmp_path, content, problem):
    path = tmp_path / "m.json"
    path.write_text(content)
    with pytest.raises(DumpFormatError) as info:
        read_om_json(path)
    assert str(info.value).startswith(f"{path}: {problem}")

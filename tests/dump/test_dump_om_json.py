"""atc --mode=1 model json: write/read round trip and the real shape msaccucmp parses."""
import json

import pytest

from pytest_ascend_accuracy.dump.om_json import (ModelOutput, OmGraph, OmOp, OmTensorDesc,
                                                 om_framework_outputs, read_om_json, write_om_json)
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


def test_text_from_undecodable_bytes_is_written_and_read_back(tmp_path):
    """An AIPP file named from undecodable bytes (camera_\\xff.cfg) put a lone surrogate in the
    atc_cmdline: writing the emulator's om json failed a check with UnicodeEncodeError (a
    review); it is written as a JSON escape and reads back as the same text."""
    attrs = {"atc_cmdline": "atc --insert_op_conf=camera_\udcff.cfg"}
    write_om_json(tmp_path / "m.json", "tiny", [OmOp("add", "Add", 0)], attrs)
    assert read_om_json(tmp_path / "m.json").attrs == attrs


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
                           "value": {"list": {"val_type": "VT_LIST_STRING",
                                              "s": ["conv", "relu"]}}}]
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


# ----------------------------------------------------------------------- what real ATC writes
# Built in code with the structure of the real ATC 5.1 / 6.0 files listed in
# docs/ascend_backend.md (never copied): enum-name val_type, null attr values, the Data op
# without "id", control inputs "x:-1", "" inputs, device output descs, out-node names.
def _desc(dtype, layout, shape, origin_shape, origin=None, fmt="NCHW"):
    attr = [{"key": "origin_shape_range", "value": None},
            {"key": "origin_format", "value": {"s": fmt}},
            {"key": "origin_shape", "value": {"list": {"i": origin_shape,
                                                       "val_type": "VT_LIST_INT"}}}]
    if origin:
        attr += [{"key": "_datadump_origin_name", "value": {"s": origin[0]}},
                 {"key": "_datadump_origin_output_index", "value": {"i": origin[1]}},
                 {"key": "_datadump_origin_format", "value": {"s": fmt}}]
    return {"dtype": dtype, "layout": layout, "shape": {"dim": shape}, "attr": attr}


EMPTY_NAMES = {"key": "_datadump_original_op_names",
               "value": {"list": {"val_type": "VT_LIST_STRING"}}}
ATC6_SHAPED = {
    "name": "tdnn",
    "attr": [{"key": "attr_model_out_nodes_name", "value": {"list": {
        "s": ["Cast_9:0:output0", "Gather_7_gatherv2_3:0:output2", "Reshape_8:0:output1"],
        "val_type": "VT_LIST_STRING"}}},
        {"key": "tasks", "value": None},
        {"key": "needCheckCpu", "value": {"list": {"val_type": "VT_LIST_STRING"}}}],
    "graph": [{"name": "tdnn_NPU_0", "op": [
        {"name": "feats", "type": "Data", "input": [""],
         "output_desc": [_desc("DT_FLOAT", "NCHW", [1, 6, 20], [1, 6, 20])]},
        {"name": "atomic_addr_clean", "type": "AtomicAddrClean", "id": 1},
        {"name": "Pad_49", "type": "PadV3", "id": 2,
         "input": ["feats:0", "dynamic_const_1:0", "atomic_addr_clean:-1"],
         "output_desc": [_desc("DT_FLOAT16", "NCHW", [1, 6, 24], [1, 6, 24])]},
        {"name": "trans_TransData_4", "type": "TransData", "id": 3, "attr": [EMPTY_NAMES],
         "input": ["Pad_49:0"],
         "output_desc": [_desc("DT_FLOAT16", "NC1HWC0", [1, 1, 1, 24, 16], [1, 6, 1, 24],
                               origin=("Conv_52", 0))]},
        {"name": "If_3", "type": "If", "id": 4, "input": ["trans_TransData_4:0"],
         "subgraph_name": ["then_3", "else_3"]},
        {"name": "Node_Output", "type": "NetOutput", "id": 5, "attr": [EMPTY_NAMES],
         "input": ["If_3:0"]},
    ]}, {"name": "then_3", "op": [{"name": "t_relu", "type": "Relu", "id": 1},
                                  {"name": "t_in", "type": "Data"}]},
        {"name": "else_3", "op": [{"name": "e_neg", "type": "Neg", "id": 1}]}],
}


def test_reads_what_real_atc_writes(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(ATC6_SHAPED))
    g = read_om_json(path)
    # execution order: main graph by id (Data without "id" is 0), each sub-graph after its If
    assert [op.name for op in g.ops] == ["feats", "atomic_addr_clean", "Pad_49",
                                         "trans_TransData_4", "If_3", "t_in", "t_relu",
                                         "e_neg", "Node_Output"]
    assert g.graphs == ("tdnn_NPU_0", "then_3", "else_3")
    assert g.sub_graphs == ("then_3", "else_3")
    assert g.by_name["If_3"].subgraphs == ("then_3", "else_3")
    assert g.by_name["t_relu"].graph == "then_3"
    pad = g.by_name["Pad_49"]
    assert pad.data_inputs == (("feats", 0), ("dynamic_const_1", 0))
    assert g.by_name["feats"].data_inputs == ()
    trans = g.by_name["trans_TransData_4"]
    assert trans.npu_only and trans.output_origins == (("Conv_52", 0),)
    (desc,) = trans.output_descs
    assert (desc.dtype, desc.layout, desc.shape, desc.origin_shape, desc.origin_format) == (
        "DT_FLOAT16", "NC1HWC0", (1, 1, 1, 24, 16), (1, 6, 1, 24), "NCHW")
    assert g.attrs["tasks"] is None and g.attrs["needCheckCpu"] == ()


def test_model_outputs_follow_attr_model_out_nodes_name(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(ATC6_SHAPED))
    outs = read_om_json(path).model_outputs
    # om output 1 is the framework's "output2" (as in the real ATC 5.1 NMS file)
    assert [o.name for o in outs] == ["output0", "output2", "output1"]
    assert outs[1] == ModelOutput("Gather_7_gatherv2_3", 0, "output2")
    older = OmGraph("m", (), {"attr_model_out_nodes_name": ("a:1", "plain")})
    assert om_framework_outputs(older) == (ModelOutput("a", 1, "a:1"),
                                           ModelOutput("plain", 0, "plain"))
    assert om_framework_outputs(OmGraph("m", ())) == ()


def test_writer_emits_device_descs_and_npu_only_ops_like_atc(tmp_path):
    desc = OmTensorDesc("DT_FLOAT16", "NC1HWC0", (1, 1, 1, 24, 16), (1, 6, 1, 24), "NCHW")
    ops = [OmOp("Pad_49", "PadV3", 2, inputs=("feats:0",),
                output_descs=(OmTensorDesc("DT_FLOAT16", "NCHW", (1, 6, 24), (1, 6, 24), "NCHW"),)),
           OmOp("trans_TransData_4", "TransData", 3, output_origins=(("Conv_52", 0),),
                inputs=("Pad_49:0",), npu_only=True, output_descs=(desc,)),
           OmOp("If_3", "If", 4, subgraphs=("then_3",)),
           OmOp("t_relu", "Relu", 0, graph="then_3")]
    write_om_json(tmp_path / "m.json", "tdnn", ops,
                  {"attr_model_out_nodes_name": ["Relu_1:0:output"]})
    doc = json.loads((tmp_path / "m.json").read_text())
    main, sub = doc["graph"]
    trans = main["op"][1]
    assert trans["attr"] == [EMPTY_NAMES]
    (out,) = trans["output_desc"]
    assert (out["dtype"], out["layout"], out["shape"]) == ("DT_FLOAT16", "NC1HWC0",
                                                           {"dim": [1, 1, 1, 24, 16]})
    attrs = {a["key"]: a["value"] for a in out["attr"]}
    assert attrs["origin_shape"] == {"list": {"i": [1, 6, 1, 24], "val_type": "VT_LIST_INT"}}
    assert attrs["origin_format"] == attrs["_datadump_origin_format"] == {"s": "NCHW"}
    assert attrs["_datadump_origin_name"] == {"s": "Conv_52"}
    assert main["op"][2]["subgraph_name"] == ["then_3"] and sub["name"] == "then_3"
    assert doc["attr"][0]["value"]["list"]["val_type"] == "VT_LIST_STRING"
    g = read_om_json(tmp_path / "m.json")
    assert [op.name for op in g.ops] == ["Pad_49", "trans_TransData_4", "If_3", "t_relu"]
    assert g.by_name["trans_TransData_4"].output_descs == (desc,)
    assert g.by_name["t_relu"].output_descs == () and g.sub_graphs == ("then_3",)
    assert g.model_outputs == (ModelOutput("Relu_1", 0, "output"),)


def test_an_om_json_of_another_model_is_an_error_naming_it(tmp_path):
    """A user passed another model's om json (a real msquickcmp model.json of an NMS tail for
    a tdnn dump: only ATC's generic trans_Cast_0 in common); pairing by it named a false first
    failure (trans_TransData_4 'matched' to Conv_52 by the dump header's origin). The om json
    written here has the real file's shape (REAL_SHAPED)."""
    import numpy as np

    from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
    from pytest_ascend_accuracy.dump.loader import load_dump

    other = json.loads(json.dumps(REAL_SHAPED))
    other["name"] = "sub_model"
    other["graph"][0]["op"].append({"name": "trans_Cast_0", "type": "Cast", "id": 3,
                                    "input": ["data:0"]})
    (tmp_path / "other.json").write_text(json.dumps(other))
    x = np.ones((1, 4), np.float16)
    with AscendDumpWriter(tmp_path / "dump") as w:
        w.write_op("Cast", "trans_Cast_0", [], [x])
        w.write_op("Conv2D", "PartitionedCall_Conv_52_Conv2D_12", [], [x])
        w.write_op("LeakyRelu", "LeakyRelu_174", [], [x])
    with pytest.raises(DumpFormatError) as err:
        load_dump(tmp_path / "dump", om_json=tmp_path / "other.json")
    text = str(err.value)
    assert text.startswith(f"{tmp_path / 'other.json'}: 2 of the dump's 3 ops "
                           "(PartitionedCall_Conv_52_Conv2D_12, LeakyRelu_174) are not in this "
                           "om json (model 'sub_model', 4 ops), and the others are ATC's "
                           "conversion ops (trans_*)"), text
    assert "pass the om json of the model that made the dump" in text
    # a json of the dump's own model, even one listing only some of its ops, is taken
    own = json.loads(json.dumps(REAL_SHAPED))
    own["graph"][0]["op"].append({"name": "LeakyRelu_174", "type": "LeakyRelu", "id": 4,
                                  "input": ["data:0"]})
    (tmp_path / "own.json").write_text(json.dumps(own))
    assert len(load_dump(tmp_path / "dump", om_json=tmp_path / "own.json").ops) == 3


def test_an_origin_without_its_index_attr_is_the_descs_own_output(tmp_path):
    """msaccucmp (``fusion_rule_parser._parse_output_desc``) takes a missing
    ``_datadump_origin_output_index`` as the desc's position; output 1 of a Split whose json
    leaves the index out is the golden's output 1, not its output 0. A present but empty value
    (proto3 JSON leaves a zero out) is 0."""
    def desc(index_attr):
        return {"attr": [{"key": "_datadump_origin_name", "value": {"s": "Split_3"}}]
                + index_attr}
    graph = {"name": "m", "graph": [{"name": "g", "op": [
        {"name": "Split_3", "type": "SplitD", "id": 1, "input": ["x:0"],
         "output_desc": [desc([]), desc([]),
                         desc([{"key": "_datadump_origin_output_index", "value": {}}])]}]}]}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(graph))
    assert read_om_json(path).by_name["Split_3"].output_origins == (
        ("Split_3", 0), ("Split_3", 1), ("Split_3", 0))


def test_out_node_names_holding_a_colon_keep_it(tmp_path):
    """GE writes ``node:index:tensor_name`` with the framework's tensor name as is, and
    tf2onnx names outputs like ``Identity:0``: the name is everything after the index. Where
    two readings are possible, the one whose node is in the json wins."""
    graph = OmGraph("m", (OmOp("Add_7", "Add", 1), OmOp("x:1:y", "Relu", 2)),
                    attrs={"attr_model_out_nodes_name": [
                        "Add_7:0:Identity:0", "Cast_1219:0:output0", "x:1:y:0:out", "n:2"]})
    assert om_framework_outputs(graph) == (ModelOutput("Add_7", 0, "Identity:0"),
                                           ModelOutput("Cast_1219", 0, "output0"),
                                           ModelOutput("x:1:y", 0, "out"),
                                           ModelOutput("n", 2, "n:2"))

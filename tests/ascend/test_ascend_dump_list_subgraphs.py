"""acl.json's dump_list names every sub-graph model the loader expects a dump of
(``OmGraph.sub_graphs``): the branches an If op names in ``subgraph_name``, as msit's
``get_sub_graph_name`` lists them (Ascend/msit msquickcmp/npu/om_parser.py), not only the
om json's ``graph[1:]``. A branch named only by its op was never dumped and its ops left the
comparison without a word (H107)."""
import json

from pytest_ascend_accuracy.backends.ascend.backend import _subgraph_names
from pytest_ascend_accuracy.dump.om_json import read_om_json


def _om_json(path, graphs):
    ops = [{"name": "x", "type": "Data", "attr": []},
           {"name": "if1", "type": "If", "id": 1, "input": ["x:0"],
            "subgraph_name": ["then_b", "else_b"], "attr": []}]
    doc = {"name": "m", "graph": [{"name": "m_NPU_0", "op": ops}]
           + [{"name": g, "op": []} for g in graphs]}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_branches_an_op_names_are_in_the_dump_list(tmp_path):
    path = _om_json(tmp_path / "m.json", [])
    assert _subgraph_names(path) == ["then_b", "else_b"] == list(read_om_json(path).sub_graphs)


def test_graphs_listed_and_named_by_ops_are_each_in_it_once(tmp_path):
    path = _om_json(tmp_path / "m.json", ["then_b", "extra"])
    assert _subgraph_names(path) == ["then_b", "extra", "else_b"]


def test_an_unreadable_om_json_gives_none(tmp_path):
    (tmp_path / "m.json").write_text("{", encoding="utf-8")
    assert _subgraph_names(tmp_path / "m.json") == []


def test_an_empty_or_malformed_subgraph_name_names_no_model(tmp_path):
    """GE serializes a removed sub-graph instance as "" (OpDesc::RemoveSubgraphInstanceName):
    put in dump_list, our own acl.json writer refused it and every dumped run failed (H108)."""
    doc = {"name": "m", "graph": [{"name": "m", "op": [
        {"name": "a", "type": "PartitionedCall", "subgraph_name": [""], "attr": []},
        {"name": "b", "type": "If", "subgraph_name": {"x": 1}, "attr": []},
        {"name": "c", "type": "If", "subgraph_name": ["then_c", 7, ""], "attr": []}]}]}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert _subgraph_names(path) == ["then_c"]

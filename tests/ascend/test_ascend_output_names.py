"""Om outputs are named by the om json's ``attr_model_out_nodes_name`` (om output i ->
``node:index:name``), not by ONNX ``graph.output`` order, which ATC does not keep (real ATC 5.1
file: om output 1 is the framework's ``output2``). Against the FAKE atc, which orders om outputs
by where their producer runs, and with om jsons written in code."""
import numpy as np
import pytest

from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
from pytest_ascend_accuracy.backends.ascend.output_names import om_output_names
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.dump.om_json import OmOp, write_om_json
from pytest_ascend_accuracy.errors import DumpFormatError
from pytest_ascend_accuracy.testing import fake_runtime


def two_output_model(path):
    """x -> Relu (relu_e) -> "early"; x -> Neg -> Sigmoid (sig_l) -> "late"; graph.output lists
    "late" first, so ONNX order and execution order disagree."""
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Relu", ["x"], ["early"], name="relu_e"),
             helper.make_node("Neg", ["x"], ["n"], name="neg"),
             helper.make_node("Sigmoid", ["n"], ["late"], name="sig_l")]
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in ("x", "late", "early")]
    graph = helper.make_graph(nodes, "two", [io[0]], io[1:])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_outputs_follow_the_om_json_not_onnx_order(tmp_path, fake_atc_on_path, monkeypatch):
    from pytest_ascend_accuracy.dump.om_json import om_framework_outputs, read_om_json

    fake_runtime.install(monkeypatch, flavor="acl")
    model = two_output_model(tmp_path / "two.onnx")
    x = np.array([[-2.0, -0.5, 0.5, 2.0]], dtype=np.float32)
    with AscendBackend(Cache(tmp_path / "cache"), soc_version="Ascend310P3", progress=None) as be:
        om = be.convert(model)
        entries = om_framework_outputs(read_om_json(om.om_json))
        assert [(m.node, m.index, m.name) for m in entries] == [("relu_e", 0, "early"), ("sig_l", 0, "late")]
        assert om.info["output_names"] == ["late", "early"]  # ONNX order: the other way round
        got = be.outputs(om, {"x": x})
        plain = be.run(om, {"x": x}, dump=False)
    assert list(got) == ["early", "late"]
    np.testing.assert_allclose(got["early"], np.maximum(x, 0))
    np.testing.assert_allclose(got["late"], 1 / (1 + np.exp(x)), rtol=1e-6)
    assert {op.name: op.outputs[0].load().tolist() for op in plain.ops} == {k: v.tolist() for k, v in got.items()}


def om_json_with(tmp_path, out_nodes):
    path = tmp_path / "m.json"
    attrs = {"attr_model_out_nodes_name": out_nodes} if out_nodes is not None else {}
    write_om_json(path, "m", [OmOp(name="relu_e", type="Relu", id=1), OmOp(name="sig_l", type="Sigmoid", id=2)],
                  attrs)
    return path


def test_older_node_index_entries_and_missing_attr(tmp_path):
    model = two_output_model(tmp_path / "two.onnx")
    onnx_order = ["late", "early"]
    # ATC writing only "node:index": resolved through the ONNX graph
    assert om_output_names(om_json_with(tmp_path, ["relu_e:0", "sig_l:0"]), onnx_order, 2, model) == [
        "early", "late"]
    # an --out_nodes output that is no ONNX graph output keeps the attr's name
    assert om_output_names(om_json_with(tmp_path, ["neg:0:n", "sig_l:0:late"]), onnx_order, 2, model) == [
        "n", "late"]
    # no attr at all: ONNX graph.output order is all there is
    assert om_output_names(om_json_with(tmp_path, None), onnx_order, 2, model) == onnx_order


def test_attr_that_disagrees_with_the_run_names_the_file(tmp_path):
    path = om_json_with(tmp_path, ["relu_e:0:early"])
    with pytest.raises(DumpFormatError, match=r"m\.json.*attr_model_out_nodes_name lists 1 output\(s\) but "
                                              r"the model produced 2"):
        om_output_names(path, ["late", "early"], 2)

"""A QDQ model's Gather reads its table through DequantizeLinear (onnxruntime quantize_static,
QDQ: ``DequantizeLinear(weight_quantized)``), a float16 conversion's through a Cast: the seeded
``token_type_ids`` of bert_tiny_qdq drew from [0, 10) into its 2-row table and every check
failed with onnxruntime's "idx=9 must be within the inclusive range [-2,1]" (H337)."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from pytest_ascend_accuracy.graph.integer_ranges import integer_highs
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


def _model(chain):
    """ids (int64 [1, 16]) -> Gather from a 2-row table reached through ``chain``."""
    table = np.arange(8, dtype=np.int8).reshape(2, 4)
    inits = [nh.from_array(table, "t_q"), nh.from_array(np.array(0.1, np.float32), "t_s"),
             nh.from_array(np.array(0, np.int8), "t_zp")]
    if chain == "qdq":
        nodes = [h.make_node("DequantizeLinear", ["t_q", "t_s", "t_zp"], ["t"], name="dq")]
    else:  # a Cast, then an Identity, of the int8 table
        nodes = [h.make_node("Cast", ["t_q"], ["t_c"], to=TP.FLOAT, name="cast"),
                 h.make_node("Identity", ["t_c"], ["t"], name="id")]
    nodes.append(h.make_node("Gather", ["t", "ids"], ["y"], name="token_type_embeddings/Gather"))
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("ids", TP.INT64, [1, 16])],
                         [h.make_tensor_value_info("y", TP.FLOAT, [1, 16, 4])], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])


@pytest.mark.parametrize("chain", ["qdq", "cast"])
def test_a_table_behind_dequantize_or_cast_bounds_the_seeded_indices(tmp_path, chain):
    model = _model(chain)
    onnx.checker.check_model(model)
    assert integer_highs(model, ["ids"]) == {"ids": 2}
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    inputs = make_inputs(path, seed=0)
    assert inputs["ids"].min() >= 0 and inputs["ids"].max() == 1
    ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, inputs)


def test_a_reshaped_table_is_not_taken_for_its_source_s_shape():
    """Only ops that keep the shape carry the size: a Reshape of the table changes its rows."""
    model = _model("qdq")
    model.graph.initializer.append(nh.from_array(np.array([8], np.int64), "flat"))
    gather = model.graph.node[-1]
    model.graph.node.insert(1, h.make_node("Reshape", ["t", "flat"], ["t8"], name="r"))
    gather.input[0] = "t8"
    assert integer_highs(model, ["ids"]) == {}

"""``make_inputs(given=...)``, what ``accuracy_inputs(m, seed=0, inputs={...})`` draws the
inputs left out with: the given arrays as they are, the others seeded at sizes the given ones
tell."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


def bert_like():
    """input_ids [batch, seq] into a 100-row table, attention_mask [batch, seq] multiplying it."""
    emb = numpy_helper.from_array(np.random.default_rng(0).standard_normal((100, 8))
                                  .astype(np.float32), "emb")
    ax = numpy_helper.from_array(np.array([2], np.int64), "ax")
    nodes = [helper.make_node("Gather", ["emb", "input_ids"], ["e"], name="embed"),
             helper.make_node("Cast", ["attention_mask"], ["mf"], to=1, name="castm"),
             helper.make_node("Unsqueeze", ["mf", "ax"], ["mu"], name="unsq"),
             helper.make_node("Mul", ["e", "mu"], ["y"], name="apply")]
    graph = helper.make_graph(
        nodes, "bertlike",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 8])], [emb, ax])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_a_given_array_sizes_the_named_dims_other_inputs_share():
    """A review: ``accuracy_inputs(m, seed=0, inputs={"input_ids": (2, 16) array})`` refused
    attention_mask's [batch, seq] as dynamic; one name is one size, so it takes (2, 16)."""
    ids = np.arange(32, dtype=np.int64).reshape(2, 16) % 100
    out = make_inputs(bert_like(), seed=0, given={"input_ids": ids})
    assert out["input_ids"] is not None and np.array_equal(out["input_ids"], ids)
    assert out["attention_mask"].shape == (2, 16)
    assert set(np.unique(out["attention_mask"])) <= {0, 1}  # (a mask, as seeded masks are)

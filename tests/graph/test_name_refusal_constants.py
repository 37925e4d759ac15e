"""The name refusal says onnxruntime refuses the model too only where it does: onnxruntime
makes ``Constant`` nodes initializers before it checks node names, so a model whose repeated
names are all Constants' (silero_vad_openvino_16k.onnx: 15 Constants named ``F0::anon``) loads
and runs there (an audit: the refusal claimed onnxruntime refused it). Each case is checked
against onnxruntime itself, so the words follow what it does."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from pytest_ascend_accuracy.graph.parser_refusals import name_refusal

ORT_CLAUSE = "onnxruntime refuses to load it too"


def _model(kinds):
    """A chain on x: each "Constant" an Add of a Constant node, each "Relu" a Relu; the
    Constants and the Relus all named ``dup``."""
    nodes, prev = [], "x"
    for i, kind in enumerate(kinds):
        if kind == "Constant":
            nodes.append(helper.make_node("Constant", [], [f"c{i}"], name="dup",
                                          value=helper.make_tensor(f"v{i}", TensorProto.FLOAT,
                                                                   [1], [1.0])))
            nodes.append(helper.make_node("Add", [prev, f"c{i}"], [f"a{i}"], name=f"add{i}"))
            prev = f"a{i}"
        else:
            nodes.append(helper.make_node("Relu", [prev], [f"r{i}"], name="dup"))
            prev = f"r{i}"
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [1])],
                              [helper.make_tensor_value_info(prev, 1, [1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _ort_loads(model) -> bool:
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
    except Exception as exc:
        assert "two nodes with same node name" in str(exc)
        return False
    session.run(None, {"x": np.ones(1, np.float32)})
    return True


@pytest.mark.parametrize("kinds, refused", [
    (["Constant", "Constant", "Constant"], False),  # silero_vad_openvino_16k's case
    (["Constant", "Relu"], False),  # the Constant leaves the graph: one dup is left
    (["Relu", "Relu"], True),
    (["Constant", "Relu", "Relu"], True),
])
def test_onnxruntime_is_said_to_refuse_only_what_it_refuses(kinds, refused):
    model = _model(kinds)
    assert _ort_loads(model) is not refused
    text = name_refusal("dups", model.graph)
    assert "ATC's ONNX parser refuses it" in text  # ATC keeps Constant nodes as ops
    assert (ORT_CLAUSE in text) is refused

"""graph.prepare.sort_nodes: nodes listed out of order (onnxruntime runs them, onnx.checker
refuses them) are put in an order that runs, keeping the file's order where it already does,
so that dumps and "the first failure in graph order" follow the data."""
import numpy as np
import pytest

from pytest_ascend_accuracy.graph.prepare import prepare_model, sort_nodes
from pytest_ascend_accuracy.testing import models

onnx = pytest.importorskip("onnx")


def _reversed(model):
    nodes = list(model.graph.node)[::-1]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model


def test_a_sorted_graph_is_left_alone_and_a_reversed_one_sorted_back():
    model = models.overflow_model()
    listed = [n.name for n in model.graph.node]
    assert sort_nodes(model.graph) is False and [n.name for n in model.graph.node] == listed
    back = _reversed(models.overflow_model())
    assert sort_nodes(back.graph) is True and [n.name for n in back.graph.node] == listed
    prepared = prepare_model(_reversed(models.overflow_model())).model
    assert [n.name for n in prepared.graph.node] == listed


def test_independent_nodes_keep_the_files_order():
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    ys = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("y", "z")]
    nodes = [helper.make_node("Relu", ["a"], ["y"], name="late"),
             helper.make_node("Neg", ["x"], ["z"], name="free"),
             helper.make_node("Abs", ["x"], ["a"], name="early")]
    graph = helper.make_graph(nodes, "g", [x], ys)
    assert sort_nodes(graph) is True
    assert [n.name for n in graph.node] == ["free", "early", "late"]


def test_the_first_failure_of_a_reversed_model_is_the_op_that_went_wrong(tmp_path):
    """A reviewer's overflow model with its nodes reversed named fc2/MatMul (#0), downstream of
    the failing norm."""
    pytest.importorskip("onnxruntime")
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    model = _reversed(models.overflow_model())
    cache = Cache(tmp_path / "cache")
    inputs = {k: np.asarray(v) for k, v in make_inputs(models.overflow_model()).items()}
    backend = EmulatorBackend(cache)
    actual = backend.run(backend.convert(model), inputs, dump=True, dump_dir=tmp_path / "d")
    verdict = compare_dumps(actual, golden_dump(model, inputs, cache=cache)).judge(0.95)
    assert verdict.first.row.op_name == "norm"

"""A golden run that fails at the shapes given says at which shapes, and where two inputs share
a named dimension ('T' of ``a`` and ``b``) given two sizes, that this is why: a trial's
``inputs: {shapes: {a: [1, 5, 8], b: [1, 6, 8]}}`` got only onnxruntime's 'Node (add) Op (Add)
[ShapeInferenceError] Incompatible dimensions', and a Reshape failing at a width named none."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from pytest_ascend_accuracy.core.cache import Cache  # noqa: E402
from pytest_ascend_accuracy.errors import BackendError  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402


def _model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "dyn", inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def shared_t():
    """a [N, T, 8] + b [N, T, 8] -> add."""
    vi = helper.make_tensor_value_info
    return _model([helper.make_node("Add", ["a", "b"], ["y"], name="add")],
                  [vi("a", TensorProto.FLOAT, ["N", "T", 8]),
                   vi("b", TensorProto.FLOAT, ["N", "T", 8])],
                  [vi("y", TensorProto.FLOAT, ["N", "T", 8])])


def test_a_named_dimension_given_two_sizes_is_named(tmp_path):
    model = shared_t()
    inputs = make_inputs(model, input_shape={"a": [1, 5, 8], "b": [1, 6, 8]})
    with pytest.raises(BackendError) as info:
        golden_dump(model, inputs, cache=Cache(tmp_path / "c"))
    text = str(info.value)
    assert "Incompatible dimensions" in text  # onnxruntime's own words stay
    assert "at input shapes a: [1, 5, 8], b: [1, 6, 8]" in text
    assert "'T' is one size in the model (dimension 1 of 'a' and dimension 1 of 'b'), " \
           "given 5 and 6" in text


def test_a_reshape_failing_at_the_shapes_given_names_them(tmp_path):
    vi = helper.make_tensor_value_info
    model = _model([helper.make_node("Reshape", ["x", "rows"], ["y"], name="to_rows")],
                   [vi("x", TensorProto.FLOAT, ["N", "W"])], [vi("y", TensorProto.FLOAT, None)],
                   [numpy_helper.from_array(np.array([-1, 16], np.int64), "rows")])
    with pytest.raises(BackendError) as info:
        golden_dump(model, make_inputs(model, input_shape={"x": [1, 12]}),
                    cache=Cache(tmp_path / "c"))
    assert "to_rows" in str(info.value)
    assert "at input shapes x: [1, 12]" in str(info.value)
    assert "one size" not in str(info.value)


def test_no_shapes_given_adds_nothing():
    """A model of no inputs read '(at input shapes )' in its failure (review)."""
    from pytest_ascend_accuracy.graph.shared_dims import failure_context

    assert failure_context("any.onnx", {}) == ""

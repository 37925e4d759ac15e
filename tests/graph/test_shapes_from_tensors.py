"""The sizes a dynamic model's inputs had, read back from the shapes of a run's tensors: a
stored golden of a BERT with ``batch``/``seq`` inputs recorded no input shape, and the diagnose
command printed from it was refused ('3 inputs are left dynamic'). Only sizes that hold
together are returned."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.graph.shapes_from_tensors import input_shapes_from_tensors


def _tokens(ids_dims=("batch", "seq"), mask_dims=("batch", "seq")):
    """ids -> Gather of a [10, 4] table -> emb [batch, seq, 4]; mask -> Unsqueeze -> Mul."""
    inits = [numpy_helper.from_array(np.zeros((10, 4), np.float32), "table"),
             numpy_helper.from_array(np.array([2], np.int64), "axis2"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two")]
    nodes = [helper.make_node("Gather", ["table", "ids"], ["emb"], name="emb/Gather"),
             helper.make_node("Unsqueeze", ["mask", "axis2"], ["m3"], name="mask/Unsqueeze"),
             helper.make_node("Mul", ["m3", "two"], ["m2"], name="mask/Mul"),
             helper.make_node("Add", ["emb", "m2"], ["y"])]  # unnamed: golden names it Add_0
    graph = helper.make_graph(
        nodes, "tokens",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, list(ids_dims)),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, list(mask_dims))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_named_dimensions_take_the_sizes_of_the_tensors_they_reach():
    found = input_shapes_from_tensors(_tokens(), [("emb/Gather", "output:0", (2, 8, 4))])
    assert found == {"ids": (2, 8), "mask": (2, 8)}  # 'mask' shares the names


def test_file_name_stems_and_the_goldens_names_of_unnamed_nodes_are_matched():
    found = input_shapes_from_tensors(_tokens(mask_dims=("b2", "s2")),
                                      [("emb_Gather", "output:0", (3, 5, 4)),
                                       ("mask_Mul", "output:0", (3, 5, 1))])
    assert found == {"ids": (3, 5), "mask": (3, 5)}
    assert input_shapes_from_tensors(_tokens(), [("Add_0", "output:0", (1, 6, 4))]) == {
        "ids": (1, 6), "mask": (1, 6)}


def test_an_unnamed_dynamic_dimension_is_followed_too():
    found = input_shapes_from_tensors(_tokens(ids_dims=(None, None), mask_dims=(1, None)),
                                      [("emb/Gather", "output:0", (1, 7, 4)),
                                       ("mask/Mul", "output:0", (1, 7, 1))])
    assert found == {"ids": (1, 7), "mask": (1, 7)}


def test_a_stored_op_input_gives_a_graph_inputs_shape_even_without_a_rank():
    model = _tokens()
    del model.graph.input[0].type.tensor_type.shape.dim[:]
    model.graph.input[0].type.tensor_type.ClearField("shape")
    found = input_shapes_from_tensors(model, [("emb/Gather", "input:1", (4, 3)),
                                              ("mask/Mul", "output:0", (4, 3, 1))])
    assert found == {"ids": (4, 3), "mask": (4, 3)}


def test_sizes_given_for_one_input_name_the_shared_dimensions_of_the_others():
    found = input_shapes_from_tensors(_tokens(), [], given={"ids": (2, 9)})
    assert found == {"mask": (2, 9)}


def test_two_sizes_for_one_name_or_a_shape_the_model_refutes_give_nothing():
    assert input_shapes_from_tensors(_tokens(), [("emb/Gather", "output:0", (2, 8, 4)),
                                                 ("mask/Mul", "output:0", (2, 9, 1))]) == {}
    # rank or a fixed size that does not fit: the tensor says nothing
    assert input_shapes_from_tensors(_tokens(), [("emb/Gather", "output:0", (2, 8, 5)),
                                                 ("mask/Mul", "output:0", (2, 8))]) == {}
    # a stored shape that the sizes found contradict once inferred: nothing is trusted
    assert input_shapes_from_tensors(_tokens(mask_dims=("b2", "s2")),
                                     [("emb/Gather", "output:0", (2, 8, 4)),
                                      ("mask/Mul", "output:0", (2, 9, 1)),
                                      ("Add_0", "output:0", (2, 8, 4))]) == {}


def test_nothing_is_read_for_a_static_model_and_nothing_told_gives_nothing(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_tokens(ids_dims=(2, 8), mask_dims=(2, 8)), str(path))
    assert input_shapes_from_tensors(str(path), iter(())) == {}
    assert input_shapes_from_tensors(_tokens(), [("nope", "output:0", (2, 8, 4)),
                                                 ("emb/Gather", "output:7", (2, 8, 4))]) == {}

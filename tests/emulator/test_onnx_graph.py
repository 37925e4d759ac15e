"""Graph preparation shared by golden and emulator: names, input shapes, inputs, If, Loop."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from pytest_ascend_accuracy.errors import ConfigError  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import (check_inputs, make_inputs, mark_all_outputs,  # noqa: E402
                                                     node_output_names, ort_session,
                                                     parse_input_shape)
from pytest_ascend_accuracy.graph.prepare import prepare_model  # noqa: E402
from pytest_ascend_accuracy.graph.names import normalize_node_names  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402


def _graph(nodes, inputs=(("x", [2, 4]),), inits=()):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                          [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, None)],
                          initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_unnamed_nodes_get_atc_names():
    """ATC's ONNX parser counts the unnamed nodes only (AdaptAndFindAllOnnxGraph: op_type +
    "_" + index++), so the Relu after two nodes, one named, is Relu_1; msit's position count
    (Relu_2) paired a device's Relu_1 with another node's golden tensor (review helper)."""
    model = models.unnamed_model()
    counts = normalize_node_names(model.graph)
    assert [n.name for n in model.graph.node] == ["MatMul_0", "dup", "Relu_1", "dup_1"]
    assert counts == {"unnamed": 2, "renamed_duplicates": 0}
    mixed = _graph([helper.make_node("Neg", ["x"], ["a"], name="first"),
                    helper.make_node("Abs", ["a"], ["b"]), helper.make_node("Abs", ["b"], ["c"])])
    normalize_node_names(mixed.graph)
    assert [n.name for n in mixed.graph.node] == ["first", "Abs_0", "Abs_1"]


def test_uniquified_names_avoid_every_existing_name():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="Relu_0"),
             helper.make_node("Relu", ["a"], ["b"]),                 # -> Relu_0, taken
             helper.make_node("Relu", ["b"], ["c"], name="Relu_0_1"),
             helper.make_node("Relu", ["c"], ["d"], name="Relu_0")]
    model = _graph(nodes)
    normalize_node_names(model.graph)
    names = [n.name for n in model.graph.node]
    assert names == ["Relu_0", "Relu_0_2", "Relu_0_1", "Relu_0_3"]
    assert len(set(names)) == 4


def test_naming_is_the_same_for_golden_and_emulator_preparation():
    a = prepare_model(models.unnamed_model(), input_shape={"x": (2, 4)}).model
    b = prepare_model(models.unnamed_model(), inputs={"x": np.ones((2, 4), np.float32)}).model
    assert [n.name for n in a.graph.node] == [n.name for n in b.graph.node]


def test_dynamic_dimension_without_input_shape_names_the_input():
    with pytest.raises(ConfigError) as err:
        make_inputs(models.unnamed_model())
    assert "input 'x' dimension 0 ('N') is dynamic" in str(err.value)
    assert "input_shape" in str(err.value)


def _kv_cache_model():
    """A decoder step: every input but ``pos`` has a dynamic dimension."""
    def vi(name, shape):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)

    graph = helper.make_graph([helper.make_node("Add", ["ids", "pos"], ["y"])], "g",
                              [vi("ids", [1, "S"]), vi("past_k", [1, 8, "P", 64]),
                               vi("past_v", [1, 8, "P", 64]), vi("mask", ["B", "S"]),
                               vi("pos", [1, 1])], [vi("y", None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_every_dynamic_input_is_named_at_once():
    """Only 'ids' was named; following the advice led to the error about 'past_k', and so on
    (API review finding 4)."""
    with pytest.raises(ConfigError) as err:
        make_inputs(_kv_cache_model())
    assert str(err.value) == (
        "input_shape: 4 inputs are left dynamic: 'ids' dimension 1 ('S') is dynamic ([1, ?]); "
        "'past_k' dimension 2 ('P') is dynamic ([1, 8, ?, 64]); 'past_v' dimension 2 ('P') is "
        "dynamic ([1, 8, ?, 64]); 'mask' dimensions 0 ('B'), 1 ('S') are dynamic ([?, ?]); "
        "nothing gives their sizes: choose them (the sizes of the data you test with; a check "
        "converts one static shape, the shape of the inputs it compares, each size 1 or more "
        "(E10011)), e.g. with 1 for each dynamic dimension: input_shape={'ids': (1, 1), "
        "'past_k': (1, 8, 1, 64), 'past_v': (1, 8, 1, 64), "
        "'mask': (1, 1)}")
    with pytest.raises(ConfigError) as err:  # the ones given are no longer named
        make_inputs(_kv_cache_model(), input_shape={"ids": (1, 3), "past_k": (1, 8, 2, 64)})
    assert "2 inputs are left dynamic: 'past_v' dimension 2 ('P')" in str(err.value)
    assert ("'P' = 2 as given, 'S' = 3 as given and 1 for each other dynamic dimension: "
            "input_shape={'ids': (1, 3), 'past_k': (1, 8, 2, 64), 'past_v': (1, 8, 2, 64), "
            "'mask': (1, 3)}") in str(err.value)
    inputs = make_inputs(_kv_cache_model(), input_shape="ids:1,3;past_k:1,8,2,64;"
                                                        "past_v:1,8,2,64;mask:1,3")
    assert inputs["mask"].shape == (1, 3) and inputs["pos"].shape == (1, 1)


@pytest.mark.parametrize("shape", [{"x": (3, 4)}, {"x": [3, 4]}, "x:3,4"])
def test_input_shape_resolves_dynamic_dims(shape):
    inputs = make_inputs(models.unnamed_model(), input_shape=shape)
    assert inputs["x"].shape == (3, 4) and inputs["x"].dtype == np.float32


@pytest.mark.parametrize("shape, message", [
    ({"y": (1, 4)}, "no model input named 'y'; inputs: x"),
    ({"x": (1, 4, 1)}, "input 'x' has rank 2"),
    ({"x": (1, 5)}, "input 'x' dimension 1 is fixed to 4 in the model, input_shape gives 5"),
    ({"x": (0, 4)}, "must be positive ints"),
    ("x=1,4", "expected 'name:d1,d2,...'"),
])
def test_bad_input_shape_is_a_clear_config_error(shape, message):
    with pytest.raises(ConfigError) as err:
        make_inputs(models.unnamed_model(), input_shape=shape)
    assert message in str(err.value)


def test_parse_input_shape_atc_syntax_with_several_inputs():
    assert parse_input_shape("a:1,3,224,224;b:1,10") == {"a": (1, 3, 224, 224), "b": (1, 10)}
    assert parse_input_shape(None) is None


def test_make_inputs_is_deterministic_per_seed_and_dtype():
    nodes = [helper.make_node("Cast", ["ids"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Where", ["mask", "f", "x"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                                       helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3]),
                                       helper.make_tensor_value_info("mask", TensorProto.BOOL, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    a, b, c = make_inputs(model), make_inputs(model), make_inputs(model, seed=1)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    assert not np.array_equal(a["x"], c["x"])
    assert a["x"].dtype == np.float32 and 0 <= a["x"].min() and a["x"].max() < 1
    assert a["ids"].dtype == np.int64 and 0 <= a["ids"].min() and a["ids"].max() < 10
    assert a["mask"].dtype == np.bool_
    assert not np.array_equal(a["x"], np.resize(a["ids"], a["x"].shape))


def test_check_inputs_names_the_problem():
    model = models.passing_mlp()
    good = {"x": np.zeros((1, 16), np.float32)}
    assert check_inputs(model, good)["x"].shape == (1, 16)
    with pytest.raises(ConfigError, match="model input 'x' not given"):
        check_inputs(model, {})
    with pytest.raises(ConfigError, match="no model input named 'z'"):
        check_inputs(model, dict(good, z=good["x"]))
    with pytest.raises(ConfigError, match="input 'x' has dtype float64, the model wants float32"):
        check_inputs(model, {"x": np.zeros((1, 16))})
    with pytest.raises(ConfigError, match=r"input 'x' has shape \[1, 15\], the model declares \[1, 16\]"):
        check_inputs(model, {"x": np.zeros((1, 15), np.float32)})


def _run_all(model, inputs):
    names = node_output_names(model)
    mark_all_outputs(model)
    return dict(zip(names, ort_session(model.SerializeToString()).run(names, inputs)))


@pytest.mark.parametrize("batch, branch, factor, node", [(1, "then", 2.0, "pick/then/Mul_0"),
                                                         (2, "else", 3.0, "times3")])
def test_if_with_computable_condition_is_inlined_for_the_given_inputs(batch, branch, factor, node):
    x = np.arange(batch * 4, dtype=np.float32).reshape(batch, 4) - 3
    prepared = prepare_model(models.if_model(), inputs={"x": x})
    assert prepared.report.inlined_ifs == (("pick", branch),)
    assert prepared.report.subgraph_ops == ()
    names = [n.name for n in prepared.model.graph.node]
    assert "pick" not in names and node in names
    values = _run_all(prepared.model, {"x": x})
    np.testing.assert_array_equal(values["picked"], x * factor)
    np.testing.assert_array_equal(values["y"], np.maximum(x * factor, 0))


def test_if_on_a_static_shape_is_inlined_without_inputs():
    prepared = prepare_model(models.if_model(), input_shape={"x": (1, 4)})
    assert prepared.report.inlined_ifs == (("pick", "then"),)


def test_if_that_cannot_be_decided_is_kept_and_reported():
    prepared = prepare_model(models.if_model(), require_static=False)
    assert prepared.report.inlined_ifs == ()
    assert prepared.report.subgraph_ops == (("pick", "If"),)
    assert "not dumped" in prepared.report.as_dict()["subgraph_note"]


def test_inlined_branch_tensor_names_do_not_clash_with_outer_names():
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["a"]),           # "a" also exists outside
                                helper.make_node("Neg", ["a"], ["t_out"])], "then", [],
                               [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e_out"])], "else", [],
                               [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Abs", ["x"], ["a"], name="abs"),
             helper.make_node("If", ["cond"], ["picked"], name="branch", then_branch=then_g, else_branch=else_g),
             helper.make_node("Add", ["a", "picked"], ["y"], name="add")]
    model = _graph(nodes, inits=[onnx.numpy_helper.from_array(np.array(True), "cond")])
    prepared = prepare_model(model)
    assert prepared.report.inlined_ifs == (("branch", "then"),)
    x = np.array([[-1.0, 2.0, -3.0, 4.0]] * 2, np.float32)
    values = _run_all(prepared.model, {"x": x})
    np.testing.assert_array_equal(values["y"], np.abs(x) - np.maximum(x, 0))


def test_branch_output_that_is_an_outer_tensor_is_bridged():
    then_g = helper.make_graph([], "then", [], [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["n"])], "else", [],
                               [helper.make_tensor_value_info("n", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("If", ["cond"], ["picked"], name="br", then_branch=then_g, else_branch=else_g),
             helper.make_node("Relu", ["picked"], ["y"], name="relu")]
    model = _graph(nodes, inits=[onnx.numpy_helper.from_array(np.array(True), "cond")])
    prepared = prepare_model(model)
    assert [n.name for n in prepared.model.graph.node] == ["br/output_0", "relu"]
    x = np.array([[-1.0, 2.0, -3.0, 4.0]] * 2, np.float32)
    np.testing.assert_array_equal(_run_all(prepared.model, {"x": x})["y"], np.maximum(x, 0))


def test_loop_is_reported_not_guessed():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "x"], ["acc_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Loop", ["trips", "", "x"], ["acc"], name="loop", body=body),
             helper.make_node("Relu", ["acc"], ["y"], name="relu")]
    model = _graph(nodes, inits=[onnx.numpy_helper.from_array(np.array(3, np.int64), "trips")])
    prepared = prepare_model(model)
    assert prepared.report.subgraph_ops == (("loop", "Loop"),)
    x = np.ones((2, 4), np.float32)
    np.testing.assert_array_equal(_run_all(prepared.model, {"x": x})["y"], x * 4)


def test_mark_all_outputs_lets_onnxruntime_return_every_node_output():
    model = prepare_model(models.transformer_block()).model
    names = node_output_names(model)
    marked = mark_all_outputs(model)
    assert marked[0] == "y" and set(names) <= set(marked)
    values = _run_all(model, make_inputs(model))
    assert set(values) == set(names) and len(names) == len(model.graph.node)

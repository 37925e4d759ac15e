"""A seeded integer input the model compares with a constant is drawn as that constant.

silero-vad's ``sr`` (a scalar int64) feeds only ``Equal(sr, 16000) -> If``: drawn from [0, 10)
it was 9 or 5, so every seeded check ran the 8 kHz ``else`` branch and the deployed 16 kHz path
was never checked; at the deployed shape the golden failed (an audit on the real models). The
model here is built like it: the ``then`` branch needs at least 256 samples (a Conv of kernel
256), the ``else`` branch is a cheap Mul."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.graph.compared_inputs import compared_constants
from pytest_ascend_accuracy.graph.integer_ranges import integer_ranges
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


def sr_model(*, dynamic=True, constant_first=False, through_reshape=False, second=None):
    """``input`` float [N, L] (dynamic where ``dynamic``, else [1, 576]) and ``sr`` int64 []:
    ``If(Equal(sr, 16000))``: then = Conv(kernel 256) over the samples, summed; else =
    input * 2, summed. ``second``: another Equal(sr, second) later in the graph."""
    dims = ["N", "L"] if dynamic else [1, 576]
    ins = [helper.make_tensor_value_info("input", TensorProto.FLOAT, dims),
           helper.make_tensor_value_info("sr", TensorProto.INT64, [])]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])]
    if second is not None:
        out.append(helper.make_tensor_value_info("other", TensorProto.BOOL, []))
    inits = [numpy_helper.from_array(np.full((1, 1, 256), 1 / 256, np.float32), "w"),
             numpy_helper.from_array(np.array([0, 1, -1], np.int64), "to3d"),
             numpy_helper.from_array(np.array([-1], np.int64), "flat")]
    then = helper.make_graph(
        [helper.make_node("Reshape", ["input", "to3d"], ["x3"], name="then_reshape"),
         helper.make_node("Conv", ["x3", "w"], ["c"], name="then_conv", strides=[64]),
         helper.make_node("ReduceSum", ["c"], ["ty"], name="then_sum", keepdims=0)],
        "then", [], [helper.make_tensor_value_info("ty", TensorProto.FLOAT, [])])
    other = helper.make_graph(
        [helper.make_node("Mul", ["input", "input"], ["m"], name="else_mul"),
         helper.make_node("ReduceSum", ["m"], ["ey"], name="else_sum", keepdims=0)],
        "else", [], [helper.make_tensor_value_info("ey", TensorProto.FLOAT, [])])
    nodes = [helper.make_node("Constant", [], ["k16"], name="k16",
                              value=numpy_helper.from_array(np.array(16000, np.int64)))]
    sr = "sr"
    if through_reshape:  # op18's export: Gather(Reshape(sr, [-1]), 0)
        nodes += [helper.make_node("Reshape", ["sr", "flat"], ["sr1"], name="sr_flat"),
                  helper.make_node("Constant", [], ["zero"], name="zero",
                                   value=numpy_helper.from_array(np.array(0, np.int64))),
                  helper.make_node("Gather", ["sr1", "zero"], ["sr0"], name="sr_first")]
        sr = "sr0"
    pair = ["k16", sr] if constant_first else [sr, "k16"]
    nodes += [helper.make_node("Equal", pair, ["is16k"], name="is16k"),
              helper.make_node("If", ["is16k"], ["y"], name="If_0", then_branch=then,
                               else_branch=other)]
    if second is not None:
        nodes += [helper.make_node("Constant", [], ["k2"], name="k2",
                                   value=numpy_helper.from_array(np.array(second, np.int64))),
                  helper.make_node("Equal", ["sr", "k2"], ["other"], name="is_other")]
    model = helper.make_model(helper.make_graph(nodes, "srvad", ins, out, initializer=inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def test_sr_is_drawn_as_the_constant_it_is_compared_with():
    inputs = make_inputs(sr_model(dynamic=False), seed=0)
    assert inputs["sr"].shape == () and inputs["sr"].dtype == np.int64
    assert int(inputs["sr"]) == 16000  # before: 9 (the else branch)


@pytest.mark.parametrize("kind", ["constant_first", "through_reshape"])
def test_the_constant_on_either_side_and_through_a_reshape_and_gather(kind):
    model = sr_model(dynamic=False, **{kind: True})
    assert compared_constants(model, ["sr"])["sr"].value == 16000
    assert int(make_inputs(model, seed=3)["sr"]) == 16000


def test_the_first_equal_in_graph_order_gives_the_value():
    model = sr_model(dynamic=False, second=8000)
    assert compared_constants(model, ["sr"]) == {"sr": (16000, "is16k")}


def test_the_seeded_run_takes_the_then_branch_at_the_deployed_shape():
    import onnxruntime as ort

    model = sr_model(dynamic=False)
    inputs = make_inputs(model, seed=0)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, inputs)
    x = inputs["input"].reshape(-1)
    expected = sum(x[s:s + 256].mean() for s in range(0, 576 - 255, 64))
    assert np.isclose(y, expected, rtol=1e-4)  # the Conv's sum, not the else branch's


def test_other_inputs_draw_as_before():
    plain = make_inputs(sr_model(dynamic=False), seed=0)
    drawn = np.random.default_rng([0, 0]).random((1, 576), dtype=np.float64).astype(np.float32)
    assert np.array_equal(plain["input"], drawn)


def test_a_table_index_a_mask_and_a_constant_the_dtype_cannot_hold_keep_their_draw():
    """``input_ids`` compared with a pad id keeps its draw below the table (all padding would
    mask everything); a mask compared with 0 keeps 0 and 1; an int8 compared with 16000 keeps
    [0, 10)."""
    table = numpy_helper.from_array(np.ones((5, 2), np.float32), "table")
    zero = numpy_helper.from_array(np.array(0, np.int64), "zero")
    big = numpy_helper.from_array(np.array(16000, np.int64), "big")
    nodes = [helper.make_node("Gather", ["table", "input_ids"], ["e"], name="emb"),
             helper.make_node("Equal", ["input_ids", "zero"], ["pad"], name="pad"),
             helper.make_node("Equal", ["attention_mask", "zero"], ["masked"], name="masked"),
             helper.make_node("Cast", ["small"], ["small64"], name="cast", to=TensorProto.INT64),
             helper.make_node("Equal", ["small64", "big"], ["is_big"], name="is_big")]
    ins = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, 8]),
           helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, 8]),
           helper.make_tensor_value_info("small", TensorProto.INT8, [1])]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT if n == "e" else TensorProto.BOOL,
                                          None) for n in ("e", "pad", "masked", "is_big")]
    model = helper.make_model(helper.make_graph(nodes, "g", ins, outs,
                                                initializer=[table, zero, big]),
                              opset_imports=[helper.make_opsetid("", 17)])
    ranges = integer_ranges(model, ["input_ids", "attention_mask", "small"],
                            {"input_ids": (1, 8), "attention_mask": (1, 8), "small": (1,)})
    assert ranges == {"input_ids": (0, 5), "attention_mask": (0, 2)}  # small: [0, 10)


def test_the_shape_advice_is_tried_on_the_then_branch_and_runs_with_sr_16000():
    """The advice's example is run on seeded inputs: on sr=9 (before) the else branch ran at
    [1, 1] and the advice offered it, which fails with the deployed sr=16000."""
    import ast
    import re

    import onnxruntime as ort

    from pytest_ascend_accuracy.errors import ConfigError

    model = sr_model()
    with pytest.raises(ConfigError) as caught:
        make_inputs(model, seed=0)
    advice = re.search(r"input_shape=(\{.*?\})", str(caught.value)).group(1)
    shape = ast.literal_eval(advice)
    assert shape["input"][1] >= 256, advice
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).random(shape["input"], dtype=np.float32)
    session.run(None, {"input": x, "sr": np.array(16000, np.int64)})


def padding_mask_model():
    """tokens [1, 8] int64 and x [1, 8]: y = sum(x * tokens * 9000 masked by Not(Equal(tokens,
    0))): a padding mask, no If, no table the package traces (a review's model)."""
    inits = [numpy_helper.from_array(np.array(9000.0, np.float32), "k"),
             numpy_helper.from_array(np.array(0, np.int64), "pad_id"),
             numpy_helper.from_array(np.array([1], np.int64), "ax1")]
    nodes = [helper.make_node("Cast", ["tokens"], ["tf"], to=1, name="tf"),
             helper.make_node("Mul", ["x", "tf"], ["xt"], name="xt"),
             helper.make_node("Mul", ["xt", "k"], ["h"], name="scale"),
             helper.make_node("Equal", ["tokens", "pad_id"], ["is_pad"], name="is_pad"),
             helper.make_node("Not", ["is_pad"], ["keep"], name="keep"),
             helper.make_node("Cast", ["keep"], ["keepf"], to=1, name="keepf"),
             helper.make_node("Mul", ["h", "keepf"], ["hm"], name="masked"),
             helper.make_node("ReduceSum", ["hm", "ax1"], ["y"], keepdims=0, name="pool")]
    graph = helper.make_graph(
        nodes, "pad_scale", [helper.make_tensor_value_info("tokens", TensorProto.INT64, [1, 8]),
                             helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_a_padding_mask_s_tokens_are_not_drawn_as_the_pad_id():
    """A review: tokens compared with the pad id to mask padding (no If decides on it) were
    seeded all padding, and the check passed on nothing; they keep their [0, 10) draw, and so
    does a one-element input whose comparison decides no If (another review: a scalar k of
    Where(Equal(k, 3), 0, x) was seeded 3, and the check passed on zeros)."""
    model = padding_mask_model()
    assert compared_constants(model, ["tokens"]) == {}
    tokens = make_inputs(model, seed=0)["tokens"]
    assert tokens.any() and not (tokens == 0).all()
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 1  # tokens [1, 1]
    assert compared_constants(model, ["tokens"]) == {}

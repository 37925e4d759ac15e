"""Seeded integer inputs one-hot encoded against a constant row table span the table (audit 33,
Google Magika: ``Equal(Expand(Reshape(bytes)), 0..256)``; drawn from [0, 10), 247 of the 257
rows were never used, and a keep list printed from a seeded failure failed pasted on an ELF)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.graph.one_hot_tables import one_hot_ranges
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

ROWS = 257


def byte_model(table=np.arange(ROWS, dtype=np.int32).reshape(1, 1, -1), elem=TensorProto.INT32,
               gather: bool = False):
    """Magika's encoding: bytes [1, 16] one-hot against ``table``, then a Dense whose rows at and
    above 200 are large (a float16 overflow where a seeded draw reaches them)."""
    emb = np.full((table.size, 4), 0.5, np.float32)
    emb[200:] = 3e4
    inits = [numpy_helper.from_array(np.array([1, 16, 1], np.int64), "shape"),
             numpy_helper.from_array(np.array([1, 16, table.size], np.int64), "wide"),
             numpy_helper.from_array(table, "table"), numpy_helper.from_array(emb, "emb")]
    nodes = [helper.make_node("Reshape", ["bytes", "shape"], ["r"], name="reshape"),
             helper.make_node("Expand", ["r", "wide"], ["e"], name="broadcast"),
             helper.make_node("Equal", ["e", "table"], ["hot"], name="one_hot"),
             helper.make_node("Cast", ["hot"], ["hotf"], name="to_float", to=TensorProto.FLOAT),
             helper.make_node("MatMul", ["hotf", "emb"], ["dense"], name="dense"),
             helper.make_node("Mul", ["dense", "dense"], ["sq"], name="square"),
             helper.make_node("ReduceSum", ["sq"], ["y"], name="sum", keepdims=0)]
    if gather:  # the same input also indexes a 3-row table: that bound comes first
        inits.append(numpy_helper.from_array(np.ones((3, 2), np.float32), "small"))
        nodes.append(helper.make_node("Gather", ["small", "bytes"], ["g"], name="gather"))
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if gather:
        outputs.append(helper.make_tensor_value_info("g", TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "bytes_model",
                              [helper.make_tensor_value_info("bytes", elem, [1, 16])], outputs,
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_bytes_one_hot_against_0_to_256_are_drawn_over_every_row(tmp_path):
    onnx.save(byte_model(), str(tmp_path / "m.onnx"))
    drawn = make_inputs(str(tmp_path / "m.onnx"), seed=0)["bytes"]
    assert drawn.dtype == np.int32 and drawn.min() >= 0 and drawn.max() <= 256
    assert drawn.max() >= 200  # the rows [0, 10) never reached
    assert one_hot_ranges(byte_model(), ["bytes"]) == {"bytes": (0, ROWS)}


@pytest.mark.parametrize("table", [
    np.array([[[0, 101, 102]]], np.int32),  # special token ids: a set with gaps, no row table
    np.array([[[7, 7, 7]]], np.int32),  # one value: compared_inputs' (only where an If decides)
])
def test_a_set_with_gaps_or_one_value_keeps_the_draw(table):
    assert one_hot_ranges(byte_model(table), ["bytes"]) == {}


def test_a_dtype_that_cannot_hold_the_table_and_a_gather_bound_keep_theirs(tmp_path):
    assert one_hot_ranges(byte_model(elem=TensorProto.INT8), ["bytes"]) == {}
    onnx.save(byte_model(gather=True), str(tmp_path / "g.onnx"))
    drawn = make_inputs(str(tmp_path / "g.onnx"), seed=0)["bytes"]
    assert drawn.max() <= 2  # below the 3-row table it indexes, as before


def test_a_seeded_check_now_reaches_the_rows_that_overflow(pytester):
    """Drawn from [0, 10) the check passed: rows 200.. hold 3e4, squared past float16."""
    onnx.save(byte_model(), str(pytester.path / "bytes.onnx"))
    pytester.makepyfile("""
        def test_bytes(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("bytes.onnx", seed=0)
            check_accuracy(ascend_model("bytes.onnx").run(inputs),
                           golden_dump("bytes.onnx", inputs))
    """)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    assert "first failing op square" in result.stdout.str()


def test_special_ids_compared_to_find_them_keep_the_draw():
    """A review: T5's specials 0..2 are a row table too; ids == [0, 1, 2], any over the last
    axis, masks them. Drawn from it, every token was special and the check passed on zeros."""
    inits = [numpy_helper.from_array(np.array([0, 1, 2], np.int64), "specials"),
             numpy_helper.from_array(np.array([-1], np.int64), "last")]
    nodes = [helper.make_node("Unsqueeze", ["ids", "last"], ["ids3"], name="u"),
             helper.make_node("Equal", ["ids3", "specials"], ["hit"], name="is_special"),
             helper.make_node("Cast", ["hit"], ["hitf"], name="c", to=TensorProto.FLOAT),
             helper.make_node("ReduceMax", ["hitf", "last"], ["any"], name="any", keepdims=0)]
    graph = helper.make_graph(nodes, "specials", [
        helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 16])],
        [helper.make_tensor_value_info("any", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    assert one_hot_ranges(model, ["ids"]) == {}


def test_a_uint8_input_one_hot_against_0_to_255_is_drawn_over_it():
    """A review: 0..255 was refused for uint8 (off by one)."""
    table = np.arange(256, dtype=np.uint8).reshape(1, 1, -1)
    assert one_hot_ranges(byte_model(table, elem=TensorProto.UINT8), ["bytes"]) == {
        "bytes": (0, 256)}

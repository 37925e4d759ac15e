"""A stored golden numbers an op's tensors by their slots, as the golden in memory, ATC's dumps
and msit do: an omitted optional output or input (an empty name) leaves its number unused
(H111: LSTM's ``Y_h``, output 1, was stored as output 0, and a test whose golden had a path
failed "golden op 'lstm' has no output 1" where the same test without it passed)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
from pytest_ascend_accuracy.golden.stored import store_golden


def lstm_model(path):
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((1, 8, 3)).astype(np.float32), "W")
    r = numpy_helper.from_array(rng.standard_normal((1, 8, 2)).astype(np.float32), "R")
    graph = helper.make_graph(
        [helper.make_node("LSTM", ["X", "W", "R"], ["", "Y_h"], name="lstm", hidden_size=2),
         helper.make_node("Relu", ["Y_h"], ["o"], name="relu")], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [5, 1, 3])],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, [1, 1, 2])], [w, r])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)
    return path, {"X": rng.standard_normal((5, 1, 3)).astype(np.float32)}


def resize_model(path):
    sizes = numpy_helper.from_array(np.array([1, 1, 4, 4], np.int64), "sizes")
    graph = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 4, 4])], [sizes])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path, {"x": np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)}


def slots(op, kind):
    return [(t.index, tuple(t.shape)) for t in getattr(op, kind)]


def test_an_output_after_an_omitted_one_keeps_its_number_when_stored(tmp_path):
    model, inputs = lstm_model(str(tmp_path / "lstm.onnx"))
    golden = golden_dump(model, inputs, cache=Cache(tmp_path / "cache"))
    assert slots(golden.get("lstm"), "outputs") == [(1, (1, 1, 2))]
    stored = load_dump(store_golden(tmp_path / "golden", golden))
    assert slots(stored.get("lstm"), "outputs") == [(1, (1, 1, 2))]
    np.testing.assert_array_equal(stored.get("lstm").output(1).load(),
                                  golden.get("lstm").output(1).load())


def test_an_input_after_omitted_ones_keeps_its_number_when_inputs_are_stored(tmp_path):
    model, inputs = resize_model(str(tmp_path / "resize.onnx"))
    golden = golden_dump(model, inputs, cache=Cache(tmp_path / "cache"))
    assert slots(golden.get("resize"), "inputs") == [(0, (1, 1, 2, 2)), (3, (4,))]
    stored = load_dump(store_golden(tmp_path / "golden", golden, store_inputs=True))
    assert slots(stored.get("resize"), "inputs") == [(0, (1, 1, 2, 2)), (3, (4,))]


def test_a_dumpset_a_user_built_keeps_its_order_where_indices_repeat():
    from dataclasses import replace

    from pytest_ascend_accuracy.golden.stored_record import by_slot

    dump = DumpSet.from_arrays({"a": [np.zeros(2, np.float32), np.ones(3, np.float32)]})
    same = [replace(t, index=0) for t in dump.get("a").outputs]
    assert [a.shape for a in by_slot(same)] == [(2,), (3,)]

"""An op whose golden output flushes to 0 and feeds another op that operand stays in a
keep_dtype hint though all its golden values lie below float16's smallest normal: its float32
values are what the op after it needs (to_tiny = sigmoid(x) near -20, then from_tiny = .. *
6e4). The finding records that (``RangeFinding.feeds``) also where the feeding op was looked at
first, as its own output's finding (``report.fp16_fix_ops._tiny_left_out`` reads it)."""
import numpy as np

from pytest_ascend_accuracy.compare.fp16_range import UNDERFLOW, golden_inputs_past_fp16
from pytest_ascend_accuracy.dump.model import DumpSet


def _model(path):
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Sigmoid", ["x"], ["t"], name="to_tiny"),
             helper.make_node("Mul", ["t", "huge"], ["y"], name="from_tiny")]
    graph = helper.make_graph(
        nodes, "feeds", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
        initializer=[helper.make_tensor("huge", TensorProto.FLOAT, [], [6e4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_an_op_looked_at_before_the_op_it_feeds_a_flushed_operand_is_marked_as_feeding_it(
        tmp_path):
    tiny = 1.0 / (1.0 + np.exp(np.linspace(19.0, 21.0, 64)))  # sigmoid(-19..-21): below 6e-09
    golden = DumpSet.from_arrays({"to_tiny": [tiny.astype(np.float32)],
                                  "from_tiny": [(tiny * 6e4).astype(np.float32)]})
    found = golden_inputs_past_fp16(golden, ["to_tiny", "from_tiny"],
                                    model=_model(tmp_path / "feeds.onnx"))
    assert [(f.op, f.slot, f.kind, f.feeds) for f in found] == [
        ("to_tiny", "output:0", UNDERFLOW, "from_tiny"),
        ("from_tiny", "input:0", UNDERFLOW, "")]


def test_a_failing_op_feeding_a_flushed_operand_stays_in_the_keep_dtype_list(tmp_path):
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.report.fp16_fix_ops import keep_dtype_names

    tiny = (1.0 / (1.0 + np.exp(np.linspace(19.0, 21.0, 64)))).astype(np.float32)
    golden = DumpSet.from_arrays({"to_tiny": [tiny], "from_tiny": [tiny * np.float32(6e4)]})
    actual = DumpSet.from_arrays({"to_tiny": [np.zeros(64, np.float16)],
                                  "from_tiny": [np.zeros(64, np.float16)]})
    verdict = compare_dumps(actual, golden).judge(0.95)
    found = golden_inputs_past_fp16(golden, ["to_tiny", "from_tiny"],
                                    model=_model(tmp_path / "feeds.onnx"))
    names, reason = keep_dtype_names(verdict, found)
    assert names == ["to_tiny", "from_tiny"] and "left out" not in reason

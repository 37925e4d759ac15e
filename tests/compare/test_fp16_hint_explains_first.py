"""A keep_dtype fix is named from the golden values of the first few failing ops, and is one
only where it explains the first failure (``report.fp16_fix_ops.explains_first``): H324's
EfficientNet-B0 failed first at a Conv losing float16's subnormal precision, and the findings of
the two failing ops after it gave ``keep_dtype`` of those two, which pasted failed at that Conv
with the same cosine."""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.compare.fp16_range import failing_ops_past_fp16
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.fp16_fix_ops import keep_dtype_names


def _model(path):
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Mul", ["x", "b"], ["c"], name="amplify"),
             helper.make_node("Mul", ["c", "t"], ["d"], name="to_tiny"),
             helper.make_node("Mul", ["d", "h"], ["y"], name="from_tiny")]
    graph = helper.make_graph(
        nodes, "first", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
        initializer=[helper.make_tensor(n, TensorProto.FLOAT, [], [v])
                     for n, v in (("b", 2.0), ("t", 1.5e-8), ("h", 6e4))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def _verdict(first_fails):
    rng = np.random.default_rng(0)
    c = rng.uniform(0.5, 1.5, 64).astype(np.float32)
    d = (c * np.float32(1.5e-8)).astype(np.float32)  # all below 2**-25: float16 flushes them
    golden = DumpSet.from_arrays({"amplify": [c], "to_tiny": [d],
                                  "from_tiny": [d * np.float32(6e4)]})
    noisy = c + rng.normal(0, 0.3, 64).astype(np.float32) if first_fails else c
    actual = DumpSet.from_arrays({"amplify": [noisy.astype(np.float16)],
                                  "to_tiny": [np.zeros(64, np.float16)],
                                  "from_tiny": [np.zeros(64, np.float16)]})
    result = compare_dumps(actual, golden)
    return golden, result, result.judge(0.99)


def test_findings_after_the_first_failure_name_no_fix(tmp_path):
    golden, result, verdict = _verdict(first_fails=True)
    assert verdict.first.row.op_name == "amplify"
    found = failing_ops_past_fp16(golden, verdict, result.rows, model=_model(tmp_path / "m.onnx"))
    assert {f.op for f in found} == {"to_tiny", "from_tiny"}  # findings there are
    assert keep_dtype_names(verdict, found) == ([], "")  # but amplify fails without them


def test_findings_that_explain_the_first_failure_name_the_fix(tmp_path):
    golden, result, verdict = _verdict(first_fails=False)
    assert verdict.first.row.op_name == "to_tiny"
    found = failing_ops_past_fp16(golden, verdict, result.rows, model=_model(tmp_path / "m.onnx"))
    names, reason = keep_dtype_names(verdict, found)
    assert names == ["to_tiny", "from_tiny"] and "kept for the first failing op" not in reason

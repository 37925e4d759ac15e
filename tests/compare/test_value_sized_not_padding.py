"""An output whose size depends on values that the device made larger than the golden is never
cut to the golden's shape where what lies past it is data (T2 finding 4: NonZero kept index 0 on
the device and nothing in the golden; compare.csv read "shape (1, 1) cut to the golden's (1, 0)
(as msaccucmp does); zero-size tensors: nothing to compare; integer values compared exactly: all
equal", cosine 1.000000). The cut is for a device layout's padding (docs/formats.md section
6.1): no layout pads an empty dim (a multiple of 0 is 0), and the elements past the golden of a
NonZero, NonMaxSuppression or TopK are indices or kept values, where 0 is an index, not a fill."""
import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet


def _row(actual, golden, op_type=""):
    r = compare_dumps(DumpSet.from_arrays({"a": [actual]}, op_types={"a": op_type}),
                      DumpSet.from_arrays({"a": [golden]}))
    return r, r.rows[0]


@pytest.mark.parametrize("a_shape, g_shape, op_type", [
    ((1, 1), (1, 0), "NonZero"),  # T2's nz: index 0 found on the device only
    ((1,), (0,), "Squeeze"),  # T2's sq, the Squeeze after it
    ((1, 3), (1, 0), ""),  # any op: zeros against none
])
def test_an_empty_golden_is_never_the_same_as_a_non_empty_actual(a_shape, g_shape, op_type):
    r, row = _row(np.zeros(a_shape, np.int64), np.zeros(g_shape, np.int64), op_type)
    assert "shape_mismatch" in row.flags and "cropped" not in row.flags and row.metrics is None
    n = int(np.prod(a_shape))
    assert row.reason == (
        f"shape {a_shape} vs golden {g_shape}: {n} vs 0 elements, cannot compare: the golden is "
        "empty, and no padding fills an empty tensor (an output whose size depends on values, "
        f"e.g. NonZero or NonMaxSuppression, kept {n} element{'s' if n > 1 else ''} the golden "
        "did not)")
    assert not r.judge(0.0).passed


@pytest.mark.parametrize("golden, extra, op_type", [
    ([[3, 5, 6, 9]], [[0]], "TopK"),  # a computed k one larger: index 0 last
    ([[3, 5, 6, 9]], [[0]], "TopKV2"),  # the Ascend type
    ([[2, 5]], [[0]], "Unique"),
    ([[4, 7]], [[0]], "NonZero"),
])
def test_zeros_past_the_golden_of_a_value_sized_op_are_its_data(golden, extra, op_type):
    golden = np.array(golden, np.int64)
    actual = np.concatenate([golden, np.array(extra, np.int64)], axis=1)
    r, row = _row(actual, golden, op_type)
    assert "shape_mismatch" in row.flags and "cropped" not in row.flags and row.metrics is None
    assert row.reason == (
        f"shape {actual.shape} vs golden {golden.shape}: {actual.size} vs {golden.size} "
        f"elements, cannot compare: {op_type}'s output size depends on values, so what lies "
        "past the golden's shape (1 element) is what it kept and the golden did not, not "
        "padding (1 of them 0: an index or value, not a fill)")
    assert not r.judge(0.0).passed


@pytest.mark.parametrize("op_type", ["NonMaxSuppression", "NonMaxSuppressionV6"])
def test_a_value_sized_op_with_more_rows_says_why(op_type):
    """NonMaxSuppression's [batch, class, box] rows: one more row (box 0 of class 0) is not a
    batch, and the reason says the count depends on values."""
    golden = np.array([[0, 1, 4], [0, 2, 7]], np.int64)
    actual = np.concatenate([golden, np.zeros((1, 3), np.int64)])
    r, row = _row(actual, golden, op_type)
    assert "shape_mismatch" in row.flags and row.metrics is None
    assert row.reason == (
        f"shape (3, 3) vs golden (2, 3): 9 vs 6 elements, cannot compare: {op_type}'s output "
        "size depends on values, and it kept another count than the golden")
    assert not r.judge(0.0).passed


def test_zeros_past_the_golden_of_another_op_stay_padding():
    """What the cut is for: zeros past the golden's shape of an op whose size does not depend
    on values are cut off, as msaccucmp cuts them (tests/compare/test_engine.py has more)."""
    golden = np.arange(1, 5, dtype=np.float32).reshape(1, 4)
    actual = np.concatenate([golden, np.zeros((1, 1), np.float32)], axis=1)
    r, row = _row(actual, golden, "Gather")
    assert "cropped" in row.flags and r.judge(0.99).passed


def test_the_emulated_run_of_a_threshold_model_fails_its_nonzero_row(tmp_path):
    """T2's thr_tiny, built here: 0.49999 >= 0.5 is false in float32 and true once float16
    rounds it to 0.5, so the device's NonZero finds index 0 and the golden's finds none."""
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.core.modes import DEFAULT
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump

    nodes = [helper.make_node("Add", ["x", "zero"], ["score"], name="score"),
             helper.make_node("GreaterOrEqual", ["score", "half"], ["keep"], name="keep"),
             helper.make_node("NonZero", ["keep"], ["nz"], name="nz"),
             helper.make_node("Squeeze", ["nz", "axis"], ["sq"], name="sq"),
             helper.make_node("Gather", ["x", "sq"], ["y"], name="picked")]
    graph = helper.make_graph(
        nodes, "thr", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0]),
         helper.make_tensor("half", TensorProto.FLOAT, [], [0.5]),
         helper.make_tensor("axis", TensorProto.INT64, [1], [0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "thr.onnx"
    onnx.save(model, str(path))
    x = {"x": np.array([0.49999, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.4], np.float32)}
    golden = golden_dump(path, x, cache=Cache(tmp_path / "c"))
    backend = EmulatorBackend(Cache(tmp_path / "c"))
    actual = backend.run(backend.convert(path, DEFAULT), x, dump_dir=tmp_path / "d")
    rows = {row.op_name: row for row in compare_dumps(actual, golden).rows}
    assert (rows["nz"].shape, rows["nz"].golden_shape) == ((1, 1), (1, 0))
    for name in ("nz", "sq"):
        assert rows[name].metrics is None and "shape_mismatch" in rows[name].flags, name
        assert "1 vs 0 elements, cannot compare: the golden is empty" in rows[name].reason

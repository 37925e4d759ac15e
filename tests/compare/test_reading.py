"""TensorReader: plain tensors are read into reused buffers, everything else is loaded."""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps, compare_pair
from pytest_ascend_accuracy.compare.matching import match_ops
from pytest_ascend_accuracy.compare.reading import TensorReader
from pytest_ascend_accuracy.dump.file_span import FileSpan, SpanLoader
from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.model import TensorRef
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter


def _pair(tmp_path):
    rng = np.random.default_rng(3)
    golden = {
        "conv": rng.standard_normal((2, 3, 4, 4)).astype(np.float32),
        "mask": np.array([[0.0, -np.inf], [np.nan, 1.0]], np.float32),
        "idx": np.arange(7, dtype=np.int64),
        "flag": np.array([True, False, True]),
        "big": rng.standard_normal(5000).astype(np.float32),
    }
    actual = dict(golden, conv=golden["conv"].astype(np.float16),
                  mask=np.array([[0.0, -np.inf], [2.0, 1.0]], np.float16),
                  big=(golden["big"] * 1.01).astype(np.float16))
    with AscendDumpWriter(tmp_path / "npu") as aw, NpyDumpWriter(tmp_path / "golden") as gw:
        for name in golden:
            aw.write_op("Op", name, [], [actual[name]],
                        output_formats=["NC1HWC0"] if name == "conv" else None)
            gw.write_op(name, [], [golden[name]])
    return load_dump(tmp_path / "npu"), load_dump(tmp_path / "golden")


def test_rows_match_the_memory_mapped_path_exactly(tmp_path):
    actual, golden = _pair(tmp_path)
    fast = compare_dumps(actual, golden)
    plan = match_ops(actual, golden)
    mapped = [compare_pair(p) for p in plan.pairs]  # reader=None: TensorRef.load()
    assert len(fast.rows) == len(mapped) == 5
    assert [r.to_dict() for r in fast.rows] == [r.to_dict() for r in mapped]
    assert fast.rows[1].metrics.mismatch == 1  # NaN vs 2.0 counted through the read path too


def _counted(t: TensorRef, calls: list, shape=None) -> TensorRef:
    """``t`` with a loader that records its calls (the span is kept)."""
    def load():
        calls.append(t.slot)
        return t.load()
    return TensorRef(t.kind, t.index, t.dtype, shape or t.shape, SpanLoader(load, t.loader.span),
                     source=t.source)


def test_buffers_are_reused_per_side_and_large_tensors_are_loaded(tmp_path):
    actual, golden = _pair(tmp_path)
    reader = TensorReader(limit=4 * 5000)
    a1 = reader.load(actual["idx"].output(), 0)
    a2 = reader.load(actual["flag"].output(), 0)
    g1 = reader.load(golden["idx"].output(), 1)
    assert a2.tolist() == [True, False, True] and g1.tolist() == list(range(7))
    assert np.shares_memory(a1, a2) and not np.shares_memory(a2, g1)
    calls = []
    big = _counted(golden["big"].output(), calls)
    at_limit = reader.load(big, 1)
    assert calls == [] and at_limit.dtype == np.float32  # 20,000 bytes: read, not loaded
    over = TensorReader(limit=19_999).load(big, 1)
    assert calls == ["output:0"]  # over the limit: TensorRef.load()
    assert over.tobytes() == at_limit.tobytes()


def test_short_file_reports_the_loaders_own_error(tmp_path):
    actual, golden = _pair(tmp_path)
    path = golden["big"].output().source
    with open(path, "r+b") as f:
        f.truncate(200)
    row = next(r for r in compare_dumps(actual, golden).rows if r.op_name == "big")
    assert "unreadable" in row.flags
    assert row.reason.startswith(f"cannot read: {path}: cannot load .npy")


def test_a_read_error_falls_back_to_the_loader(tmp_path):
    gone = TensorRef("output", 0, "int64", (7,), SpanLoader(
        lambda: np.arange(7), FileSpan(str(tmp_path / "missing"), 0, np.dtype(np.int64), 7)))
    assert TensorReader().load(gone, 1).tolist() == list(range(7))


def test_count_disagreeing_with_shape_is_not_read(tmp_path):
    actual, golden = _pair(tmp_path)
    calls = []
    wrong = _counted(golden["idx"].output(), calls, shape=(8,))
    assert TensorReader().load(wrong, 1).size == 7 and calls == ["output:0"]

"""report.tensor_copies: the failing tensors next to the report, within a byte budget."""
import numpy as np

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.tensor_copies import copy_failing_tensors


def _failing(n=4, size=1000):
    g = {f"op{i}": [np.linspace(-1, 1, size, dtype=np.float32)] for i in range(n)}
    a = {k: [-v[0]] for k, v in g.items()}  # every op fails
    actual, golden = DumpSet.from_arrays(a), DumpSet.from_arrays(g)
    result = compare_dumps(actual, golden)
    return actual, golden, result.judge(0.99)


def test_copies_are_the_compared_values(tmp_path):
    actual, golden, verdict = _failing()
    links = copy_failing_tensors(actual, golden, verdict, tmp_path, limit=2)
    assert list(links) == [("op0", "output:0"), ("op1", "output:0")]
    a, g = links[("op0", "output:0")]
    assert a == "tensors/0000-op0-output_0.actual.npy" and g.endswith(".golden.npy")
    np.testing.assert_array_equal(np.load(tmp_path / g), golden.get("op0").outputs[0].load())
    np.testing.assert_array_equal(np.load(tmp_path / a), actual.get("op0").outputs[0].load())
    assert not [p for p in (tmp_path / "tensors").iterdir() if p.name.startswith(".")]


def test_the_first_failure_is_copied_whatever_the_budget(tmp_path):
    actual, golden, verdict = _failing(size=1000)  # 8000 bytes a pair
    # the budget is for the copies beyond the first failure's, as DEFAULT_MAX_BYTES says
    # (the code counted the first one's bytes in it)
    links = copy_failing_tensors(actual, golden, verdict, tmp_path, max_bytes=20000)
    assert list(links) == [("op0", "output:0"), ("op1", "output:0"), ("op2", "output:0")]
    links = copy_failing_tensors(actual, golden, verdict, tmp_path / "b", max_bytes=0)
    assert list(links) == [("op0", "output:0")]


def test_the_first_failure_after_ops_not_compared_is_copied_first(tmp_path):
    """The page opens on ``verdict.first``, the first op compared and failed; ops of the device
    with no golden tensor before it fail as "not compared". Counted among the failures, ten of
    them took the whole limit and left the first failure with no tensors (a review)."""
    rng = np.random.default_rng(0)
    actual = {f"npu_extra_{i}": [rng.standard_normal((4, 8)).astype(np.float16)]
              for i in range(12)}
    g = rng.standard_normal((4, 8)).astype(np.float32)
    golden = {"bad_op": [g]}
    actual["bad_op"] = [(-g).astype(np.float16)]
    for i in range(3):  # compared failures after it: the next ones copied (they were not)
        golden[f"after_{i}"] = [g * (i + 1)]
        actual[f"after_{i}"] = [(-g * (i + 1)).astype(np.float16)]
    actual_dump, golden_dump = DumpSet.from_arrays(actual), DumpSet.from_arrays(golden)
    verdict = compare_dumps(actual_dump, golden_dump).judge(0.95)
    assert verdict.first.row.op_name == "bad_op" and verdict.failures[0].row is not \
        verdict.first.row
    links = copy_failing_tensors(actual_dump, golden_dump, verdict, tmp_path)
    assert [op for op, _ in links] == ["bad_op", "after_0", "after_1", "after_2"]
    a, g_link = links[("bad_op", "output:0")]
    np.testing.assert_array_equal(np.load(tmp_path / g_link), g)


def test_an_interrupted_copy_leaves_no_temp_file(tmp_path, monkeypatch):
    """A Ctrl-C inside ``np.save`` left its ``.tmp`` file (only an OSError removed it)."""
    actual, golden, verdict = _failing()
    calls = []
    real = np.save

    def interrupted(f, values):
        calls.append(1)
        if len(calls) == 3:
            f.write(b"half")
            raise KeyboardInterrupt
        real(f, values)

    monkeypatch.setattr(np, "save", interrupted)
    try:
        copy_failing_tensors(actual, golden, verdict, tmp_path)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt was swallowed")
    assert sorted(p.name for p in (tmp_path / "tensors").iterdir()) == [
        "0000-op0-output_0.actual.npy", "0000-op0-output_0.golden.npy"]


def test_a_passing_verdict_copies_nothing(tmp_path):
    actual, golden, _ = _failing()
    verdict = compare_dumps(actual, actual).judge(0.99)
    assert copy_failing_tensors(actual, golden, verdict, tmp_path) == {}
    assert not (tmp_path / "tensors").exists()

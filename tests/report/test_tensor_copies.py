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
    links = copy_failing_tensors(actual, golden, verdict, tmp_path, max_bytes=20000)
    assert list(links) == [("op0", "output:0"), ("op1", "output:0")]
    links = copy_failing_tensors(actual, golden, verdict, tmp_path / "b", max_bytes=0)
    assert list(links) == [("op0", "output:0")]


def test_a_passing_verdict_copies_nothing(tmp_path):
    actual, golden, _ = _failing()
    verdict = compare_dumps(actual, actual).judge(0.99)
    assert copy_failing_tensors(actual, golden, verdict, tmp_path) == {}
    assert not (tmp_path / "tensors").exists()

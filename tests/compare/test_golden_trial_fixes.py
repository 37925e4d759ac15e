"""Findings of a user trial with goldens other tools wrote (msit, msaccucmp convert): a golden
that cannot tell ops apart is reported, never compared against another op's tensor."""
import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef
from pytest_ascend_accuracy.compare.result import NOT_COMPARED_FLAG

X = np.random.default_rng(0).standard_normal((2, 4, 6)).astype(np.float32)


def _op(name, op_type, value, order, origin=True):
    t = TensorRef.from_array(value.astype(np.float16), "output", 0,
                             origin=(name, 0) if origin else None)
    return OpRecord(name, op_type=op_type, outputs=(t,), original_names=(name,), order=order)


def _msit_golden(d, files):
    """``files``: (stem, output index, array) in graph order, as msit's golden writes them."""
    d.mkdir()
    for ts, (stem, j, value) in enumerate(files, start=1700000000000001):
        np.save(d / f"{stem}.{j}.{ts}.npy", value)
    return d


def test_f1_ops_msit_names_alike_are_not_compared_against_one_file(tmp_path):
    """msit writes ops a/b (Relu) and a_b (Tanh) both as a_b.0.{ts}.npy: the Relu was compared
    against the Tanh's file "matched by origin" and a correct device FAILED, without a word."""
    relu, tanh = np.maximum(X, 0), np.tanh(X)
    golden = _msit_golden(tmp_path / "g", [("a_b", 0, relu), ("a_b", 0, tanh),
                                           ("out", 0, relu + tanh)])
    actual = DumpSet([_op("a/b", "Relu", relu, 0), _op("a_b", "Tanh", tanh, 1),
                      _op("out", "Add", relu + tanh, 2)])
    r = compare_dumps(actual, golden)
    rows = {row.op_name: row for row in r.rows}
    assert rows["out"].metrics is not None  # the others still compared
    for name in ("a/b", "a_b"):
        row = rows[name]
        assert row.match != "origin" and row.metrics is None
        assert NOT_COMPARED_FLAG in row.flags
        assert "a_b.0.1700000000000001.npy, a_b.0.1700000000000002.npy" in row.reason
        assert "cannot tell them apart" in row.reason and "real names" in row.reason
    assert r.coverage.unmatched_golden == ("a_b",)
    v = r.judge(0.99)
    assert not v.passed and "2 ops not compared (a/b, a_b" in v.describe()
    assert r.judge(0.99, ignore=["a/b", "a_b"]).passed  # the way out it names


def test_f1_the_same_op_dumped_twice_still_compares_with_the_latest(tmp_path):
    relu = np.maximum(X, 0)
    golden = _msit_golden(tmp_path / "g", [("a_b", 0, np.zeros_like(X)), ("out", 0, X),
                                           ("a_b", 0, relu)])
    actual = DumpSet([_op("a/b", "Relu", relu, 0), _op("out", "Add", X, 1)])
    r = compare_dumps(actual, golden)
    assert [row.golden_name for row in r.rows] == ["a_b", "out"]
    assert r.judge(0.99).passed
    assert load_dump(golden).meta["repeated_files"] == {
        "a_b": ["a_b.0.1700000000000001.npy", "a_b.0.1700000000000003.npy"]}


def test_f2_converted_ops_of_one_file_name_are_reported_not_compared(tmp_path):
    """Each of the split ops is reported (which golden is its own the names cannot say), and a
    mapping pairs one the user knows."""
    ts = 1796468449691168
    d = tmp_path / "conv"
    d.mkdir()
    relu, tanh = np.maximum(X, 0), np.tanh(X)
    np.save(d / f"Relu.a_b.1.0.{ts}.output.0.npy", relu.astype(np.float16))
    np.save(d / f"Tanh.a_b.3.0.{ts + 1}.output.0.npy", tanh.astype(np.float16))
    golden = DumpSet.from_arrays({"a/b": [relu], "a_b": [tanh]})
    r = compare_dumps(load_dump(d), golden)
    assert [(row.op_name, row.metrics) for row in r.rows] == [("Relu.a_b.1.0", None),
                                                              ("Tanh.a_b.3.0", None)]
    assert all(NOT_COMPARED_FLAG in row.flags and "cannot be told" in row.reason
               for row in r.rows)
    assert not r.judge(0.99).passed
    mapped = compare_dumps(load_dump(d), golden,
                           mapping={"Relu.a_b.1.0": "a/b", "Tanh.a_b.3.0": "a_b"})
    assert [row.golden_name for row in mapped.rows] == ["a/b", "a_b"]
    assert mapped.judge(0.99).passed

"""msaccucmp-converted NPU dumps whose file names spell several ops alike (``a/b`` Relu, ``a.b``
Sigmoid, ``a_b`` Tanh -> ``Relu.a_b.1...``, ``Sigmoid.a_b.2...``, ``Tanh.a_b.3...``) were reported
not compared even with the om json, which names each op with its type: the type now pairs each
file with its op (docs/formats.md §8)."""
import numpy as np
import pytest

from pytest_ascend_accuracy.compare import compare_dumps
from pytest_ascend_accuracy.dump import write_om_json
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.dump.om_json import OmOp

TS = 1796468449691168
OPS = (("a/b", "Relu"), ("a.b", "Sigmoid"), ("a_b", "Tanh"))
X = np.linspace(-2, 2, 12, dtype=np.float32)
GOLDEN = DumpSet.from_arrays({"a/b": [np.maximum(X, 0) + 0.1], "a.b": [1 / (1 + np.exp(-X))],
                              "a_b": [np.tanh(X)], "out": [X]})


def _converted(tmp_path, *, fault=None, types=("Relu", "Sigmoid", "Tanh")):
    for k, (name, op_type) in enumerate(zip(("a/b", "a.b", "a_b"), types)):
        value = GOLDEN[name].output().load() * (-1 if name == fault else 1)
        np.save(tmp_path / f"{op_type}.a_b.{k + 1}.0.{TS + k}.output.0.npy",
                value.astype(np.float16))
    np.save(tmp_path / f"Add.out.4.0.{TS + 3}.output.0.npy", X.astype(np.float16))
    om = tmp_path / "m.json"
    write_om_json(om, "m", [OmOp(n, t, k + 1, (n,), ((n, 0),)) for k, (n, t) in enumerate(OPS)]
                  + [OmOp("out", "Add", 4, ("out",), (("out", 0),))])
    return om


def test_the_om_jsons_types_pair_each_converted_file_with_its_op(tmp_path):
    om = _converted(tmp_path)
    dump = load_dump(tmp_path, om_json=om)
    assert dump.names == ["a/b", "a.b", "a_b", "out"]
    assert "unpaired_ops" not in dump.meta
    assert dump.meta["paired_by_type"] == {"Relu.a_b.1.0": "a/b", "Sigmoid.a_b.2.0": "a.b",
                                           "Tanh.a_b.3.0": "a_b"}
    verdict = compare_dumps(dump, GOLDEN).judge(0.99)
    assert verdict.passed, verdict.failures
    assert {r.op_name for r in compare_dumps(dump, GOLDEN).rows} == {"a/b", "a.b", "a_b", "out"}


def test_a_fault_in_one_of_them_fails_that_op(tmp_path):
    om = _converted(tmp_path, fault="a.b")
    verdict = compare_dumps(load_dump(tmp_path, om_json=om), GOLDEN).judge(0.99)
    assert [f.row.op_name for f in verdict.failures] == ["a.b"]


@pytest.mark.parametrize("types", [("Relu", "Relu", "Tanh"), ("Relu", "Sigmoid", "Abs")])
def test_a_type_that_does_not_tell_them_apart_leaves_them_not_compared(tmp_path, types):
    """Two files of one type, or a type the om json has no op of under that spelling: which op
    is which still cannot be said."""
    om = _converted(tmp_path, types=types)
    dump = load_dump(tmp_path, om_json=om)
    unpaired = set(dump.meta["unpaired_ops"])
    ambiguous = {f"{t}.a_b.{k + 1}.0" for k, t in enumerate(types)
                 if types.count(t) > 1 or t not in {t for _, t in OPS}}
    assert ambiguous and ambiguous <= unpaired
    assert not set(dump.meta.get("paired_by_type", {})) & ambiguous

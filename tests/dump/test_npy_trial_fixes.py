"""Findings of a user trial with dumps and goldens other tools wrote (msaccucmp convert, msit):
files the reader cannot tell apart or cannot read are said, never merged or dropped silently."""
import numpy as np

from pytest_ascend_accuracy.dump.loader import load_dump

TS = 1796468449691168


def test_f2_converted_files_of_one_name_but_other_types_are_other_ops(tmp_path):
    """msaccucmp convert writes ops a/b (Relu), a.b (Sigmoid), a_b (Tanh) as Relu.a_b.1...,
    Sigmoid.a_b.2..., Tanh.a_b.3...: they loaded as one op a_b typed Relu with the Tanh's
    data, so the faulty a/b was never compared."""
    for k, op_type in enumerate(("Relu", "Sigmoid", "Tanh")):
        np.save(tmp_path / f"{op_type}.a_b.{k + 1}.0.{TS + k}.output.0.npy", np.full(3, k, np.float16))
        np.save(tmp_path / f"{op_type}.a_b.{k + 1}.0.{TS + k}.input.0.npy", np.ones(3, np.float16))
    np.save(tmp_path / f"Add.out.4.0.{TS + 3}.output.0.npy", np.ones(3, np.float16))
    dump = load_dump(tmp_path)
    assert [(op.name, op.op_type, op.output().load().tolist(), len(op.inputs)) for op in dump] == [
        ("Relu.a_b.1.0", "Relu", [0, 0, 0], 1), ("Sigmoid.a_b.2.0", "Sigmoid", [1, 1, 1], 1),
        ("Tanh.a_b.3.0", "Tanh", [2, 2, 2], 1), ("out", "Add", [1, 1, 1], 0)]
    why = dump.meta["unpaired_ops"]
    assert sorted(why) == ["Relu.a_b.1.0", "Sigmoid.a_b.2.0", "Tanh.a_b.3.0"]
    assert "Relu (task 1), Sigmoid (task 2), Tanh (task 3)" in why["Relu.a_b.1.0"]
    assert "repeated" not in dump.meta


def test_f2_one_op_dumped_twice_stays_one_op_with_its_latest_data(tmp_path):
    np.save(tmp_path / f"Relu.a_b.1.0.{TS}.output.0.npy", np.zeros(2, np.float16))
    np.save(tmp_path / f"Relu.a_b.1.0.{TS + 5}.output.0.npy", np.ones(2, np.float16))
    dump = load_dump(tmp_path)
    assert dump.names == ["a_b"] and dump["a_b"].output().load().tolist() == [1, 1]
    assert dump.meta["repeated"] == {"a_b": 2} and "unpaired_ops" not in dump.meta


def test_f4_skipped_golden_files_say_why(tmp_path):
    """A file without timestamp and an all-digit name without mapping.csv were dropped with
    "not a golden or converted dump .npy name" alone."""
    np.save(tmp_path / "relu.0.1700000000000001.npy", np.ones(2))
    np.save(tmp_path / "topk.1.npy", np.ones(2))
    np.save(tmp_path / "98765.npy", np.ones(2))
    np.save(tmp_path / "odd.npy", np.ones(2))
    why = dict(load_dump(tmp_path).meta["skipped_files"])
    assert why["topk.1.npy"] == "no timestamp: golden names are {op}.{output}.{timestamp}.npy"
    assert "mapping.csv is missing or does not list it" in why["98765.npy"]
    assert why["odd.npy"].startswith("not a golden ({op}.{output}.{timestamp}.npy) or converted")

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
        np.save(tmp_path / f"{op_type}.a_b.{k + 1}.0.{TS + k}.output.0.npy",
                np.full(3, k, np.float16))
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


def test_f5_convert_f_names_with_a_shape_suffix_are_read(tmp_path):
    """msaccucmp convert -f ND writes {dump}.{output|input}.{i}.{AxBxC}.npy (a scalar's shape
    empty: ...output.0..npy): 32 of 37 files were skipped and 1-D ones read as golden names."""
    base = f"SplitD.split.6.0.{TS}"
    np.save(tmp_path / f"{base}.input.0.2x4x6.npy", np.ones((2, 4, 6), np.float16))
    np.save(tmp_path / f"{base}.input.1.2.npy", np.ones(2, np.int64))
    np.save(tmp_path / f"{base}.output.1.2x4x3.npy", np.ones((2, 4, 3), np.float16))
    np.save(tmp_path / f"ReduceSumD.rsum.11.0.{TS + 1}.output.0..npy", np.float16(3))
    dump = load_dump(tmp_path)
    assert dump.meta["naming"] == "converted" and "skipped_files" not in dump.meta
    assert [(op.name, op.op_type, [t.slot for t in op.inputs + op.outputs]) for op in dump] == [
        ("split", "SplitD", ["input:0", "input:1", "output:1"]),
        ("rsum", "ReduceSumD", ["output:0"])]
    assert dump["rsum"].output().shape == ()


def test_f6_a_directory_of_json_says_json_is_not_a_dump(tmp_path):
    """A polygraphy --save-outputs JSON passed as the golden got a message about dump files."""
    import json

    import pytest

    from pytest_ascend_accuracy.dump.discovery import is_json_file
    from pytest_ascend_accuracy.errors import DumpFormatError

    d = tmp_path / "polydir"
    d.mkdir()
    (d / "poly.json").write_text(json.dumps({"lst": [["onnxrt-runner", [{"outputs": {}}]]]}))
    with pytest.raises(DumpFormatError, match=r"polydir: no dump files in it or below, but JSON "
                                              r"\(poly.json\): a JSON file \(e.g. polygraphy "
                                              r"--save-outputs\) is not a dump; goldens are"):
        load_dump(d)
    (tmp_path / "outputs").write_text('  {"lst": []}')
    assert is_json_file(d / "poly.json") and is_json_file(tmp_path / "outputs")
    np.save(tmp_path / "a.npy", np.ones(2))
    assert not is_json_file(tmp_path / "a.npy")


def test_f7_an_op_named_input_x_without_an_op_x_keeps_its_inputs(tmp_path):
    """msit writes op input_proj_Relu's outputs as input_proj_Relu.0.{ts}.npy and its inputs as
    input_input_proj_Relu.0.{ts}.npy; with no op proj_Relu, the second are that op's inputs
    (they read as the outputs of an op input_input_proj_Relu)."""
    np.save(tmp_path / "input_input_proj_Relu.0.1700000000000001.npy", np.zeros(2))
    np.save(tmp_path / "input_proj_Relu.0.1700000000000001.npy", np.ones(2))
    np.save(tmp_path / "input_head.0.1700000000000002.npy", np.ones(2))
    np.save(tmp_path / "head.0.1700000000000002.npy", -np.ones(2))
    dump = load_dump(tmp_path)
    assert dump.names == ["input_proj_Relu", "head"]
    assert [t.slot for t in dump["input_proj_Relu"].inputs] == ["input:0"]
    assert dump["input_proj_Relu"].inputs[0].load().tolist() == [0, 0]


def test_f7_an_op_named_input_x_is_written_plain_unless_an_op_x_is_there(tmp_path):
    """store_golden wrote op input_proj/Relu as %input_proj%2FRelu...npy, which msaccucmp
    cannot find, though no op proj/Relu made input_proj_Relu ambiguous."""
    import os

    from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter

    for d, names in (("alone", ["input_proj/Relu", "head"]),
                     ("after", ["proj/Relu", "input_proj/Relu"]),
                     ("before", ["input_proj/Relu", "proj/Relu"])):
        with NpyDumpWriter(tmp_path / d) as w:
            for k, name in enumerate(names):
                w.write_op(name, [np.full(2, -k - 1.0)], [np.full(2, k + 1.0)], timestamp_us=k + 1)
        files = sorted(os.listdir(tmp_path / d))
        dump = load_dump(tmp_path / d)
        for k, name in enumerate(names):
            op = dump.get(name) or dump[name.replace("/", "_")]
            assert op.output().load().tolist() == [k + 1] * 2 and len(op.inputs) == 1
        if d == "alone":
            assert files[:2] == ["head.0.2.npy", "input_head.0.2.npy"]
            assert "input_proj_Relu.0.1.npy" in files and "input_input_proj_Relu.0.1.npy" in files
        else:
            assert any(f.startswith("%") for f in files)  # the second one stays escaped


def test_a_bfloat16_array_saved_by_numpy_says_what_it_looks_like(tmp_path):
    """numpy saves an ml_dtypes bfloat16 array as raw 2-byte voids (|V2): the error said only
    "dtype |V2 is not numeric or bool" (a user trial)."""
    import pytest

    from pytest_ascend_accuracy.errors import DumpFormatError

    np.save(tmp_path / "relu.0.1.npy", np.zeros(4, np.dtype("V2")))
    with pytest.raises(DumpFormatError, match=r"relu\.0\.1\.npy: dtype \|V2 is not numeric or "
                                              r"bool; it looks like an ml_dtypes bfloat16 array "
                                              r"numpy saved as raw bytes: save it as float32"):
        dump = load_dump(tmp_path)
        dump.ops[0].outputs[0].load()

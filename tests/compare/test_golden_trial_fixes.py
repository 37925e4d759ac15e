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
    # the hint gives that reason, not "check that the golden dump has their outputs" (it has)
    from pytest_ascend_accuracy.report.failure_text import default_hint
    from pytest_ascend_accuracy.report.hints import next_step

    for hint in (default_hint(v, (), r), default_hint(v, (), r, cli=True), next_step(v).text()):
        assert "all stand for op 'a_b'" in hint and "has their outputs" not in hint, hint


def test_f1_the_same_op_dumped_twice_still_compares_with_the_latest(tmp_path):
    relu = np.maximum(X, 0)
    golden = _msit_golden(tmp_path / "g", [("a_b", 0, np.zeros_like(X)), ("out", 0, X),
                                           ("a_b", 0, relu)])
    actual = DumpSet([_op("a/b", "Relu", relu, 0), _op("out", "Add", X, 1)])
    r = compare_dumps(actual, golden)
    assert [row.golden_name for row in r.rows] == ["a/b", "out"]  # the dump's own spelling
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


def _unnamed_case(tmp_path, record=False):
    """ONNX nodes n0 (Neg), two unnamed Relu, out: msit's golden calls the Relus Relu_1 and
    Relu_2 (positions), ATC's device Relu_0 and Relu_1 (count of unnamed nodes)."""
    r1, r2 = np.maximum(X, 0), np.maximum(-X, 0)
    golden = _msit_golden(tmp_path / "g", [("n0", 0, -X), ("Relu_1", 0, r1), ("Relu_2", 0, r2),
                                           ("out", 0, r1 + r2)])
    if record:
        (golden / "golden.json").write_text("{}")
    actual = DumpSet([_op("n0", "Neg", -X, 0), _op("Relu_0", "Relu", r1, 1),
                      _op("Relu_1", "Relu", r2, 2), _op("out", "Add", r1 + r2, 3)])
    return actual, golden


def test_f3_unnamed_nodes_numbered_by_position_are_reported_with_the_offset(tmp_path):
    """The device's Relu_1 was compared with msit's Relu_1 (the other node) "matched by origin"
    and a correct device failed, blaming Relu_1."""
    actual, golden = _unnamed_case(tmp_path)
    r = compare_dumps(actual, golden)
    rows = {row.op_name: row for row in r.rows}
    assert rows["n0"].metrics is not None and rows["out"].metrics is not None
    for name, theirs in (("Relu_0", "Relu_1"), ("Relu_1", "Relu_2")):
        row = rows[name]
        assert row.metrics is None and NOT_COMPARED_FLAG in row.flags
        assert f"this {name!r} is the golden's {theirs!r}" in row.reason
        assert "position in the graph (msit)" in row.reason
        assert "give the ONNX nodes names" in row.reason
        assert "Relu_0 -> Relu_1, Relu_1 -> Relu_2" in row.reason
    mapped = compare_dumps(actual, golden, mapping={"Relu_0": "Relu_1", "Relu_1": "Relu_2"})
    assert mapped.judge(0.99).passed


def test_f3_a_golden_this_package_wrote_is_taken_by_its_names(tmp_path):
    actual, golden = _unnamed_case(tmp_path, record=True)  # golden.json: named as ATC does
    r = compare_dumps(actual, golden)
    assert [row.golden_name for row in r.rows] == ["n0", "", "Relu_1", "out"]  # by name


def test_f3_a_cache_entrys_pack_is_taken_by_its_names(tmp_path):
    """A cached golden's npy directory (pasted from a report) is read through its index."""
    from pytest_ascend_accuracy.dump.npy_index import read_indexed_dir, write_index
    from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter

    actual, msit = _unnamed_case(tmp_path)
    with NpyDumpWriter(tmp_path / "npy", private=True, pack="tensors.pack") as w:
        for k, op in enumerate(load_dump(msit).ops):
            w.write_op(op.name, [], [np.asarray(op.output().load())], timestamp_us=k + 1)
    write_index(tmp_path / "index.json", w.index())
    golden = read_indexed_dir(tmp_path / "npy", tmp_path / "index.json")
    assert [row.golden_name for row in compare_dumps(actual, golden).rows] == [
        "n0", "", "Relu_1", "out"]


def test_f3_numbering_that_agrees_is_compared_as_before(tmp_path):
    r1 = np.maximum(X, 0)
    golden = _msit_golden(tmp_path / "g", [("Relu_0", 0, r1), ("n1", 0, -r1)])
    actual = DumpSet([_op("Relu_0", "Relu", r1, 0), _op("n1", "Neg", -r1, 1)])
    assert compare_dumps(actual, golden).judge(0.99).passed


def test_f4_reasons_name_the_golden_files_not_read_and_the_closest_names(tmp_path):
    golden = _msit_golden(tmp_path / "g", [("topk", 0, X), ("argmax_1", 0, X)])
    np.save(golden / "topk.1.npy", X)  # no timestamp
    np.save(golden / "98765.npy", X)  # a mapping.csv name, no mapping.csv
    topk = OpRecord("topk", op_type="TopK", outputs=tuple(
        TensorRef.from_array(X.astype(np.float16), "output", i) for i in (0, 1)))
    actual = DumpSet([topk, _op("argmax", "ArgMax", X, 1, origin=False)])
    rows = {row.slot if row.op_name == "topk" else row.op_name: row
            for row in compare_dumps(actual, golden).rows}
    assert rows["output:1"].reason == (
        "golden op 'topk' has no output 1; its golden file not read: topk.1.npy (no "
        "timestamp: golden names are {op}.{output}.{timestamp}.npy)")
    why = rows["argmax"].reason
    assert why.startswith("no golden op matches its name, original names or output origin; "
                          "closest golden names: 'argmax_1'; the golden's files not read: "
                          "98765.npy (an all-digit name")
    assert "topk.1.npy (no timestamp" in why


@pytest.mark.parametrize("device, golden, fmt", [
    ((2, 1, 1, 16, 16), (2, 4, 6),
     "FRACTAL_NZ: convert the dump to the framework's format (msaccucmp convert -d DUMP -f ND "
     "-out DIR)"),
    ((1, 1, 5, 5, 16), (1, 3, 5, 5),
     "NC1HWC0: convert the dump to the framework's format (msaccucmp convert -d DUMP -f NCHW")])
def test_f5_a_device_layout_array_says_how_to_convert_it(device, golden, fmt):
    """A plain msaccucmp convert keeps the device layout: "shape (2, 1, 1, 16, 16) vs golden
    (2, 4, 6) cannot compare" said nothing of why."""
    r = compare_dumps(DumpSet.from_arrays({"a": [np.zeros(device, np.float16)]}),
                      DumpSet.from_arrays({"a": [np.ones(golden, np.float32)]}))
    assert "cannot compare; it is the golden's shape in the device layout " in r.rows[0].reason
    assert fmt in r.rows[0].reason and "--om-json" in r.rows[0].reason
    other = compare_dumps(DumpSet.from_arrays({"a": [np.zeros((7, 3), np.float16)]}),
                          DumpSet.from_arrays({"a": [np.ones((2, 4), np.float32)]}))
    assert other.rows[0].reason.endswith("cannot compare")


def test_f8_csv_metric_columns_are_nan_where_msaccucmp_leaves_them_so():
    """msaccucmp's algorithms refuse bool data and zero-size arrays: its CSV holds NaN where
    ours printed 1.000000 / 0.000000 under the same column names."""
    import csv
    import io

    from pytest_ascend_accuracy.report.csv_report import csv_text

    a = np.array([True, False, True, True])
    r = compare_dumps(DumpSet.from_arrays({"gt": [a], "empty": [np.zeros((2, 0), np.float16)],
                                           "f": [X.astype(np.float16)]}),
                      DumpSet.from_arrays({"gt": [~a], "empty": [np.zeros((2, 0), np.float32)],
                                           "f": [X]}))
    rows = {row[2]: row for row in csv.reader(io.StringIO(csv_text(r)))}
    head = list(rows["NPUDump"])
    col = {name: head.index(name) for name in head[10:20]}
    gt = {k: rows["gt"][i] for k, i in col.items()}
    assert gt.pop("CosineSimilarity") != "NaN" and set(gt.values()) == {"NaN"}
    empty = {k: rows["empty"][i] for k, i in col.items()}
    assert (empty.pop("CosineSimilarity"), empty.pop("AccumulatedRelativeError"),
            empty.pop("RelativeEuclideanDistance"), empty.pop("StandardDeviation")) == (
        "1.000000", "0.000000", "0.000000", "(nan;nan),(nan;nan)")
    assert set(empty.values()) == {"NaN"}
    assert "NaN" not in [rows["f"][i] for i in col.values()]
    assert not r.judge(0.99).passed  # the verdict still judges the bools exactly


def test_the_coverage_line_counts_the_golden_files_not_read(tmp_path):
    """Golden files the reader skips (no timestamp) were in no line of the failure text."""
    from pytest_ascend_accuracy.report.failure_text import failure_text

    golden = _msit_golden(tmp_path / "g", [("out", 0, X)])
    np.save(tmp_path / "g" / "topk.1.npy", X)
    actual = DumpSet([_op("out", "Add", X + 1, 0)])
    r = compare_dumps(actual, golden)
    text = failure_text(r, r.judge(0.9999999))
    assert ("; 1 golden file not read (topk.1.npy: no timestamp: golden names are "
            "{op}.{output}.{timestamp}.npy)") in text, text


def test_a_naming_reason_is_the_hint_only_where_every_uncompared_op_has_one(tmp_path):
    """With a/b and a_b colliding and op c simply lacking its golden, the hint gave the
    collision for all three and lost c's own advice (a review)."""
    from pytest_ascend_accuracy.report.failure_text import default_hint

    relu, tanh = np.maximum(X, 0), np.tanh(X)
    golden = _msit_golden(tmp_path / "g", [("a_b", 0, relu), ("a_b", 0, tanh), ("out", 0, X)])
    actual = DumpSet([_op("a/b", "Relu", relu, 0), _op("a_b", "Tanh", tanh, 1),
                      _op("c", "Add", relu + tanh, 2), _op("out", "Add", X, 3)])
    r = compare_dumps(actual, golden)
    hint = default_hint(r.judge(0.99), (), r)
    assert "check that the golden dump has their outputs" in hint, hint
